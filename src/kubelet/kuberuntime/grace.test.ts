import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../api/types.js';
import type { KillReason } from './planner.js';
import { killGracePeriodSeconds } from './grace.js';

const container: Container = {
  name: 'nginx',
  livenessProbe: { httpGet: { path: '/healthz', port: 80 }, terminationGracePeriodSeconds: 5 },
  startupProbe: { exec: { command: ['true'] } },
};

function pod(spec?: number, deletion?: number): Pod {
  return { metadata: { name: 'web', deletionGracePeriodSeconds: deletion }, spec: { containers: [container], terminationGracePeriodSeconds: spec } };
}

describe('killGracePeriodSeconds', () => {
  const cases: { name: string; pod: Pod; reason: KillReason; want: number }[] = [
    { name: 'the deletion grace wins', pod: pod(30, 10), reason: 'LivenessProbe', want: 10 },
    { name: 'a liveness kill uses the probe grace', pod: pod(30), reason: 'LivenessProbe', want: 5 },
    { name: 'a startup probe without its own grace uses the pod', pod: pod(30), reason: 'StartupProbe', want: 30 },
    { name: 'other kills use the pod grace', pod: pod(30), reason: '', want: 30 },
    { name: 'nothing set: the minimum', pod: pod(), reason: 'LivenessProbe', want: 2 },
  ];
  for (const c of cases) it(c.name, () => assert.equal(killGracePeriodSeconds(c.pod, container, c.reason), c.want));
});
