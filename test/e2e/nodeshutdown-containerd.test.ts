// Graceful node shutdown on real containerd: `kite up` (bridge kite-ns) and a second `kite agent`
// (bridge kite-ns2) whose KubeletConfiguration sets shutdownGracePeriod 20s and
// shutdownGracePeriodCriticalPods 10s. SIGTERM to that agent: its node turns not ready ("node is
// shutting down"), the regular pod is terminated first, then the critical one (system-node-critical),
// each running its preStop hook (which writes a marker to a hostPath), both end Failed with
// reason Terminated, upstream's message and the DisruptionTarget condition, and the agent is gone
// well within the grace period.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { eventually, kubectlOk } from './harness.js';
import { canRunContainers, resetCluster, startAgent, startCluster, stopAndReset, type KiteAgent, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';
const NODE = 'ns2';

/** A pod on the second node whose preStop records when it ran (the kernel's uptime) in markers/<name>. */
const pod = (name: string, namespace: string, markers: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 30
${extra}
  containers:
  - name: c
    image: busybox:1.35
    command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumeMounts:
    - name: markers
      mountPath: /markers
    lifecycle:
      preStop:
        exec:
          command: ['sh', '-c', 'cut -d" " -f1 /proc/uptime > /markers/${name}']
  volumes:
  - name: markers
    hostPath:
      path: ${markers}
      type: Directory
`;

describe('graceful node shutdown on containerd', { skip }, () => {
  let cluster: KiteCluster;
  let agent: KiteAgent | undefined;
  const markers = mkdtempSync(join(tmpdir(), 'kite-ns-markers-'));
  const config = join(markers, 'kubelet.yaml');

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-ns', '--pod-cidr', '10.217.250.0/24', '--cgroup-root', '/kite-ns'] });
    writeFileSync(config, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nshutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 10s\n');
    agent = await startAgent(cluster, { nodeName: NODE, bridge: 'kite-ns2', podCIDR: '10.217.251.0/24', cgroupRoot: '/kite-ns2', extraArgs: ['--config', config] });
    kubectlOk(cluster, ['apply', '-f', '-'], pod('web', 'default', markers));
    kubectlOk(cluster, ['apply', '-f', '-'], pod('agent', 'kube-system', markers, '  priorityClassName: system-node-critical'));
    kubectlOk(cluster, ['wait', '--for=condition=Ready', 'pod/web', '--timeout=180s']);
    kubectlOk(cluster, ['-n', 'kube-system', 'wait', '--for=condition=Ready', 'pod/agent', '--timeout=180s']);
  });

  after(async () => {
    if (agent) {
      await agent.stop();
      resetCluster(agent.dataDir);
    }
    await stopAndReset(cluster);
    rmSync(markers, { recursive: true, force: true });
  });

  it('SIGTERM: the node turns not ready, pods run preStop and end Failed/Terminated, critical ones last, within the grace period', async () => {
    const began = Date.now();
    await agent!.stop();
    const took = Date.now() - began;
    assert.ok(took < 20_000, `the agent took ${took} ms to stop`);

    const ready = JSON.parse(kubectlOk(cluster, ['get', 'node', NODE, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")]}'])) as { status: string; reason: string; message: string };
    assert.deepEqual([ready.status, ready.reason, ready.message], ['False', 'KubeletNotReady', 'node is shutting down']);

    for (const [ns, name] of [['default', 'web'], ['kube-system', 'agent']] as const) {
      const p = JSON.parse(kubectlOk(cluster, ['-n', ns, 'get', 'pod', name, '-o', 'json'])) as Pod;
      assert.deepEqual([p.status?.phase, p.status?.reason, p.status?.message], ['Failed', 'Terminated', 'Pod was terminated in response to imminent node shutdown.'], name);
      const disruption = p.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
      assert.deepEqual([disruption?.status, disruption?.reason, disruption?.message], ['True', 'TerminationByKubelet', 'Pod was terminated in response to imminent node shutdown.'], name);
      // The container got SIGTERM (its trap exits 0) after the hook, not a SIGKILL at the end of the grace.
      assert.equal(p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0, name);
    }
    // Both hooks ran, the critical pod's after the regular one's.
    const ranAt = (name: string) => Number(readFileSync(join(markers, name), 'utf8').trim());
    assert.ok(ranAt('web') <= ranAt('agent'), `web's preStop at ${ranAt('web')}, agent's at ${ranAt('agent')}`);

    const events = await eventually(() => {
      const out = kubectlOk(cluster, ['get', 'events', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${NODE},reason=Shutdown`, '-o', 'jsonpath={.items[*].message}']);
      return out ? out : undefined;
    }, 'the Shutdown event on the node');
    assert.equal(events, 'Shutdown manager detected shutdown event');
  });
});
