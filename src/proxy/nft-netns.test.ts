// The planner's scripts against the real nft, in a throwaway network namespace (root only): the
// full table loads, partial syncs apply in order (chains and affinity sets come and go, elements
// change), and what the kernel then holds is what a full sync of the new state would write.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import type { EndpointSlice, Service } from '../api/types.js';
import { NftCommand } from './nftables.js';
import { fullScript, partialScript, planService, proxyTableName, type ProxyNode, type ServicePlan } from './plan.js';

const netns = 'kite-px-test';
const skip = process.getuid?.() !== 0 || spawnSync('nft', ['--version']).status !== 0 ? 'needs root and nft' : false;
const node: ProxyNode = { nodeName: 'n1', bridge: 'kite-pxt', gateway: '10.217.240.1', serviceCIDR: '10.96.0.0/12', clusterCIDR: '10.217.0.0/16' };

const svc = (affinity: boolean, nodePort = 0): Service => ({
  metadata: { namespace: 'ns1', name: 'web' },
  spec: {
    type: nodePort ? 'NodePort' : 'ClusterIP',
    clusterIP: '10.96.0.41',
    ports: [{ name: 'http', port: 80, protocol: 'TCP', ...(nodePort ? { nodePort } : {}) }],
    ...(affinity ? { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 30 } } } : {}),
  },
});
const slice = (ips: string[]): EndpointSlice => ({
  metadata: { namespace: 'ns1', name: 'web-a', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
});

/** The table as nft prints it, its chains, sets and maps in name order (nft lists them in creation order). */
function listing(): string {
  const text = execFileSync('ip', ['netns', 'exec', netns, 'nft', 'list', 'table', 'ip', proxyTableName(node.bridge)], { encoding: 'utf8' });
  return text.split(/\n(?=\t(?:chain|set|map) )/).sort().join('\n');
}

describe('scripts on real nftables (network namespace)', { skip }, () => {
  const nft = new NftCommand({ netns });
  before(() => {
    spawnSync('ip', ['netns', 'del', netns]);
    execFileSync('ip', ['netns', 'add', netns]);
  });
  after(() => {
    spawnSync('ip', ['netns', 'del', netns]);
  });

  it('loads the full table, then follows partial syncs to the same state a full sync writes', async () => {
    const states: ServicePlan[] = [
      planService(svc(false), [slice(['10.217.240.5', '10.217.240.6'])], node)!,
      planService(svc(false, 30080), [slice(['10.217.240.6', '10.217.240.7'])], node)!,
      planService(svc(true, 30080), [slice(['10.217.240.7'])], node)!,
      planService(svc(true), [slice([])], node)!,
      planService(svc(false), [slice(['10.217.240.5'])], node)!,
    ];
    await nft.apply(fullScript(node, [states[0]]));
    for (let i = 1; i < states.length; i++) {
      await nft.apply(partialScript(node, [{ old: states[i - 1], next: states[i] }]));
      const incremental = listing();
      await nft.apply(fullScript(node, [states[i]]));
      assert.equal(incremental, listing(), `state ${i}`);
    }
    await nft.apply(partialScript(node, [{ old: states.at(-1), next: undefined }]));
    const gone = listing();
    assert.ok(!gone.includes('10.96.0.41') && !/(chain|set) (service|endpoint|external|affinity)-[A-Z2-7]{8}-/.test(gone), gone);
  });
});
