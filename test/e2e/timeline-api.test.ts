// The pod timeline API (timeline.kite.dev) against a real `kite server`, driven by the real kubectl:
// discovery, Table output, YAML, the API server's own steps, a kubelet's batch limited to its node's
// pods, RBAC through the aggregated view role, and the record outliving its pod and a restart.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import type { PodTimeline } from '../../src/api/timeline/types.js';
import { eventually, kubectl, kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';

const users: Record<string, [string, string]> = {
  alice: ['alice-token', ''],
  bob: ['bob-token', ''],
  'system:node:tla-n1': ['n1-token', 'system:nodes'],
};
const batchPath = '/apis/timeline.kite.dev/v1alpha1/podtimelinestepbatches';

describe('the pod timeline API with kubectl', () => {
  let server: KiteServer;
  let dir: string;
  let tokenFile: string;
  const as: Record<string, { kubeconfig: string }> = {};

  const uidOf = (name: string) => kubectlOk(server, ['get', 'pod', name, '-o', 'jsonpath={.metadata.uid}']);
  const timeline = (uid: string) => YAML.parse(kubectlOk(server, ['get', 'podtimelines', uid, '-o', 'yaml'])) as PodTimeline;

  before(async () => {
    dir = tempDir('timeline-api-tla');
    tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, Object.entries(users).map(([user, [token, groups]]) => `${token},${user},${user}${groups ? `,"${groups}"` : ''}`).join('\n') + '\n');
    server = await startServer({ dataDir: join(dir, 'data'), extraArgs: ['--token-auth-file', tokenFile] });
    for (const [user, [token]] of Object.entries(users)) {
      const kubeconfig = join(dir, `${user.replaceAll(':', '_')}.kubeconfig`);
      writeFileSync(
        kubeconfig,
        `apiVersion: v1
kind: Config
clusters: [{name: kite, cluster: {server: "${server.url}", certificate-authority: "${join(server.dataDir, 'pki', 'ca.crt')}"}}]
users: [{name: u, user: {token: ${token}}}]
contexts: [{name: c, context: {cluster: kite, user: u, namespace: default}}]
current-context: c
`,
      );
      as[user] = { kubeconfig };
    }
  });

  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  it('kubectl api-resources lists podtimelines (ptl) and podtimelinestepbatches', () => {
    const out = kubectlOk(server, ['api-resources', '--api-group=timeline.kite.dev']);
    assert.match(out, /^podtimelines\s+ptl\s+timeline\.kite\.dev\/v1alpha1\s+true\s+PodTimeline$/m);
    assert.match(out, /^podtimelinestepbatches\s+timeline\.kite\.dev\/v1alpha1\s+false\s+PodTimelineStepBatch$/m);
  });

  it('kubectl get podtimelines prints the API server steps of a created pod; -o yaml has them in order', async () => {
    kubectlOk(server, ['run', 'web', '--image=registry.kite.local/nginx:1.27', '--restart=Never', '--overrides={"spec":{"nodeName":"tla-n1"}}']);
    const uid = uidOf('web');
    const row = await eventually(() => kubectl(server, ['get', 'ptl']).stdout.split('\n').find((l) => l.startsWith(uid)), 'the timeline row');
    const header = kubectlOk(server, ['get', 'podtimelines']).split('\n')[0]!;
    assert.match(header, /^NAME\s+POD\s+NODE\s+STEPS\s+LAST\s+READY-AFTER\s+AGE$/);
    assert.match(row, new RegExp(`^${uid}\\s+web\\s+tla-n1\\s+\\d+\\s+Persisted\\s+<none>\\s+\\d+s$`));
    assert.match(kubectlOk(server, ['get', 'ptl', '-o', 'wide']).split('\n')[0]!, /AGE\s+OWNER$/);
    const t = timeline(uid);
    assert.equal(t.kind, 'PodTimeline');
    assert.deepEqual(t.pod, { namespace: 'default', name: 'web', uid, nodeName: 'tla-n1' });
    const steps = t.steps.map((s) => s.step);
    assert.deepEqual(steps.slice(0, 3), ['RequestReceived', 'Authenticated', 'Authorized']);
    assert.equal(steps.at(-1), 'Persisted');
    assert.match(String(t.steps[0]!.attributes?.userAgent), /^kubectl\//);
    const byName = kubectlOk(server, ['get', 'ptl', '-A', '--field-selector', 'pod.name=web', '-o', 'name']);
    assert.equal(byName.trim(), `podtimeline.timeline.kite.dev/${uid}`);
  });

  it("a kubelet's batch is kept for its own node's pods and dropped, with a warning, for others", () => {
    const web = uidOf('web');
    kubectlOk(server, ['run', 'other', '--image=registry.kite.local/nginx:1.27', '--restart=Never', '--overrides={"spec":{"nodeName":"tla-n2"}}']);
    const other = uidOf('other');
    const step = { step: 'SandboxCreated', component: 'kubelet/tla-n1', start: new Date().toISOString() };
    const batch = {
      apiVersion: 'timeline.kite.dev/v1alpha1',
      kind: 'PodTimelineStepBatch',
      records: [
        { pod: { namespace: 'default', name: 'web', uid: web }, steps: [step] },
        { pod: { namespace: 'default', name: 'other', uid: other }, steps: [step] },
      ],
    };
    const file = join(dir, 'batch.json');
    writeFileSync(file, JSON.stringify(batch));
    const r = kubectl(as['system:node:tla-n1']!, ['create', '--raw', batchPath, '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /steps for default\/other dropped: node tla-n1 may record steps only for pods bound to it/);
    assert.ok(timeline(web).steps.some((s) => s.step === 'SandboxCreated'));
    assert.ok(!timeline(other).steps.some((s) => s.step === 'SandboxCreated'));
    writeFileSync(file, JSON.stringify({ ...batch, records: [{ pod: batch.records[0]!.pod, steps: [{ ...step, step: 'Exploded' }] }] }));
    const bad = kubectl(as['system:node:tla-n1']!, ['create', '--raw', batchPath, '-f', file]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /records\[0\]\.steps\[0\]\.step: Unsupported value: "Exploded"/);
    const user = kubectl(as.bob!, ['create', '--raw', batchPath, '-f', file]);
    assert.match(user.stderr, /Forbidden/);
  });

  it('a user with view may list timelines; one without is refused with 403', async () => {
    kubectlOk(server, ['create', 'rolebinding', 'alice-view', '--clusterrole=view', '--user=alice', '-n', 'default']);
    await eventually(() => (kubectl(as.alice!, ['get', 'ptl']).code === 0 ? true : undefined), 'alice may list podtimelines (view aggregates them)');
    assert.match(kubectlOk(as.alice!, ['get', 'ptl']), /\sweb\s/);
    const r = kubectl(as.bob!, ['get', 'ptl']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(Forbidden\): podtimelines\.timeline\.kite\.dev is forbidden: User "bob" cannot list resource "podtimelines" in API group "timeline\.kite\.dev" in the namespace "default"/);
  });

  it('outlives its pod (delete requested, deleted, deletedAt) and a restart of the server', async () => {
    const uid = uidOf('web');
    kubectlOk(server, ['delete', 'pod', 'web', '--grace-period=0', '--force']);
    const gone = await eventually(() => {
      const t = timeline(uid);
      return t.deletedAt ? t : undefined;
    }, 'the Deleted step');
    assert.ok(gone.steps.some((s) => s.step === 'DeleteRequested' && s.attributes?.user === 'kubernetes-admin'));
    assert.equal(gone.steps.at(-1)!.step, 'Deleted');
    await server.stop();
    server = await startServer({ dataDir: server.dataDir, port: server.port, extraArgs: ['--token-auth-file', tokenFile] });
    assert.deepEqual(timeline(uid).steps, gone.steps);
  });
});
