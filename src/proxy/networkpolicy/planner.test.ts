import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkPolicy } from '../../api/types.js';
import { deletePolicyTable, planPolicyRuleset, policyTableName, type PolicyPod, type PolicyState } from './planner.js';

const pod = (namespace: string, name: string, ip: string, labels: Record<string, string>, ports: PolicyPod['ports'] = []): PolicyPod => ({ namespace, name, ip, labels, ports });
const server = pod('default', 'server', '10.217.245.4', { app: 'web' }, [{ name: 'http', protocol: 'TCP', port: 80 }]);
const client = pod('default', 'client', '10.217.245.5', { app: 'client' });
const other = pod('other', 'client', '10.217.245.6', { app: 'client' });
const remote = pod('default', 'remote', '10.217.246.9', { app: 'client' }, [{ name: 'http', protocol: 'TCP', port: 8080 }]);

const policy = (namespace: string, name: string, spec: NetworkPolicy['spec']): NetworkPolicy => ({ metadata: { namespace, name }, spec });
const state = (policies: NetworkPolicy[]): PolicyState => ({
  table: policyTableName('kite-np'),
  bridge: 'kite-np',
  local: [server, client, other],
  pods: [server, client, other, remote],
  namespaces: new Map<string, Record<string, string>>([
    ['default', { 'kubernetes.io/metadata.name': 'default' }],
    ['other', { 'kubernetes.io/metadata.name': 'other', team: 'b' }],
  ]),
  policies,
});

const head = `table inet kite-policy-kite-np {}
delete table inet kite-policy-kite-np
table inet kite-policy-kite-np {
\tchain forward {
\t\ttype filter hook forward priority filter; policy accept;
\t\tct state established,related accept
`;

const ipv6Drops = `\t\tmeta nfproto ipv6 iifname "kite-np" counter drop comment "pods are IPv4-only while policies isolate them"
\t\tmeta nfproto ipv6 oifname "kite-np" counter drop comment "pods are IPv4-only while policies isolate them"
`;

void test('no policy: only the forward chain, nothing isolated, IPv6 untouched', () => {
  assert.equal(planPolicyRuleset(state([])), `${head}\t}\n}\n`);
});

void test('default deny ingress isolates every local pod of the namespace, with a counted drop naming it', () => {
  const deny = policy('default', 'deny', { podSelector: {}, policyTypes: ['Ingress'] });
  assert.equal(
    planPolicyRuleset(state([deny])),
    `${head}${ipv6Drops}\t\toifname "kite-np" ip daddr vmap { 10.217.245.4 : jump ingress-10.217.245.4, 10.217.245.5 : jump ingress-10.217.245.5 }
\t}
\tchain ingress-10.217.245.4 {
\t\tip saddr 10.217.245.4 accept
\t\tcounter drop comment "default/server: no NetworkPolicy allows this ingress"
\t}
\tchain ingress-10.217.245.5 {
\t\tip saddr 10.217.245.5 accept
\t\tcounter drop comment "default/client: no NetworkPolicy allows this ingress"
\t}
}
`,
  );
});

void test('ingress peers (podSelector, namespaceSelector, ipBlock with except) and ports (named, ranges, protocol only); egress to a named port per destination', () => {
  const web = policy('default', 'web', {
    podSelector: { matchLabels: { app: 'web' } },
    policyTypes: ['Ingress'],
    ingress: [
      {
        from: [{ podSelector: { matchLabels: { app: 'client' } } }, { namespaceSelector: { matchLabels: { team: 'b' } } }, { ipBlock: { cidr: '10.0.0.1/8', except: ['10.1.0.0/16', '10.1.2.0/24'] } }],
        ports: [{ protocol: 'TCP', port: 'http' }, { protocol: 'TCP', port: 8000, endPort: 8080 }, { protocol: 'TCP', port: 8080 }, { protocol: 'UDP' }],
      },
    ],
  });
  const out = policy('default', 'client-out', {
    podSelector: { matchLabels: { app: 'client' } },
    policyTypes: ['Egress'],
    egress: [{ to: [{ podSelector: {} }], ports: [{ protocol: 'TCP', port: 'http' }, { protocol: 'UDP', port: 53 }] }],
  });
  assert.equal(
    planPolicyRuleset(state([web, out])),
    `${head}${ipv6Drops}\t\tiifname "kite-np" ip saddr vmap { 10.217.245.5 : jump egress-10.217.245.5 }
\t\toifname "kite-np" ip daddr vmap { 10.217.245.4 : jump ingress-10.217.245.4 }
\t}
\tchain egress-10.217.245.5 {
\t\tip daddr 10.217.245.5 return
\t\tip daddr { 10.217.245.4, 10.217.245.5, 10.217.246.9 } udp dport 53 return comment "default/client-out egress[0]"
\t\tip daddr . meta l4proto . th dport { 10.217.245.4 . tcp . 80, 10.217.246.9 . tcp . 8080 } return comment "default/client-out egress[0]"
\t\tcounter drop comment "default/client: no NetworkPolicy allows this egress"
\t}
\tchain ingress-10.217.245.4 {
\t\tip saddr 10.217.245.4 accept
\t\tip saddr { 10.217.245.5, 10.217.245.6, 10.217.246.9 } tcp dport { 80, 8000-8080 } accept comment "default/web ingress[0]"
\t\tip saddr { 10.217.245.5, 10.217.245.6, 10.217.246.9 } meta l4proto udp accept comment "default/web ingress[0]"
\t\tip saddr 10.0.0.0/8 ip saddr != 10.1.0.0/16 tcp dport { 80, 8000-8080 } accept comment "default/web ingress[0]"
\t\tip saddr 10.0.0.0/8 ip saddr != 10.1.0.0/16 meta l4proto udp accept comment "default/web ingress[0]"
\t\tcounter drop comment "default/server: no NetworkPolicy allows this ingress"
\t}
}
`,
  );
});

void test('what selects and allows nothing: other namespaces, other types, unresolvable named ports, IPv6 blocks, remote pods', () => {
  const cases: { name: string; policies: NetworkPolicy[]; chains: string[] }[] = [
    { name: 'policy of another namespace', policies: [policy('other', 'deny', { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'] })], chains: [] },
    { name: 'egress-only policy leaves ingress open', policies: [policy('default', 'e', { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Egress'] })], chains: ['egress-10.217.245.4'] },
    {
      name: 'allow-all rule',
      policies: [policy('default', 'all', { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'], ingress: [{}] })],
      chains: ['ingress-10.217.245.4', 'accept comment "default/all ingress[0]"'],
    },
    {
      name: 'named port the pod lacks',
      policies: [policy('default', 'np', { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'], ingress: [{ ports: [{ protocol: 'TCP', port: 'grpc' }] }] })],
      chains: ['ingress-10.217.245.4'],
    },
    {
      name: 'IPv6 block only',
      policies: [policy('default', 'v6', { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'], ingress: [{ from: [{ ipBlock: { cidr: 'fd00::/8' } }] }] })],
      chains: ['ingress-10.217.245.4'],
    },
    { name: 'remote pods are their node\'s business', policies: [policy('default', 'r', { podSelector: { matchLabels: { app: 'client' } }, policyTypes: ['Ingress'] })], chains: ['ingress-10.217.245.5'] },
  ];
  for (const c of cases) {
    const script = planPolicyRuleset(state(c.policies));
    const found = [...script.matchAll(/chain ((?:in|e)gress-[0-9.]+)/g)].map((m) => m[1]);
    const allows = [...script.matchAll(/\t\t(.*(?:accept|return) comment "[^"]+")/g)].map((m) => m[1]);
    assert.deepEqual([...found, ...allows], c.chains, c.name);
  }
});

void test('the reset script removes only the node\'s table, present or not', () => {
  assert.equal(deletePolicyTable(policyTableName('kite-np')), 'table inet kite-policy-kite-np {}\ndelete table inet kite-policy-kite-np\n');
});

void test('values validation refuses never reach nft: bad ports and protocols are skipped, not fatal', () => {
  const bad = policy('default', 'bad', {
    podSelector: { matchLabels: { app: 'web' } },
    policyTypes: ['Ingress'],
    ingress: [{ ports: [{ protocol: 'TCP', port: 0 }, { protocol: 'TCP', port: 90, endPort: 80 }, { protocol: 'ICMP', port: 1 }, { protocol: 'UDP', port: 53 }] }],
  });
  const script = planPolicyRuleset(state([bad]));
  assert.deepEqual([...script.matchAll(/\t\t(.*) accept comment/g)].map((m) => m[1]), ['udp dport 53']);
});
