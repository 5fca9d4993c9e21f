import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../types.js';
import { podQOS, qosClass } from './qos.js';

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
const pod = (containers: Res[], inits: Res[] = [], podLevel?: Res): Pod =>
  ({
    spec: {
      containers: containers.map((resources, i) => ({ name: `c${i}`, resources })),
      initContainers: inits.map((resources, i) => ({ name: `i${i}`, resources })),
      ...(podLevel ? { resources: podLevel } : {}),
    },
  }) as Pod;

const full = { cpu: '1', memory: '1Gi' };

test('qosClass as upstream ComputePodQOS', () => {
  const cases: [string, Pod, string][] = [
    ['no resources', pod([{}]), 'BestEffort'],
    ['zero requests only', pod([{ requests: { cpu: '0' } }]), 'BestEffort'],
    ['other resources do not count', pod([{ requests: { 'ephemeral-storage': '1Gi' } }]), 'BestEffort'],
    ['requests equal limits', pod([{ requests: full, limits: full }]), 'Guaranteed'],
    ['equal in another notation', pod([{ requests: { cpu: '1000m', memory: '1024Mi' }, limits: full }]), 'Guaranteed'],
    // Defaulting copies limits into requests; before it the counts differ.
    ['limits only, undefaulted', pod([{ limits: full }]), 'Burstable'],
    ['request below limit', pod([{ requests: { cpu: '500m', memory: '1Gi' }, limits: full }]), 'Burstable'],
    ['memory limit missing', pod([{ requests: { cpu: '1' }, limits: { cpu: '1' } }]), 'Burstable'],
    ['one container without limits', pod([{ requests: full, limits: full }, {}]), 'Burstable'],
    ['init container without limits', pod([{ requests: full, limits: full }], [{ requests: { cpu: '1' } }]), 'Burstable'],
    ['init container counts in sums', pod([{ requests: full, limits: full }], [{ requests: full, limits: full }]), 'Guaranteed'],
    ['pod-level limits decide', pod([{}], [], { requests: full, limits: full }), 'Guaranteed'],
    ['pod-level without memory limit', pod([{ requests: full, limits: full }], [], { limits: { cpu: '1' } }), 'Burstable'],
  ];
  for (const [name, p, want] of cases) assert.equal(qosClass(p), want, name);
});

test('podQOS prefers the recorded status', () => {
  const p = pod([{}]);
  assert.equal(podQOS({ ...p, status: { qosClass: 'Burstable' } }), 'Burstable');
  assert.equal(podQOS(p), 'BestEffort');
});
