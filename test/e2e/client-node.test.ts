// The basics with @kubernetes/client-node, the official JavaScript client: create, list, patch,
// and a watch that resumes from its last resourceVersion after the server restarts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { eventually, removeDir, startServer, type KiteServer } from './harness.js';

function client(server: KiteServer) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfig);
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api) };
}

const pod = (name: string): k8s.V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'cn' } },
  spec: { containers: [{ name: 'c', image: 'busybox:1.35' }] },
});

interface Seen {
  type: string;
  name: string;
  rv: string;
}

async function watchPods(kc: k8s.KubeConfig, resourceVersion: string, seen: Seen[], ended: { done: boolean }) {
  const w = new k8s.Watch(kc);
  return w.watch(
    '/api/v1/namespaces/default/pods',
    { resourceVersion, allowWatchBookmarks: true },
    (type: string, obj: k8s.V1Pod) => {
      if (type !== 'BOOKMARK') seen.push({ type, name: obj.metadata!.name!, rv: obj.metadata!.resourceVersion! });
    },
    () => {
      ended.done = true;
    },
  );
}

describe('@kubernetes/client-node against kite server', () => {
  it('creates, lists, patches, and resumes a watch after a restart', async () => {
    // No scheduler: its status writes would add events this test does not expect.
    const extraArgs = ['--components', 'controllers'];
    let server = await startServer({ extraArgs });
    const dataDir = server.dataDir;
    const port = server.port;
    try {
      let { kc, core } = client(server);
      const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
      assert.equal(created.metadata?.name, 'a');
      assert.equal(created.status?.phase, 'Pending');
      const list = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=cn' });
      assert.deepEqual(list.items.map((p) => p.metadata?.name), ['a']);
      const startRv = list.metadata!.resourceVersion!;

      const patched = await core.patchNamespacedPod(
        { name: 'a', namespace: 'default', body: { metadata: { labels: { patched: 'yes' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      assert.equal(patched.metadata?.labels?.patched, 'yes');

      const seen: Seen[] = [];
      const ended = { done: false };
      await watchPods(kc, startRv, seen, ended);
      await core.createNamespacedPod({ namespace: 'default', body: pod('b') });
      await eventually(() => (seen.some((e) => e.name === 'b') ? true : undefined), 'the watch to see b');
      assert.deepEqual(seen.map((e) => `${e.type} ${e.name}`), ['MODIFIED a', 'ADDED b']);
      const lastRv = seen[seen.length - 1]!.rv;

      await server.stop();
      await eventually(() => (ended.done ? true : undefined), 'the watch to end with the server');
      server = await startServer({ dataDir, port, extraArgs });
      ({ kc, core } = client(server));
      await core.createNamespacedPod({ namespace: 'default', body: pod('c') });
      await core.deleteNamespacedPod({ name: 'a', namespace: 'default' });

      const resumed: Seen[] = [];
      await watchPods(kc, lastRv, resumed, { done: false });
      await eventually(() => (resumed.some((e) => e.type === 'DELETED') ? true : undefined), 'the resumed watch to catch up');
      assert.deepEqual(resumed.map((e) => `${e.type} ${e.name}`), ['ADDED c', 'DELETED a']);
    } finally {
      await server.stop();
      removeDir(dataDir);
    }
  });
});
