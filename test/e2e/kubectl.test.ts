// The real kubectl against `kite server`, with the default --validate=strict: every command a user
// runs on a pod's way in and out, with output checked against what a real cluster prints.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectl, kubectlOk, removeDir, examplesDir, startServer, type KiteServer } from './harness.js';

const webPod = readFileSync(join(examplesDir, 'web-pod.yaml'), 'utf8');

function pod(name: string, extra = ''): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
    app: ${name}
spec:
${extra}  containers:
  - name: main
    image: busybox:1.35
    command: ['sleep', '3600']
`;
}

describe('kubectl against kite server', () => {
  let server: KiteServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('reports version 1.33 so the dispatcher runs kubectl 1.33', () => {
    const out = kubectlOk(server, ['version']);
    assert.match(out, /Client Version: v1\.33\./);
    assert.match(out, /Server Version: v1\.33\.0/);
  });

  it('runs the scheduler and the controller manager under leases in kube-system', async () => {
    for (const lease of ['kube-scheduler', 'kube-controller-manager']) {
      const holder = await eventually(() => kubectl(server, ['-n', 'kube-system', 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}']).stdout || undefined, `the ${lease} lease`);
      assert.match(holder, /_[0-9a-f-]{36}$/);
    }
  });

  it('applies the seed pod, then configures it after a label change', () => {
    assert.equal(kubectlOk(server, ['apply', '-f', '-'], webPod).trim(), 'pod/web created');
    const changed = webPod.replace('app: web', 'app: web\n    tier: frontend');
    assert.equal(kubectlOk(server, ['apply', '-f', '-'], changed).trim(), 'pod/web configured');
    const labels = JSON.parse(kubectlOk(server, ['get', 'pod', 'web', '-o', 'jsonpath={.metadata.labels}']));
    assert.deepEqual(labels, { app: 'web', tier: 'frontend' });
    assert.equal(kubectlOk(server, ['apply', '-f', '-'], changed).trim(), 'pod/web unchanged');
  });

  it('impersonates with --as: the request runs as that user, and as no one else', () => {
    const refused = kubectl(server, ['get', 'pods', '--as=jane']);
    assert.equal(refused.stderr.trim(), 'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"');
    kubectlOk(server, ['create', 'rolebinding', 'impersonated', '--clusterrole=view', '--user=jane', '--group=devs', '-n', 'default']);
    assert.equal(kubectl(server, ['get', 'pods', '--as=jane', '-o', 'name']).code, 0);
    assert.equal(kubectl(server, ['get', 'pods', '--as=system:serviceaccount:default:robot', '--as-group=devs', '-o', 'name']).code, 0);
    // Impersonating anonymous drops system:authenticated and the groups bound above.
    const anon = kubectl(server, ['get', 'pods', '--as=system:anonymous']);
    assert.equal(anon.code, 1);
    assert.equal(anon.stderr.trim(), 'Error from server (Forbidden): pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"');
  });

  it('applies server-side', () => {
    assert.equal(kubectlOk(server, ['apply', '--server-side', '-f', '-'], pod('ssa')).trim(), 'pod/ssa serverside-applied');
    const changed = pod('ssa').replace('app: ssa', 'app: ssa\n    owner: me');
    assert.equal(kubectlOk(server, ['apply', '--server-side', '-f', '-'], changed).trim(), 'pod/ssa serverside-applied');
    const managers = JSON.parse(kubectlOk(server, ['get', 'pod', 'ssa', '--show-managed-fields', '-o', 'json'])).metadata.managedFields;
    assert.ok(managers.some((m: { manager: string; operation: string }) => m.manager === 'kubectl' && m.operation === 'Apply'));
  });

  it('creates, refuses a duplicate create, and replaces', () => {
    // With what ServiceAccount admission sets on create (the account, and no token volume asked for),
    // which a replace from the manifest would otherwise change: pod updates may not.
    const made = pod('made', '  serviceAccountName: default\n  automountServiceAccountToken: false\n');
    assert.equal(kubectlOk(server, ['create', '-f', '-'], made).trim(), 'pod/made created');
    const dup = kubectl(server, ['create', '-f', '-'], made);
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /Error from server \(AlreadyExists\): error when creating "STDIN": pods "made" already exists/);
    const replaced = made.replace('app: made', 'app: made\n    replaced: "yes"');
    assert.equal(kubectlOk(server, ['replace', '-f', '-'], replaced).trim(), 'pod/made replaced');
  });

  it('gets pods as tables, wide, with labels and across namespaces', () => {
    const table = kubectlOk(server, ['get', 'pods']);
    const lines = table.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.ok(lines.some((l) => /^web\s+0\/1\s+Pending\s+0\s+\d+s$/.test(l)), table);
    const wide = kubectlOk(server, ['get', 'pods', '-o', 'wide']).split('\n')[0]!;
    assert.match(wide, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    const labels = kubectlOk(server, ['get', 'pod', 'web', '--show-labels']);
    assert.match(labels, /app=web,tier=frontend/);
    const all = kubectlOk(server, ['get', 'pods', '-A']);
    assert.match(all.split('\n')[0]!, /^NAMESPACE\s+NAME\s+READY/);
    assert.match(all, /^default\s+web\s+0\/1\s+Pending/m);
  });

  it('prints yaml and json with defaults applied', () => {
    const obj = JSON.parse(kubectlOk(server, ['get', 'pod', 'web', '-o', 'json']));
    assert.equal(obj.kind, 'Pod');
    assert.equal(obj.spec.restartPolicy, 'Always');
    assert.equal(obj.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(obj.spec.schedulerName, 'default-scheduler');
    assert.equal(obj.spec.terminationGracePeriodSeconds, 30);
    assert.equal(obj.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(obj.spec.containers[0].ports[0].protocol, 'TCP');
    assert.equal(obj.spec.containers[0].livenessProbe.timeoutSeconds, 1);
    assert.equal(obj.status.phase, 'Pending');
    assert.equal(obj.status.qosClass, 'BestEffort');
    const yaml = kubectlOk(server, ['get', 'pod', 'web', '-o', 'yaml']);
    assert.match(yaml, /^apiVersion: v1\nkind: Pod\n/);
    const list = JSON.parse(kubectlOk(server, ['get', 'pods', '-o', 'json']));
    assert.equal(list.kind, 'List');
  });

  it('describes a pod', () => {
    const out = kubectlOk(server, ['describe', 'pod', 'web']);
    assert.match(out, /^Name:\s+web$/m);
    assert.match(out, /^Namespace:\s+default$/m);
    assert.match(out, /^Status:\s+Pending$/m);
    assert.match(out, /^QoS Class:\s+BestEffort$/m);
    assert.match(out, /Port:\s+80\/TCP/);
    assert.match(out, /Liveness:\s+http-get http:\/\/:80\/healthz delay=5s timeout=1s period=5s #success=1 #failure=3/);
  });

  it('labels, annotates and patches (merge, json, strategic)', () => {
    assert.equal(kubectlOk(server, ['label', 'pod', 'web', 'env=dev']).trim(), 'pod/web labeled');
    assert.equal(kubectlOk(server, ['annotate', 'pod', 'web', 'note=hello']).trim(), 'pod/web annotated');
    assert.equal(kubectlOk(server, ['patch', 'pod', 'web', '--type=merge', '-p', '{"metadata":{"labels":{"m":"1"}}}']).trim(), 'pod/web patched');
    assert.equal(kubectlOk(server, ['patch', 'pod', 'web', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels/j","value":"2"}]']).trim(), 'pod/web patched');
    assert.equal(
      kubectlOk(server, ['patch', 'pod', 'web', '-p', '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.23"}]}}']).trim(),
      'pod/web patched',
    );
    const obj = JSON.parse(kubectlOk(server, ['get', 'pod', 'web', '-o', 'json']));
    assert.equal(obj.metadata.labels.env, 'dev');
    assert.equal(obj.metadata.labels.m, '1');
    assert.equal(obj.metadata.labels.j, '2');
    assert.equal(obj.metadata.annotations.note, 'hello');
    assert.equal(obj.spec.containers.length, 1);
    assert.equal(obj.spec.containers[0].image, 'nginx:1.23');
    assert.equal(obj.spec.containers[0].ports[0].containerPort, 80, 'strategic merge keeps the other fields');
    const bad = kubectl(server, ['patch', 'pod', 'web', '--type=merge', '-p', '{"spec":{"restartPolicy":"Never"}}']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than/);
  });

  it('explains pod.spec.containers and lists api-resources', () => {
    const explain = kubectlOk(server, ['explain', 'pod.spec.containers']);
    assert.match(explain, /KIND:\s+Pod/);
    assert.match(explain, /FIELD:\s+containers <\[\]Container>/);
    assert.match(explain, /image\s+<string>/);
    const resources = kubectlOk(server, ['api-resources']);
    assert.match(resources, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    assert.match(resources, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    assert.match(resources, /^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
  });

  it('gets events, filtered by the involved object', () => {
    const uid = kubectlOk(server, ['get', 'pod', 'web', '-o', 'jsonpath={.metadata.uid}']);
    const event = `apiVersion: v1
kind: Event
metadata:
  name: web.1
involvedObject:
  kind: Pod
  name: web
  namespace: default
  uid: ${uid}
reason: Testing
message: an event for web
type: Normal
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:00:00Z"
count: 1
source:
  component: e2e
`;
    kubectlOk(server, ['create', '-f', '-'], event);
    const out = kubectlOk(server, ['get', 'events']);
    assert.match(out.split('\n')[0]!, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.match(out, /Normal\s+Testing\s+pod\/web\s+an event for web/);
    const described = kubectlOk(server, ['describe', 'pod', 'web']);
    assert.match(described, /Normal\s+Testing\s+.*e2e\s+an event for web/);
    const filtered = kubectlOk(server, ['get', 'events', '--field-selector', 'involvedObject.name=nothing']);
    assert.equal(filtered.trim(), '');
  });

  it('waits for a jsonpath condition', () => {
    const out = kubectlOk(server, ['wait', '--for=jsonpath={.status.phase}=Pending', 'pod/web', '--timeout=10s']);
    assert.equal(out.trim(), 'pod/web condition met');
  });

  it('watches with get -w and sees another client\'s change', async () => {
    const watcher = spawn('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.dataDir, 'kubectl-cache'), 'get', 'pods', '-w'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => (/^web\s/m.test(out) ? true : undefined), 'the initial list');
      kubectlOk(server, ['create', '-f', '-'], pod('watched'));
      await eventually(() => (/^watched\s+0\/1\s+Pending/m.test(out) ? true : undefined), 'the watch to show the new pod');
    } finally {
      watcher.kill('SIGTERM');
    }
    assert.doesNotMatch(out, /<unknown>/);
  });

  it('deletes an unbound pod at once', () => {
    assert.equal(kubectlOk(server, ['delete', 'pod', 'made']).trim(), 'pod "made" deleted');
    const gone = kubectl(server, ['get', 'pod', 'made']);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr.trim(), 'Error from server (NotFound): pods "made" not found');
  });

  it('keeps a pod on a node Terminating until it is deleted with grace 0', () => {
    kubectlOk(server, ['create', '-f', '-'], pod('bound', '  nodeName: node-1\n'));
    assert.equal(kubectlOk(server, ['delete', 'pod', 'bound', '--wait=false']).trim(), 'pod "bound" deleted');
    const row = kubectlOk(server, ['get', 'pod', 'bound']);
    assert.match(row, /^bound\s+0\/1\s+Terminating\s+0/m);
    const obj = JSON.parse(kubectlOk(server, ['get', 'pod', 'bound', '-o', 'json']));
    assert.equal(obj.metadata.deletionGracePeriodSeconds, 30);
    assert.ok(obj.metadata.deletionTimestamp);
    const forced = kubectl(server, ['delete', 'pod', 'bound', '--grace-period=0', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout.trim(), 'pod "bound" force deleted');
    assert.equal(kubectl(server, ['get', 'pod', 'bound']).code, 1);
  });

  it('creates and deletes a namespace with its content', async () => {
    assert.equal(kubectlOk(server, ['create', 'namespace', 'team']).trim(), 'namespace/team created');
    kubectlOk(server, ['-n', 'team', 'create', '-f', '-'], pod('inside'));
    kubectlOk(server, ['-n', 'team', 'create', 'configmap', 'cfg', '--from-literal=a=b']);
    const out = kubectl(server, ['delete', 'namespace', 'team', '--timeout=60s']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'namespace "team" deleted');
    assert.equal(kubectl(server, ['get', 'namespace', 'team']).code, 1);
    const immortal = kubectl(server, ['delete', 'namespace', 'default']);
    assert.equal(immortal.code, 1);
    assert.match(immortal.stderr, /Error from server \(Forbidden\): namespaces "default" is forbidden: this namespace may not be deleted/);
  });

  it('refuses creates in a missing namespace', () => {
    const r = kubectl(server, ['-n', 'nowhere', 'create', '-f', '-'], pod('lost'));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error from server \(NotFound\): error when creating "STDIN": namespaces "nowhere" not found/);
  });

  it('reports invalid objects with every field error', () => {
    const bad = `apiVersion: v1
kind: Pod
metadata:
  name: Bad_Name
spec:
  containers:
  - name: c
`;
    const r = kubectl(server, ['create', '-f', '-'], bad);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /The Pod "Bad_Name" is invalid: \n?\* metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    assert.match(r.stderr, /spec\.containers\[0\]\.image: Required value/);
  });
});
