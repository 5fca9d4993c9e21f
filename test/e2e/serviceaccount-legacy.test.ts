// Legacy service-account token Secrets against a real `kite server` with the real kubectl: the
// serviceaccount-token-controller fills a Secret kubectl creates, its token authenticates as the
// account (`kubectl auth whoami`), and deleting the account deletes the Secret and ends the token.
// The server runs with --api-audiences: TokenRequest's default audiences and the authenticator follow it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeKubeconfig } from '../../src/client/kubeconfig-write.js';
import { eventually, kubectl, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

let server: KiteServer;
const issuer = 'https://kubernetes.default.svc.cluster.local';

before(async () => {
  server = await startServer({ extraArgs: ['--api-audiences', `${issuer},i15-audience`] });
});

after(async () => {
  await server?.stop();
  if (server) removeDir(server.dataDir);
});

const tokenSecret = `apiVersion: v1
kind: Secret
metadata:
  name: i15-builder-token
  namespace: default
  annotations:
    kubernetes.io/service-account.name: i15-builder
type: kubernetes.io/service-account-token
`;

void describe('legacy service-account token Secrets', () => {
  void it('are filled by the controller, authenticate as the account, and go with it', async () => {
    kubectlOk(server, ['create', 'serviceaccount', 'i15-builder']);
    const saUID = kubectlOk(server, ['get', 'serviceaccount', 'i15-builder', '-o', 'jsonpath={.metadata.uid}']);
    assert.equal(kubectlOk(server, ['create', '-f', '-'], tokenSecret), 'secret/i15-builder-token created\n');
    const token = await eventually(() => {
      const t = kubectlOk(server, ['get', 'secret', 'i15-builder-token', '-o', 'jsonpath={.data.token}']);
      return t ? Buffer.from(t, 'base64').toString('utf8') : undefined;
    }, 'data.token');
    const get = (path: string) => kubectlOk(server, ['get', 'secret', 'i15-builder-token', '-o', `jsonpath=${path}`]);
    assert.equal(Buffer.from(get('{.data.namespace}'), 'base64').toString('utf8'), 'default');
    const caPem = readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    assert.equal(Buffer.from(get('{.data.ca\\.crt}'), 'base64').toString('utf8'), caPem);
    assert.equal(get('{.metadata.annotations.kubernetes\\.io/service-account\\.uid}'), saUID);
    // kubectl's secret describer prints a service-account token itself and the sizes of the rest.
    const described = kubectlOk(server, ['describe', 'secret', 'i15-builder-token']);
    assert.match(described, /Type: {2}kubernetes\.io\/service-account-token\n/);
    assert.ok(described.includes(`token:      ${token}\n`));
    assert.ok(described.includes('namespace:  7 bytes\n'));
    assert.ok(described.includes(`ca.crt:     ${Buffer.byteLength(caPem)} bytes\n`));

    const tokenKubeconfig = join(server.dataDir, 'i15-builder.kubeconfig');
    await writeKubeconfig(tokenKubeconfig, { server: server.url, caPem, token, user: 'i15-builder' });
    const asBuilder = { kubeconfig: tokenKubeconfig };
    assert.equal(
      kubectlOk(asBuilder, ['auth', 'whoami']),
      `ATTRIBUTE   VALUE\nUsername    system:serviceaccount:default:i15-builder\nUID         ${saUID}\nGroups      [system:serviceaccounts system:serviceaccounts:default system:authenticated]\n`,
    );

    kubectlOk(server, ['delete', 'serviceaccount', 'i15-builder']);
    await eventually(() => (kubectl(server, ['get', 'secret', 'i15-builder-token']).code === 1 ? true : undefined), 'the token Secret deleted');
    const refused = kubectl(asBuilder, ['auth', 'whoami']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Unauthorized/);
  });

  void it('a token Secret naming a missing account is deleted', async () => {
    kubectlOk(server, ['create', '-f', '-'], tokenSecret.replace('i15-builder-token', 'i15-orphan-token').replace('name: i15-builder\n', 'name: i15-nobody\n'));
    await eventually(() => (kubectl(server, ['get', 'secret', 'i15-orphan-token']).code === 1 ? true : undefined), 'the orphan Secret deleted');
  });
});

void describe('--api-audiences', () => {
  void it('is what TokenRequest names by default, and a token must name one of them', async () => {
    const caPem = readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    const whoami = async (token: string) => {
      const kubeconfig = join(server.dataDir, 'aud.kubeconfig');
      await writeKubeconfig(kubeconfig, { server: server.url, caPem, token, user: 'aud' });
      return kubectl({ kubeconfig }, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    };
    const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { aud: string[] };
    const byDefault = kubectlOk(server, ['create', 'token', 'default']).trim();
    assert.deepEqual(claims(byDefault).aud, [issuer, 'i15-audience']);
    const ours = kubectlOk(server, ['create', 'token', 'default', '--audience', 'i15-audience']).trim();
    assert.deepEqual(await whoami(ours), { code: 0, stdout: 'system:serviceaccount:default:default', stderr: '' });
    const theirs = kubectlOk(server, ['create', 'token', 'default', '--audience', 'i15-elsewhere']).trim();
    const refused = await whoami(theirs);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Unauthorized/);
    const review = kubectlOk(server, ['create', '-f', '-', '-o', 'jsonpath={.status.audiences}'], JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: ours } }));
    assert.deepEqual(JSON.parse(review), [issuer, 'i15-audience']);
  });
});
