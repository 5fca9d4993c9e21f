// The pure half of NetworkPolicy enforcement: (policies, pods, namespaces) → one nftables table for
// the node, replaced whole in one transaction. Layout, in the table `inet kite-policy-<bridge>`:
//
//   chain forward   filter hook forward: replies (established, related) pass; traffic leaving a
//                   local pod isolated for egress jumps to its egress chain, traffic to a local pod
//                   isolated for ingress to its ingress chain (both through one verdict map each);
//   chain egress-<podIP>   one rule per (policy rule, peer, protocol) that returns when it allows,
//                   then a counted drop naming the pod: what `nft list table` shows a user whose
//                   Running pod is unreachable because of a policy;
//   chain ingress-<podIP>  the same for traffic to the pod, accepting.
//
// Pods have IPv4 addresses only, so policies speak IPv4; while any local pod is isolated, IPv6
// across the bridge is dropped, or pods' link-local addresses would bypass every policy.
//
// Only the forward hook is filtered: traffic between a pod and its own node (the kubelet's probes,
// the node's cluster DNS on the bridge's gateway) is always allowed, as upstream's documentation
// says of every implementation. Pods of the same bridge meet in the forward hook too, because
// br_netfilter hands bridged IPv4 to the ip hooks (bridge-nf-call-iptables=1). The service proxy
// DNATs in prerouting, so a Service's traffic is seen here with the backend pod's IP.
import type { NetworkPolicy } from '../../api/types.js';
import type { NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicyPort } from 'kubernetes-types/networking/v1.js';
import { labelSelectorAsSelector, nothing, type Labels, type Selector } from '../../api/labels.js';
import { formatPrefix, masked, parseAddrSloppy, parsePrefixSloppy, prefixContains, prefixContainsPrefix, type Prefix } from '../../api/netip.js';

/** A pod as policy sees it: its identity, labels, IP and named container ports. */
export interface PolicyPod {
  namespace: string;
  name: string;
  ip: string;
  labels: Labels;
  ports: readonly NamedPort[];
}

export interface NamedPort {
  name: string;
  /** TCP, UDP or SCTP. */
  protocol: string;
  port: number;
}

export interface PolicyState {
  /** The node's table name (one per node: it holds the bridge's name). */
  table: string;
  bridge: string;
  /** This node's pods on its bridge. */
  local: readonly PolicyPod[];
  /** Every pod with a pod-network IP in the cluster, local ones included (peers). */
  pods: readonly PolicyPod[];
  /** Namespace labels by name. */
  namespaces: ReadonlyMap<string, Labels>;
  policies: readonly NetworkPolicy[];
}

export const policyTableName = (bridge: string): string => `kite-policy-${bridge}`;
export const policyTableFamily = 'inet';

type Direction = 'ingress' | 'egress';

const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
const podKey = (p: PolicyPod) => `${p.namespace}/${p.name}`;

// Informers hand out the same objects until they change, so a selector is parsed once per version.
const parsed = new WeakMap<object, Selector>();

function selector(sel: object): Selector {
  let s = parsed.get(sel);
  if (s) return s;
  try {
    s = labelSelectorAsSelector(sel as Parameters<typeof labelSelectorAsSelector>[0]);
  } catch {
    // Validation refuses such selectors; one stored before it existed matches nothing.
    s = nothing();
  }
  parsed.set(sel, s);
  return s;
}

/** Whether the policy is about this direction: its policyTypes (defaulted by the API server). */
function hasType(np: NetworkPolicy, dir: Direction): boolean {
  return (np.spec?.policyTypes ?? ['Ingress']).includes(dir === 'ingress' ? 'Ingress' : 'Egress');
}

/** The policies that isolate `pod` in `dir`, by namespace/name. */
function policiesFor(state: PolicyState, pod: PolicyPod, dir: Direction): NetworkPolicy[] {
  return state.policies.filter(
    (np) => (np.metadata?.namespace ?? '') === pod.namespace && hasType(np, dir) && selector(np.spec?.podSelector ?? {}).matches(pod.labels),
  );
}

/** The pods a selector peer names: podSelector within the policy's namespace, or within the namespaces namespaceSelector picks. */
function peerPods(state: PolicyState, peer: NetworkPolicyPeer, policyNamespace: string): PolicyPod[] {
  const nsSel = peer.namespaceSelector ? selector(peer.namespaceSelector) : undefined;
  const podSel = peer.podSelector ? selector(peer.podSelector) : undefined;
  return state.pods.filter((p) => {
    const inNamespace = nsSel ? state.namespaces.has(p.namespace) && nsSel.matches(state.namespaces.get(p.namespace)) : p.namespace === policyNamespace;
    return inNamespace && (!podSel || podSel.matches(p.labels));
  });
}

interface Block {
  cidr: Prefix;
  except: Prefix[];
}

/** An IPv4 ipBlock, its excepts normalized (an IPv6 block can never match this table's traffic). */
function ipv4Block(peer: NetworkPolicyPeer): Block | undefined {
  const cidr = parsePrefixSloppy(peer.ipBlock?.cidr ?? '');
  if (!cidr || cidr.addr.family !== 'IPv4') return undefined;
  const except = (peer.ipBlock?.except ?? []).map((e) => parsePrefixSloppy(e)).filter((e): e is Prefix => !!e && prefixContains(cidr, e.addr));
  // Nested excepts would be conflicting intervals to nft: keep the widest.
  const widest = except.filter((e, i) => !except.some((o, j) => j !== i && prefixContainsPrefix(o, e) && (o.bits < e.bits || j < i)));
  return { cidr, except: widest };
}

const inBlock = (ip: string, b: Block) => {
  const addr = parseAddrSloppy(ip);
  return !!addr && prefixContains(b.cidr, addr) && !b.except.some((e) => prefixContains(e, addr));
};

/** The canonical text of a block's network ("10.0.0.0/8"), as IPNet.String() prints it. */
const cidrText = (p: Prefix) => formatPrefix(masked(p));

const nftSet = (items: string[]) => (items.length === 1 ? items[0]! : `{ ${items.join(', ')} }`);
const nftProto = (protocol: string | undefined) => (protocol ?? 'TCP').toLowerCase();

const nftProtocols = new Set(['tcp', 'udp', 'sctp']);
const isPort = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535;
const validRange = (p: NetworkPolicyPort) =>
  typeof p.port !== 'number' ? p.endPort === undefined : isPort(p.port) && (p.endPort === undefined || (isPort(p.endPort) && p.endPort >= p.port));

/** Port ranges merged and sorted, as nft wants an interval set (no overlaps). */
function mergeRanges(ranges: [number, number][]): string[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`));
}

/**
 * The port matches of a rule, one per protocol ("" for a rule without ports: every port and
 * protocol). Named ports resolve through `resolve` (the destination pod's container ports); an
 * entry that resolves to nothing matches nothing.
 */
function portMatches(ports: readonly NetworkPolicyPort[], resolve: (name: string, protocol: string) => number[]): string[] {
  if (ports.length === 0) return [''];
  const ranges = new Map<string, [number, number][]>();
  const allPorts = new Set<string>();
  for (const p of ports) {
    const proto = nftProto(p.protocol);
    // Validation refuses anything else; one bad value must not fail the node's whole transaction.
    if (!nftProtocols.has(proto) || !validRange(p)) continue;
    if (p.port === undefined) allPorts.add(proto);
    else if (typeof p.port === 'number') (ranges.get(proto) ?? ranges.set(proto, []).get(proto)!).push([p.port, p.endPort ?? p.port]);
    else for (const n of resolve(p.port, p.protocol ?? 'TCP')) (ranges.get(proto) ?? ranges.set(proto, []).get(proto)!).push([n, n]);
  }
  const protos = [...new Set([...allPorts, ...ranges.keys()])].sort();
  return protos.map((proto) => (allPorts.has(proto) ? `meta l4proto ${proto}` : `${proto} dport ${nftSet(mergeRanges(ranges.get(proto)!))}`));
}

const namedPort = (pod: PolicyPod, name: string, protocol: string): number[] =>
  pod.ports.filter((p) => p.name === name && p.protocol === protocol && isPort(p.port)).map((p) => p.port);

const ipNumber = (ip: string) => ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
const byIP = (a: PolicyPod, b: PolicyPod) => ipNumber(a.ip) - ipNumber(b.ip);
const sortIPs = (ips: Iterable<string>) => [...new Set(ips)].sort((a, b) => ipNumber(a) - ipNumber(b));

/** nft keeps at most 128 bytes of a rule's comment; names are DNS names, so no quoting is needed. */
const comment = (text: string) => ` comment "${text.slice(0, 127)}"`;

/** A rule's peers as nft matches, and (egress) its whole lines: the same for every pod the policy selects. */
interface CompiledRule {
  addrMatches: string[];
  egressLines?: string[];
}

/** Compiles each rule once per plan, however many local pods its policy selects. */
type RuleCache = Map<object, CompiledRule>;

function compileRule(state: PolicyState, np: NetworkPolicy, rule: NetworkPolicyIngressRule | NetworkPolicyEgressRule, dir: Direction, note: string): CompiledRule {
  const addr = dir === 'ingress' ? 'ip saddr' : 'ip daddr';
  const policyNs = np.metadata?.namespace ?? '';
  const peers: NetworkPolicyPeer[] = ('from' in rule ? rule.from : 'to' in rule ? rule.to : undefined) ?? [];
  const selectorPods = peers.filter((p) => !p.ipBlock).flatMap((p) => peerPods(state, p, policyNs));
  const blocks = peers.map(ipv4Block).filter((b): b is Block => !!b);
  // Source or destination matches: selector peers as one set of pod IPs, each ipBlock on its own.
  const addrMatches: string[] = [];
  if (peers.length === 0) addrMatches.push('');
  if (selectorPods.length > 0) addrMatches.push(`${addr} ${nftSet(sortIPs(selectorPods.map((p) => p.ip)))}`);
  for (const b of blocks) {
    const except = b.except.length ? ` ${addr} != ${nftSet(b.except.map(cidrText))}` : '';
    addrMatches.push(`${addr} ${cidrText(b.cidr)}${except}`);
  }
  if (dir === 'ingress') return { addrMatches };
  // Egress resolves named ports on each destination pod: (IP, protocol, port) elements.
  const ports: NetworkPolicyPort[] = rule.ports ?? [];
  const named = ports.filter((p) => typeof p.port === 'string');
  const numeric = named.length === 0 ? ports : ports.filter((p) => typeof p.port !== 'string');
  const egressLines = numeric.length > 0 || ports.length === 0 ? ruleLines(addrMatches, portMatches(numeric, () => []), 'return', note) : [];
  if (named.length > 0) {
    const destinations = peers.length === 0 ? state.pods : [...selectorPods, ...state.pods.filter((p) => blocks.some((b) => inBlock(p.ip, b)))];
    const elements = new Set<string>();
    for (const d of [...destinations].sort(byIP)) {
      for (const p of named) for (const n of namedPort(d, String(p.port), p.protocol ?? 'TCP')) elements.add(`${d.ip} . ${nftProto(p.protocol)} . ${n}`);
    }
    if (elements.size > 0) egressLines.push(`\t\tip daddr . meta l4proto . th dport ${nftSet([...elements])} return${note}`);
  }
  return { addrMatches, egressLines };
}

const ruleLines = (addrMatches: string[], portMs: string[], verdict: string, note: string) =>
  addrMatches.flatMap((a) => portMs.map((m) => `\t\t${[a, m, verdict].filter(Boolean).join(' ')}${note}`));

/** One direction's allow rules for `pod`: accept (ingress) or return (egress) when a rule allows. */
function allowRules(state: PolicyState, pod: PolicyPod, dir: Direction, cache: RuleCache): string[] {
  const lines: string[] = [];
  for (const np of policiesFor(state, pod, dir).sort(byKey((p) => p.metadata?.name ?? ''))) {
    const rules = (dir === 'ingress' ? np.spec?.ingress : np.spec?.egress) ?? [];
    rules.forEach((rule, i) => {
      const note = comment(`${np.metadata?.namespace ?? ''}/${np.metadata?.name ?? ''} ${dir}[${i}]`);
      let compiled = cache.get(rule);
      if (!compiled) cache.set(rule, (compiled = compileRule(state, np, rule, dir, note)));
      // Ingress resolves named ports on the pod itself.
      if (compiled.egressLines) lines.push(...compiled.egressLines);
      else lines.push(...ruleLines(compiled.addrMatches, portMatches(rule.ports ?? [], (name, proto) => namedPort(pod, name, proto)), 'accept', note));
    });
  }
  return lines;
}

/** The whole table as one nft script: created if absent, then replaced, in one transaction. */
export function planPolicyRuleset(state: PolicyState): string {
  const { table, bridge } = state;
  const local = [...state.local].sort(byIP);
  const chains: string[] = [];
  const cache: RuleCache = new Map();
  const jumps: Record<Direction, string[]> = { ingress: [], egress: [] };
  for (const dir of ['egress', 'ingress'] as const) {
    for (const pod of local) {
      if (policiesFor(state, pod, dir).length === 0) continue;
      const chain = `${dir}-${pod.ip}`;
      jumps[dir].push(`${pod.ip} : jump ${chain}`);
      const self = dir === 'ingress' ? `\t\tip saddr ${pod.ip} accept` : `\t\tip daddr ${pod.ip} return`;
      chains.push(
        [
          `\tchain ${chain} {`,
          self,
          ...allowRules(state, pod, dir, cache),
          `\t\tcounter drop${comment(`${podKey(pod)}: no NetworkPolicy allows this ${dir}`)}`,
          '\t}',
        ].join('\n'),
      );
    }
  }
  const forward = [
    '\tchain forward {',
    '\t\ttype filter hook forward priority filter; policy accept;',
    '\t\tct state established,related accept',
    ...(chains.length ? [`\t\tmeta nfproto ipv6 iifname "${bridge}" counter drop comment "pods are IPv4-only while policies isolate them"`, `\t\tmeta nfproto ipv6 oifname "${bridge}" counter drop comment "pods are IPv4-only while policies isolate them"`] : []),
    ...(jumps.egress.length ? [`\t\tiifname "${bridge}" ip saddr vmap { ${jumps.egress.join(', ')} }`] : []),
    ...(jumps.ingress.length ? [`\t\toifname "${bridge}" ip daddr vmap { ${jumps.ingress.join(', ')} }`] : []),
    '\t}',
  ].join('\n');
  return [`table inet ${table} {}`, `delete table inet ${table}`, `table inet ${table} {`, forward, ...chains, '}', ''].join('\n');
}

/** The script `kite reset` (and a stopping node that cleans up) applies: the table, gone. */
export const deletePolicyTable = (table: string): string => `table inet ${table} {}\ndelete table inet ${table}\n`;
