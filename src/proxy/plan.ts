// The node's service proxy as a pure function: Services and EndpointSlices in, one nftables table
// out, laid out as upstream's nftables proxier (pkg/proxy/nftables): `service-ips` and
// `service-nodeports` verdict maps dispatch to a chain per service port, which picks an endpoint
// chain with `numgen random` (after ClientIP affinity sets), which DNATs. Services without usable
// endpoints land in `no-endpoint-services` / `no-endpoint-nodeports` (reject); whatever is still
// addressed to the service range after nat is rejected and counted.
//
// kite differences, because several nodes share one machine's kernel and nothing may leave it:
// one table per node (named after its bridge); pod traffic is matched by the node's own bridge,
// host traffic by the route it took (the service range is routed into a kite bridge); NodePorts are
// served on the node's gateway address (the node's InternalIP is 127.0.0.1, which nftables NodePorts
// never serve); there is no masquerade, only the SNAT of a pod's hairpin connection to the bridge's
// own address (a pod cannot accept a packet from its own address, so upstream masquerades it too).
import { createHash } from 'node:crypto';
import type { EndpointSlice, Service } from '../api/types.js';
import { isIPv4 } from '../api/validation/names.js';

export interface ProxyNode {
  nodeName: string;
  /** The node's pod bridge: its pods' traffic arrives on it, host traffic to the service range leaves on it. */
  bridge: string;
  /** The bridge's address: where NodePorts are served, and the hairpin SNAT source. */
  gateway: string;
  serviceCIDR: string;
  /** The whole cluster's pod range (every node's bridge subnet is inside it). */
  clusterCIDR: string;
}

/** The node's table; `kite reset` deletes it. */
export const proxyTableName = (bridge: string) => `kite-proxy-${bridge}`;
export const proxyTableFamily = 'ip';

// Upstream's masquerade mark bit; here it marks hairpin connections for SNAT.
const hairpinMark = '0x00004000';
const chainNameBaseLengthMax = 240;
const defaultAffinityTimeoutSeconds = 10800;

/** What one Service contributes: its chains (name → rules), affinity sets (name → timeout) and map/set elements. */
export interface ServicePlan {
  chains: Map<string, string[]>;
  sets: Map<string, number>;
  /** `<container> <key>` → verdict (empty for set elements). */
  elements: Map<string, string>;
}

const base32Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Upstream's hashAndTruncate: the first 8 base32 characters of sha256(name), a dash, the name. */
export function hashAndTruncate(name: string): string {
  const digest = createHash('sha256').update(name).digest();
  // 8 base32 characters are exactly the first 40 bits.
  let bits = 0n;
  for (let i = 0; i < 5; i++) bits = (bits << 8n) | BigInt(digest[i]);
  let hash = '';
  for (let i = 7; i >= 0; i--) hash += base32Alphabet[Number((bits >> BigInt(i * 5)) & 31n)];
  const full = `${hash}-${name}`;
  return full.length > chainNameBaseLengthMax ? full.slice(0, chainNameBaseLengthMax - 3) + '...' : full;
}

export interface EndpointInfo {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  local: boolean;
}

function ipKey(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

/** The endpoints of one service port across the Service's slices (IPv4 only), deduplicated and in address order. */
export function endpointsFor(slices: readonly EndpointSlice[], portName: string, protocol: string, nodeName: string): EndpointInfo[] {
  const byAddr = new Map<string, EndpointInfo>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4') continue;
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol);
    if (!port?.port) continue;
    for (const ep of slice.endpoints ?? []) {
      const ip = ep.addresses?.[0];
      if (!ip || !isIPv4(ip)) continue;
      const c = ep.conditions ?? {};
      // As upstream: ready and serving default to true when unset, terminating to false.
      const ready = c.ready ?? true;
      const info: EndpointInfo = { ip, port: port.port, ready, serving: c.serving ?? ready, terminating: c.terminating ?? false, local: ep.nodeName === nodeName };
      const key = `${ip}:${port.port}`;
      if (!byAddr.has(key)) byAddr.set(key, info);
    }
  }
  return [...byAddr.values()].sort((a, b) => ipKey(a.ip) - ipKey(b.ip) || a.port - b.port);
}

const usable = (eps: EndpointInfo[]) => {
  const ready = eps.filter((e) => e.ready);
  // When nothing is ready, serving endpoints that are terminating still take traffic (upstream's fallback).
  return ready.length > 0 ? ready : eps.filter((e) => e.serving && e.terminating);
};

/** The Service's part of the ruleset; undefined for Services the proxy ignores (headless, ExternalName, no IPv4 ClusterIP). */
export function planService(svc: Service, slices: readonly EndpointSlice[], node: ProxyNode): ServicePlan | undefined {
  const spec = svc.spec ?? {};
  const clusterIP = spec.clusterIP;
  if (spec.type === 'ExternalName' || !clusterIP || clusterIP === 'None' || !isIPv4(clusterIP)) return undefined;
  const ns = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const plan: ServicePlan = { chains: new Map(), sets: new Map(), elements: new Map() };
  const affinity = spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? defaultAffinityTimeoutSeconds) : 0;
  for (const sp of spec.ports ?? []) {
    const protocolUpper = sp.protocol ?? 'TCP';
    const protocol = protocolUpper.toLowerCase();
    const portName = sp.name ?? '';
    const spn = `${ns}/${name}/${protocol}/${portName}`;
    const baseName = hashAndTruncate(spn);
    const clusterChain = `service-${baseName}`;
    const localChain = `local-${baseName}`;
    const externalChain = `external-${baseName}`;
    const nodePort = spec.type === 'NodePort' || spec.type === 'LoadBalancer' ? (sp.nodePort ?? 0) : 0;
    const externallyAccessible = nodePort !== 0;
    const internalLocal = spec.internalTrafficPolicy === 'Local';
    const externalLocal = externallyAccessible && spec.externalTrafficPolicy === 'Local';
    const usesCluster = !internalLocal || (externallyAccessible && !externalLocal);
    const usesLocal = internalLocal || externalLocal;

    const all = endpointsFor(slices, portName, protocolUpper, node.nodeName);
    const clusterEps = usesCluster ? usable(all) : [];
    const localEps = usesLocal ? usable(all.filter((e) => e.local)) : [];
    const hasEndpoints = usable(all).length > 0;
    const hasInternal = internalLocal ? localEps.length > 0 : hasEndpoints;
    const hasExternal = externalLocal ? localEps.length > 0 : hasEndpoints;
    const internalChain = internalLocal ? localChain : clusterChain;
    const externalPolicyChain = externalLocal ? localChain : clusterChain;

    const svcKey = `${clusterIP} . ${protocol} . ${sp.port}`;
    plan.elements.set(`cluster-ips ${clusterIP}`, '');
    if (hasInternal) plan.elements.set(`service-ips ${svcKey}`, `goto ${internalChain}`);
    else plan.elements.set(`no-endpoint-services ${svcKey}`, hasEndpoints ? 'drop' : 'goto reject-chain');
    if (nodePort) {
      const npKey = `${protocol} . ${nodePort}`;
      if (hasEndpoints) plan.elements.set(`service-nodeports ${npKey}`, `goto ${externalChain}`);
      if (!hasExternal) plan.elements.set(`no-endpoint-nodeports ${npKey}`, hasEndpoints ? 'drop' : 'goto reject-chain');
    }

    const endpointChain = (e: EndpointInfo) => `endpoint-${hashAndTruncate(`${spn}__${e.ip}/${e.port}`)}`;
    const affinitySet = (e: EndpointInfo) => `affinity-${hashAndTruncate(`${spn}__${e.ip}/${e.port}`)}`;
    const toEndpoints = (chain: string, eps: EndpointInfo[]) => {
      const rules: string[] = [];
      if (affinity) for (const e of eps) rules.push(`ip saddr @${affinitySet(e)} goto ${endpointChain(e)}`);
      rules.push(`numgen random mod ${eps.length} vmap { ${eps.map((e, i) => `${i} : goto ${endpointChain(e)}`).join(', ')} }`);
      plan.chains.set(chain, rules);
    };
    if (clusterEps.length > 0) toEndpoints(clusterChain, clusterEps);
    if (localEps.length > 0) toEndpoints(localChain, localEps);
    if (hasEndpoints && externallyAccessible) {
      const rules: string[] = [];
      if (externalLocal) {
        // Pods and the host itself are not "external": they use the Cluster policy (upstream's short-circuits).
        if (clusterEps.length > 0) {
          rules.push(`ip saddr ${node.clusterCIDR} goto ${clusterChain}`, `fib saddr type local goto ${clusterChain}`);
        }
      }
      if (hasExternal) rules.push(`goto ${externalPolicyChain}`);
      plan.chains.set(externalChain, rules);
    }
    for (const e of new Set([...clusterEps, ...localEps])) {
      const rules = [`ip saddr ${e.ip} jump mark-for-masquerade`];
      if (affinity) {
        plan.sets.set(affinitySet(e), affinity);
        rules.push(`update @${affinitySet(e)} { ip saddr }`);
      }
      rules.push(`meta l4proto ${protocol} dnat to ${e.ip}:${e.port}`);
      plan.chains.set(endpointChain(e), rules);
    }
  }
  return plan;
}

/** The table's fixed part for this node: base chains, dispatch, checks and the containers, empty. */
export function baseRuleset(node: ProxyNode): string {
  const t = `${proxyTableFamily} ${proxyTableName(node.bridge)}`;
  const br = JSON.stringify(node.bridge);
  const lines = [
    `add table ${t} { comment "kite service proxy of node ${node.nodeName}" ; }`,
    `add chain ${t} filter-input { type filter hook input priority -110 ; }`,
    `add chain ${t} filter-forward { type filter hook forward priority -110 ; }`,
    `add chain ${t} filter-output { type filter hook output priority -110 ; }`,
    `add chain ${t} filter-output-post-dnat { type filter hook output priority -90 ; }`,
    `add chain ${t} nat-prerouting { type nat hook prerouting priority -100 ; }`,
    `add chain ${t} nat-output { type nat hook output priority -100 ; }`,
    `add chain ${t} nat-postrouting { type nat hook postrouting priority 100 ; }`,
    ...['services', 'service-endpoints-check', 'nodeport-endpoints-check', 'cluster-ips-check', 'mark-for-masquerade', 'masquerading', 'reject-chain'].map(
      (c) => `add chain ${t} ${c}`,
    ),
    `add set ${t} cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }`,
    `add set ${t} nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`,
    `add element ${t} nodeport-ips { ${node.gateway} }`,
    `add map ${t} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`,
    `add map ${t} no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`,
    `add map ${t} service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP traffic" ; }`,
    `add map ${t} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`,
    // Pods of this node (their bridge) and host traffic routed into the bridge; NodePorts on the
    // gateway address from the host and from any node's pods.
    `add rule ${t} nat-prerouting iifname ${br} jump services`,
    `add rule ${t} nat-prerouting iifname != ${br} ip saddr ${node.clusterCIDR} ip daddr @nodeport-ips jump services`,
    `add rule ${t} nat-output oifname ${br} jump services`,
    `add rule ${t} nat-output ip daddr @nodeport-ips jump services`,
    `add rule ${t} nat-postrouting jump masquerading`,
    `add rule ${t} services ip daddr . meta l4proto . th dport vmap @service-ips`,
    `add rule ${t} services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`,
    `add rule ${t} filter-input ct state new jump nodeport-endpoints-check`,
    `add rule ${t} filter-forward iifname ${br} ct state new jump service-endpoints-check`,
    `add rule ${t} filter-forward iifname ${br} ct state new jump cluster-ips-check`,
    `add rule ${t} filter-output oifname ${br} ct state new jump service-endpoints-check`,
    `add rule ${t} filter-output-post-dnat oifname ${br} ct state new jump cluster-ips-check`,
    `add rule ${t} service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services`,
    `add rule ${t} nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports`,
    `add rule ${t} cluster-ips-check ip daddr @cluster-ips goto reject-chain comment "Reject traffic to invalid ports of ClusterIPs"`,
    `add rule ${t} cluster-ips-check ip daddr ${node.serviceCIDR} counter goto reject-chain comment "Reject traffic to unallocated ClusterIPs"`,
    `add rule ${t} reject-chain meta l4proto tcp reject with tcp reset`,
    `add rule ${t} reject-chain reject`,
    `add rule ${t} mark-for-masquerade meta mark set meta mark or ${hairpinMark}`,
    // Only a hairpin connection (a pod reaching itself through a Service) is marked; it leaves on
    // this node's bridge and takes the bridge's own address, which never leaves the machine.
    `add rule ${t} masquerading oifname != ${br} return`,
    `add rule ${t} masquerading meta mark & ${hairpinMark} == 0 return`,
    `add rule ${t} masquerading meta mark set meta mark xor ${hairpinMark}`,
    `add rule ${t} masquerading snat to ${node.gateway}`,
  ];
  return lines.join('\n') + '\n';
}

function elementLine(op: 'add' | 'delete', t: string, element: string, value: string): string {
  const sp = element.indexOf(' ');
  const container = element.slice(0, sp);
  const key = element.slice(sp + 1);
  return `${op} element ${t} ${container} { ${key}${op === 'add' && value ? ` : ${value}` : ''} }`;
}

const setLine = (t: string, name: string, timeout: number) => `add set ${t} ${name} { type ipv4_addr ; flags dynamic,timeout ; timeout ${timeout}s ; }`;

/** The whole table in one transaction: whatever was there is replaced (used at start, after a failure and periodically). */
export function fullScript(node: ProxyNode, plans: Iterable<ServicePlan>): string {
  const t = `${proxyTableFamily} ${proxyTableName(node.bridge)}`;
  const out = [`add table ${t}`, `delete table ${t}`, baseRuleset(node).trimEnd()];
  const list = [...plans];
  for (const p of list) for (const c of p.chains.keys()) out.push(`add chain ${t} ${c}`);
  for (const p of list) for (const [s, timeout] of p.sets) out.push(setLine(t, s, timeout));
  for (const p of list) for (const [c, rules] of p.chains) for (const r of rules) out.push(`add rule ${t} ${c} ${r}`);
  for (const p of list) for (const [e, v] of p.elements) out.push(elementLine('add', t, e, v));
  return out.join('\n') + '\n';
}

const sameRules = (a: string[] | undefined, b: string[] | undefined) => !!a && !!b && a.length === b.length && a.every((r, i) => r === b[i]);
const emptyPlan: ServicePlan = { chains: new Map(), sets: new Map(), elements: new Map() };

/**
 * The changes from the old plans of some Services to their new ones (undefined: absent), as upstream's
 * partial sync: only changed chains are flushed and refilled, only changed elements touched.
 * Empty when nothing differs.
 */
export function partialScript(node: ProxyNode, changes: Iterable<{ old?: ServicePlan; next?: ServicePlan }>): string {
  const t = `${proxyTableFamily} ${proxyTableName(node.bridge)}`;
  const flush: string[] = [];
  const addChains: string[] = [];
  const delSets: string[] = [];
  const addSets: string[] = [];
  const rules: string[] = [];
  const delElements: string[] = [];
  const addElements: string[] = [];
  const delChains: string[] = [];
  for (const { old = emptyPlan, next = emptyPlan } of changes) {
    const setsChanged = [...old.sets].some(([s, v]) => next.sets.get(s) !== v) || [...next.sets].some(([s, v]) => old.sets.get(s) !== v);
    for (const [c, r] of next.chains) {
      const before = old.chains.get(c);
      if (!before) addChains.push(`add chain ${t} ${c}`);
      else if (setsChanged || !sameRules(before, r)) flush.push(`flush chain ${t} ${c}`);
      else continue;
      for (const rule of r) rules.push(`add rule ${t} ${c} ${rule}`);
    }
    for (const c of old.chains.keys()) {
      if (next.chains.has(c)) continue;
      flush.push(`flush chain ${t} ${c}`);
      delChains.push(`delete chain ${t} ${c}`);
    }
    for (const [s, timeout] of old.sets) if (next.sets.get(s) !== timeout) delSets.push(`delete set ${t} ${s}`);
    for (const [s, timeout] of next.sets) if (old.sets.get(s) !== timeout) addSets.push(setLine(t, s, timeout));
    for (const [e, v] of old.elements) if (next.elements.get(e) !== v) delElements.push(elementLine('delete', t, e, v));
    for (const [e, v] of next.elements) if (old.elements.get(e) !== v) addElements.push(elementLine('add', t, e, v));
  }
  // Order matters in one transaction: nothing may still refer to a set or chain when it goes, and
  // whatever a rule or element points at must exist first.
  const out = [...flush, ...addChains, ...delElements, ...delSets, ...addSets, ...rules, ...addElements, ...delChains];
  return out.length ? out.join('\n') + '\n' : '';
}
