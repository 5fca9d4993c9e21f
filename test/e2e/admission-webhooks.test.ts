// Admission webhooks with the real kubectl: a small HTTPS webhook server in the test (127.0.0.1, a
// certificate from a CA the test makes) denies pods, labels them, and plays dead or hangs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startTestWebhookServer, type TestWebhookServer } from '../../src/apiserver/admission/webhook/testing.js';
import { kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

/** kubectl without blocking the event loop: the webhook server answers from this process. */
function kubectlAsync(server: KiteServer, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.dataDir, 'kubectl-cache'), ...args],
      { encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

const podYaml = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
    app: web
spec:
  containers:
  - name: c
    image: busybox
`;

function configYaml(kind: 'Validating' | 'Mutating', name: string, url: string, caBundle: string, extra = ''): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata:
  name: ${name}
webhooks:
- name: ${name}.kite-whk.example.com
  clientConfig:
    url: ${url}
    caBundle: ${caBundle}
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
  objectSelector:
    matchLabels:
      app: web
  sideEffects: None
  admissionReviewVersions: ["v1"]
${extra}`;
}

async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('admission webhooks', () => {
  let server: KiteServer;
  let hooks: TestWebhookServer;

  before(async () => {
    server = await startServer();
    hooks = await startTestWebhookServer((path, req) => {
      if (path === '/deny') {
        const denied = req.object?.metadata?.name === 'bad';
        return denied ? { allowed: false, status: { code: 403, message: 'pods named bad are not allowed' } } : { allowed: true };
      }
      if (path === '/label') return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/mutated-by', value: 'webhook' }], warnings: ['labelled by the webhook'] };
      if (path === '/hang') return undefined;
      return { allowed: true };
    });
  });

  after(async () => {
    await hooks?.close();
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });

  it('shows the configurations with their defaults', async () => {
    kubectlOk(server, ['apply', '-f', '-'], configYaml('Validating', 'deny', `${hooks.url}/deny`, hooks.caBundle));
    const got = JSON.parse(kubectlOk(server, ['get', 'validatingwebhookconfiguration', 'deny', '-o', 'json']));
    const hook = got.webhooks[0];
    assert.equal(hook.failurePolicy, 'Fail');
    assert.equal(hook.matchPolicy, 'Equivalent');
    assert.equal(hook.timeoutSeconds, 10);
    assert.deepEqual(hook.namespaceSelector, {});
    assert.equal(hook.rules[0].scope, '*');
    const bad = await kubectlAsync(server, ['create', '-f', '-'], configYaml('Validating', 'slow', `${hooks.url}/x`, hooks.caBundle, '  timeoutSeconds: 31\n'));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /webhooks\[0\]\.timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds/);
  });

  it('a validating webhook denies a pod with its message', async () => {
    const r = await kubectlAsync(server, ['create', '-f', '-'], podYaml('bad'));
    assert.notEqual(r.code, 0);
    assert.equal(r.stderr.trim(), `Error from server: error when creating "STDIN": admission webhook "deny.kite-whk.example.com" denied the request: pods named bad are not allowed`);
    const ok = await kubectlAsync(server, ['create', '-f', '-'], podYaml('good'));
    assert.equal(ok.code, 0, ok.stderr);
    kubectlOk(server, ['delete', 'validatingwebhookconfiguration', 'deny']);
  });

  it('a mutating webhook adds a label and its warning reaches kubectl', async () => {
    kubectlOk(server, ['apply', '-f', '-'], configYaml('Mutating', 'label', `${hooks.url}/label`, hooks.caBundle));
    const r = await kubectlAsync(server, ['create', '-f', '-'], podYaml('labelled'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: labelled by the webhook/);
    const pod = JSON.parse((await kubectlAsync(server, ['get', 'pod', 'labelled', '-o', 'json'])).stdout);
    assert.equal(pod.metadata.labels['mutated-by'], 'webhook');
    kubectlOk(server, ['delete', 'mutatingwebhookconfiguration', 'label']);
  });

  it('a dead webhook fails the create under failurePolicy Fail and is skipped under Ignore', async () => {
    const port = await deadPort();
    const url = `https://127.0.0.1:${port}/check`;
    kubectlOk(server, ['apply', '-f', '-'], configYaml('Validating', 'dead', url, hooks.caBundle, '  failurePolicy: Fail\n'));
    const r = await kubectlAsync(server, ['create', '-f', '-'], podYaml('refused'));
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      `Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook "dead.kite-whk.example.com": failed to call webhook: Post "${url}?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    kubectlOk(server, ['apply', '-f', '-'], configYaml('Validating', 'dead', url, hooks.caBundle, '  failurePolicy: Ignore\n'));
    const ok = await kubectlAsync(server, ['create', '-f', '-'], podYaml('ignored'));
    assert.equal(ok.code, 0, ok.stderr);
    kubectlOk(server, ['delete', 'validatingwebhookconfiguration', 'dead']);
  });

  it('a webhook that never answers fails the request at its timeout', async () => {
    kubectlOk(server, ['apply', '-f', '-'], configYaml('Validating', 'hang', `${hooks.url}/hang`, hooks.caBundle, '  timeoutSeconds: 2\n'));
    const r = await kubectlAsync(server, ['create', '-f', '-'], podYaml('hung'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /failed calling webhook "hang\.kite-whk\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/hang\?timeout=2s": context deadline exceeded/);
    kubectlOk(server, ['delete', 'validatingwebhookconfiguration', 'hang']);
  });
});
