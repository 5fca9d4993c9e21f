import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFiles, loadKubeconfig, loadKubeconfigChain, parseKubeconfig } from './kubeconfig.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kite-kubeconfig-'));
  await writeFile(join(dir, 'ca.crt'), 'CA-PEM');
  await writeFile(join(dir, 'token'), 'file-token\n');
});
after(() => rm(dir, { recursive: true, force: true }));

const b64 = (s: string) => Buffer.from(s).toString('base64');
const config = `
apiVersion: v1
kind: Config
current-context: admin@kite
clusters:
- name: kite
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: ${b64('CA-DATA')}
- name: files
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: ca.crt
- name: insecure
  cluster:
    server: https://10.0.0.2:6443
    insecure-skip-tls-verify: true
- name: noserver
  cluster: {}
users:
- name: admin
  user:
    client-certificate-data: ${b64('CERT')}
    client-key-data: ${b64('KEY')}
- name: bot
  user:
    tokenFile: token
- name: both
  user:
    client-certificate-data: ${b64('CERT')}
    client-certificate: cert.pem
contexts:
- name: admin@kite
  context: { cluster: kite, user: admin }
- name: bot@files
  context: { cluster: files, user: bot, namespace: work }
- name: insecure
  context: { cluster: insecure, user: bot }
- name: noserver
  context: { cluster: noserver, user: admin }
- name: both
  context: { cluster: kite, user: both }
- name: dangling
  context: { cluster: nope, user: admin }
`;

void test('the current context with embedded data', () => {
  const c = parseKubeconfig(config, { dir });
  assert.equal(c.server, 'https://127.0.0.1:6443');
  assert.equal(c.ca?.toString(), 'CA-DATA');
  assert.equal(c.cert?.toString(), 'CERT');
  assert.equal(c.key?.toString(), 'KEY');
  assert.equal(c.token, undefined);
  assert.equal(c.insecureSkipTLSVerify, false);
});

void test('a named context with files relative to the kubeconfig', async () => {
  const path = join(dir, 'config');
  await writeFile(path, config);
  const c = await loadKubeconfig(path, 'bot@files');
  assert.equal(c.ca?.toString(), 'CA-PEM');
  assert.equal(c.token, 'file-token');
  assert.equal(c.namespace, 'work');
  assert.equal(parseKubeconfig(config, { dir, context: 'insecure' }).insecureSkipTLSVerify, true);
});

void test('errors', () => {
  const cases: [string | undefined, string, string][] = [
    [undefined, 'kind: Config\n', 'invalid configuration: no configuration has been provided'],
    ['missing', config, 'context was not found for specified context: missing'],
    ['dangling', config, 'cluster "nope" was not found for context "dangling"'],
    ['noserver', config, 'no server found for cluster "noserver"'],
    ['both', config, 'client-certificate-data and client-certificate are both specified for both; please specify only one'],
  ];
  for (const [context, text, message] of cases) assert.throws(() => parseKubeconfig(text, { dir, context }), { message }, context);
});

test('$KUBECONFIG with several files: the first to name an entry or set current-context wins; paths resolve per file', async () => {
  const a = join(dir, 'a', 'config');
  const b = join(dir, 'b.yaml');
  await mkdir(join(dir, 'a'), { recursive: true });
  await writeFile(join(dir, 'a', 'ca.crt'), 'A-CA');
  await writeFile(
    a,
    `clusters:\n- name: one\n  cluster: {server: 'https://127.0.0.1:1', certificate-authority: ca.crt}\nusers:\n- name: u\n  user: {token: a-token}\ncontexts:\n- name: ctx-a\n  context: {cluster: one, user: u, namespace: team-a}\n`,
  );
  await writeFile(
    b,
    `current-context: ctx-b\nclusters:\n- name: one\n  cluster: {server: 'https://127.0.0.1:9'}\n- name: two\n  cluster: {server: 'https://127.0.0.1:2', certificate-authority: ca.crt}\nusers:\n- name: u\n  user: {token: b-token}\ncontexts:\n- name: ctx-b\n  context: {cluster: two, user: u}\n`,
  );
  const env = [a, join(dir, 'missing'), b].join(':');
  const current = loadKubeconfigChain({ env });
  assert.equal(current.server, 'https://127.0.0.1:2');
  assert.equal(current.token, 'a-token');
  assert.equal(String(current.ca), 'CA-PEM');
  assert.equal(current.namespace, undefined);
  const named = loadKubeconfigChain({ env, context: 'ctx-a' });
  assert.deepEqual([named.server, String(named.ca), named.namespace], ['https://127.0.0.1:1', 'A-CA', 'team-a']);
  assert.equal(loadKubeconfigChain({ env, kubeconfig: b }).token, 'b-token');
  assert.throws(() => loadKubeconfigChain({ env, kubeconfig: join(dir, 'nope') }), /no such file/);
  assert.deepEqual(kubeconfigFiles(undefined, ''), [join(homedir(), '.kube', 'config')]);
});
