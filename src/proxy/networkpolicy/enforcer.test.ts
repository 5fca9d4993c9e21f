import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Pod } from '../../api/types.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { realClock } from '../../util/clock.js';
import { FakeNftables } from '../nftables.js';
import { NetworkPolicyEnforcer, policyPod } from './enforcer.js';

const pod = (name: string, nodeName: string, labels: Record<string, string>): Pod => ({
  metadata: { name, namespace: 'default', labels },
  spec: { nodeName, containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 80 }] }] },
});

async function withPod(api: FakeApi, p: Pod, ip: string): Promise<void> {
  const pods = api.client().resource('pods').namespace('default');
  const created = await pods.create(p);
  await pods.updateStatus({ ...created, status: { ...created.status, phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
}

void test('policyPod: pod-network IPv4 pods that are not finished, with their named ports', () => {
  const p = pod('a', 'n1', {});
  assert.equal(policyPod(p), undefined);
  assert.deepEqual(policyPod({ ...p, status: { podIP: '10.217.245.4', phase: 'Running' } })?.ports, [{ name: 'http', protocol: 'TCP', port: 80 }]);
  assert.equal(policyPod({ ...p, status: { podIP: '10.217.245.4', phase: 'Succeeded' } }), undefined);
  assert.equal(policyPod({ ...p, spec: { ...p.spec!, hostNetwork: true }, status: { podIP: '127.0.0.1' } }), undefined);
});

void test('the enforcer applies the plan of what the API holds, again on change, never twice the same; a failed apply is logged and retried', async () => {
  const api = await FakeApi.start();
  const dir = await mkdtemp(join(tmpdir(), 'kite-np-'));
  const nft = new FakeNftables();
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(String(JSON.parse(line).msg)) });
  await writeFile(join(dir, 'bridge-nf-call-iptables'), '0\n');
  const enforcer = new NetworkPolicyEnforcer({
    client: api.client(),
    nodeName: 'n1',
    bridge: 'kite-np',
    nft,
    clock: realClock,
    logger,
    bridgeNfCallFile: join(dir, 'bridge-nf-call-iptables'),
  });
  try {
    await withPod(api, pod('server', 'n1', { app: 'web' }), '10.217.245.4');
    await withPod(api, pod('remote', 'n2', { app: 'client' }), '10.217.246.9');
    await enforcer.start();
    assert.deepEqual(warnings, ['bridged traffic skips the ip hooks: NetworkPolicy is not enforced between pods of this node']);
    assert.equal(nft.scripts.length, 1);
    assert.doesNotMatch(nft.scripts[0]!, /chain ingress-/);

    await api
      .client()
      .resource('networkpolicies.networking.k8s.io')
      .namespace('default')
      .create({ metadata: { name: 'web' }, spec: { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'client' } } }], ports: [{ port: 'http' }] }] } });
    await waitFor(() => nft.scripts.length === 2);
    assert.match(nft.scripts[1]!, /\t\tip saddr 10\.217\.246\.9 tcp dport 80 accept comment "default\/web ingress\[0\]"\n/);
    assert.doesNotMatch(nft.scripts[1]!, /chain ingress-10\.217\.246\.9/, 'the remote pod is its own node\'s');

    // A status-only change (same IP, labels, ports) plans the same table: nothing is applied.
    const pods = api.client().resource('pods').namespace('default');
    const server = await pods.get('server');
    await pods.updateStatus({ ...server, status: { ...server.status, conditions: [{ type: 'Ready', status: 'True' }] } });
    await enforcer.sync();
    assert.equal(nft.scripts.length, 2);

    nft.failNext = new Error('nft: Error: Could not process rule: No such file or directory');
    await withPod(api, pod('client2', 'n2', { app: 'client' }), '10.217.246.10');
    await waitFor(() => warnings.some((w) => w.startsWith('network policy table not applied')));
    assert.equal(nft.scripts.length, 2);
    await enforcer.sync();
    assert.equal(nft.scripts.length, 3);
    assert.match(nft.scripts[2]!, /ip saddr \{ 10\.217\.246\.9, 10\.217\.246\.10 \} tcp dport 80 accept/);
  } finally {
    await enforcer.stop();
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), 'condition not reached in 2 s');
}
