import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makePod, type PodBuilder } from '../testing/builders.js';
import { DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, podRequests } from './resource.js';

describe('podRequests', () => {
  const cases: { name: string; pod: PodBuilder; cpu: number; memory: number; nonZeroCpu?: number; scalar?: Record<string, number> }[] = [
    { name: 'sum of containers', pod: makePod().req({ cpu: '100m', memory: '1Ki' }).req({ cpu: '200m', memory: '1Ki' }), cpu: 300, memory: 2048 },
    { name: 'an init container larger than the containers', pod: makePod().req({ cpu: '100m' }).initReq({ cpu: '1' }), cpu: 1000, memory: 0 },
    { name: 'init containers run one at a time', pod: makePod().req({ cpu: '100m' }).initReq({ cpu: '500m' }).initReq({ cpu: '400m' }), cpu: 500, memory: 0 },
    { name: 'a sidecar adds to the containers', pod: makePod().req({ cpu: '100m' }).sidecarReq({ cpu: '200m' }), cpu: 300, memory: 0 },
    // The init container after the sidecar runs beside it: 200m + 500m.
    { name: 'a later init container runs beside earlier sidecars', pod: makePod().req({ cpu: '100m' }).sidecarReq({ cpu: '200m' }).initReq({ cpu: '500m' }), cpu: 700, memory: 0 },
    { name: 'an init container before a sidecar runs alone', pod: makePod().req({ cpu: '100m' }).initReq({ cpu: '250m' }).sidecarReq({ cpu: '200m' }), cpu: 300, memory: 0 },
    { name: 'overhead is added', pod: makePod().req({ cpu: '100m' }).overhead({ cpu: '50m', memory: '10' }), cpu: 150, memory: 10 },
    { name: 'extended resources', pod: makePod().req({ 'example.com/gpu': '2' }), cpu: 0, memory: 0, scalar: { 'example.com/gpu': 2 } },
    { name: 'non-zero defaults for missing requests', pod: makePod().req({}).req({ cpu: '0' }), cpu: 0, memory: 0, nonZeroCpu: DEFAULT_MILLI_CPU_REQUEST },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pod = c.pod.obj();
      const r = podRequests(pod);
      assert.deepEqual([r.milliCPU, r.memory, Object.fromEntries(r.scalar)], [c.cpu, c.memory, c.scalar ?? {}]);
      if (c.nonZeroCpu !== undefined) {
        const nz = podRequests(pod, true);
        assert.deepEqual([nz.milliCPU, nz.memory], [c.nonZeroCpu, 2 * DEFAULT_MEMORY_REQUEST]);
      }
    });
  }
});
