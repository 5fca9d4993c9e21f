import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerStats as CriStats, PodSandbox } from '../runtime/types.js';
import { CRIStatsProvider, type CRIStatsProviderOptions } from './cri.js';

const sandbox = (id: string, name: string, state: PodSandbox['state'] = 'SANDBOX_READY'): PodSandbox => ({
  id,
  metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 },
  state,
  created_at: '1767225600000000000',
  labels: {},
  annotations: {},
});

const container = (id: string, sandboxId: string, name: string, state: Container['state'] = 'CONTAINER_RUNNING'): Container =>
  ({ id, pod_sandbox_id: sandboxId, metadata: { name, attempt: 0 }, state, created_at: '1767225610500000000', labels: {}, annotations: {} }) as unknown as Container;

const stat = (id: string, cpuNs: number | undefined, ws: number): CriStats => ({
  attributes: { id, metadata: { name: id, attempt: 0 }, labels: {}, annotations: {} },
  ...(cpuNs !== undefined ? { cpu: { timestamp: '1767225700123456789', usage_core_nano_seconds: { value: cpuNs } } } : {}),
  memory: { timestamp: '1767225700123456789', working_set_bytes: { value: ws } },
});

function provider(sandboxes: PodSandbox[], containers: Container[], stats: CriStats[]): CRIStatsProvider {
  const runtime: CRIStatsProviderOptions['runtime'] = {
    // containerd applies the filters; the provider must also cope with a runtime that does not.
    listPodSandbox: async () => sandboxes,
    listContainers: async () => containers,
    listContainerStats: async () => stats,
  };
  return new CRIStatsProvider({ runtime, nodeName: 'n1', node: { read: async () => ({ cpu: { time: 5, usageCoreNanoSeconds: 7 } }) } });
}

test('running containers of ready sandboxes, grouped into pods, pod figures summed', async () => {
  const p = provider(
    [sandbox('s1', 'web'), sandbox('s2', 'gone', 'SANDBOX_NOTREADY')],
    [container('c1', 's1', 'nginx'), container('c2', 's1', 'side'), container('c3', 's1', 'old', 'CONTAINER_EXITED'), container('c4', 's2', 'x')],
    [stat('c1', 2_000, 100), stat('c2', 3_000, 50), stat('c3', 1, 1), stat('c4', 1, 1)],
  );
  const s = await p.getCPUAndMemoryStats();
  assert.deepEqual(s.node, { nodeName: 'n1', cpu: { time: 5, usageCoreNanoSeconds: 7 } });
  assert.equal(s.pods.length, 1);
  const [pod] = s.pods;
  assert.deepEqual(pod!.podRef, { name: 'web', namespace: 'default', uid: 'uid-web' });
  assert.deepEqual(pod!.containers, [
    { name: 'nginx', startTime: 1767225610.5, cpu: { time: 1767225700123, usageCoreNanoSeconds: 2_000 }, memory: { time: 1767225700123, workingSetBytes: 100 } },
    { name: 'side', startTime: 1767225610.5, cpu: { time: 1767225700123, usageCoreNanoSeconds: 3_000 }, memory: { time: 1767225700123, workingSetBytes: 50 } },
  ]);
  assert.deepEqual(pod!.cpu, { time: 1767225700123, usageCoreNanoSeconds: 5_000 });
  assert.deepEqual(pod!.memory, { time: 1767225700123, workingSetBytes: 150 });
});

test('a container without CPU stats leaves the pod without a CPU sum', async () => {
  const p = provider([sandbox('s1', 'web')], [container('c1', 's1', 'a'), container('c2', 's1', 'b')], [stat('c1', 10, 1), stat('c2', undefined, 2)]);
  const [pod] = (await p.getCPUAndMemoryStats()).pods;
  assert.equal(pod!.cpu, undefined);
  assert.equal(pod!.containers[1]!.cpu, undefined);
  assert.deepEqual(pod!.memory?.workingSetBytes, 3);
});
