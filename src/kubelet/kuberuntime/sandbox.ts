// The PodSandboxConfig for RunPodSandbox, as upstream's generatePodSandboxConfig: identity, hostname
// and DNS (pkg/kubelet/network/dns), log directory, host port mappings, labels, and the Linux part
// (cgroup parent by QoS class, namespaces and security context, sysctls, resources).
import { readFileSync } from 'node:fs';
import type { Pod } from '../../api/types.js';
import { podQOS } from '../../api/pod/qos.js';
import { podCgroupParent } from '../cm/cgroups.js';
import type { KubeletConfig } from '../config.js';
import type { EventRecorder } from '../../client/record/recorder.js';
import type { DNSConfig, LinuxPodSandboxConfig, PodSandboxConfig, PortMapping, Protocol } from '../runtime/types.js';
import { podRef } from '../../api/pod/reference.js';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from './labels.js';
import { formatPod } from './backoff.js';
import { sandboxOverhead, sandboxResources } from './resources.js';
import { sandboxSecurityContext } from './security.js';

const HOSTNAME_MAX_LEN = 63;
/** The Linux nodename field holds 64 characters (setHostnameAsFQDN). */
const FQDN_MAX_LEN = 64;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const MAX_DNS_NAMESERVERS = 3;
const DNS1123_SUBDOMAIN_MAX_LEN = 253;
const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function checkLabel(what: string, value: string): void {
  if (value.length > 63 || !dns1123Label.test(value)) {
    throw new Error(`pod ${what} ${JSON.stringify(value)} is not a valid DNS label`);
  }
}

/** GeneratePodHostNameAndDomain: spec.hostname or the pod name (cut to 63), and the subdomain's FQDN suffix. */
export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; domain: string } {
  const name = pod.metadata?.name ?? '';
  let hostname = name;
  if (pod.spec?.hostname) {
    checkLabel('Hostname', pod.spec.hostname);
    hostname = pod.spec.hostname;
  }
  if (hostname.length > HOSTNAME_MAX_LEN) {
    // A hostname must not end with '-' or '.' once cut.
    const cut = hostname.slice(0, HOSTNAME_MAX_LEN).replace(/[-.]+$/, '');
    if (!cut) throw new Error(`hostname for pod ${JSON.stringify(name)} was invalid: ${JSON.stringify(hostname)}`);
    hostname = cut;
  }
  let domain = '';
  if (pod.spec?.subdomain) {
    checkLabel('Subdomain', pod.spec.subdomain);
    domain = `${pod.spec.subdomain}.${pod.metadata?.namespace ?? ''}.svc.${clusterDomain}`;
  }
  return { hostname, domain };
}

/** GetNodenameForKernel: the FQDN when setHostnameAsFQDN asks for it. */
function kernelHostname(pod: Pod, hostname: string, domain: string): string {
  if (!domain || !pod.spec?.setHostnameAsFQDN) return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > FQDN_MAX_LEN) {
    throw new Error(`failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${FQDN_MAX_LEN} characters is the max, ${fqdn.length} characters requested)`);
  }
  return fqdn;
}

/** <podLogsDir>/<namespace>_<name>_<uid> (BuildPodLogsDirectory). */
export function podLogsDirectory(cfg: Pick<KubeletConfig, 'podLogsDir'>, pod: Pod): string {
  return `${cfg.podLogsDir}/${pod.metadata?.namespace ?? ''}_${pod.metadata?.name ?? ''}_${pod.metadata?.uid ?? ''}`;
}

/** The resolver settings of a resolv.conf (parseResolvConf): nameservers accumulate, the last search and options lines win. */
export function parseResolvConf(text: string): Required<DNSConfig> {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const fields = line.split(/\s+/).filter(Boolean);
    if (fields.length === 0) continue;
    const [key, ...rest] = fields;
    if (key === 'nameserver' && rest[0]) servers.push(rest[0]);
    else if (key === 'search') searches = rest.filter((d) => d !== '.').map((d) => d.replace(/\.$/, ''));
    else if (key === 'options') options = rest;
  }
  return { servers, searches, options };
}

function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1';
}

/** mergeDNSOptions: options by name ("ndots:5", "rotate"); the pod's replace the base's of the same name. */
function mergeOptions(existing: string[], added: string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...existing, ...added]) byName.set(o.split(':', 1)[0]!, o);
  return [...byName.values()];
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/**
 * The node's resolver for dnsPolicy Default. Pods must not reach resolvers outside the machine, so
 * only the node's loopback nameservers are kept (none when it has none); searches and options stay.
 * resolvConf "" reads no file.
 */
export function hostDNS(cfg: Pick<KubeletConfig, 'resolvConf'>): Required<DNSConfig> {
  if (cfg.resolvConf === '') return { servers: [], searches: [], options: [] };
  let text = '';
  try {
    text = readFileSync(cfg.resolvConf ?? DEFAULT_RESOLV_CONF, 'utf8');
  } catch {
    // No resolv.conf: the pod gets no resolver, as with an empty file.
  }
  const parsed = parseResolvConf(text);
  return { ...parsed, servers: parsed.servers.filter(isLoopback) };
}

/**
 * CheckLimitsForResolvConf: why the node's resolv.conf would make pods' search lines be cut (room
 * is left for the three cluster domains), for a Warning on the node at start; undefined when it fits.
 */
export function checkLimitsForResolvConf(cfg: Pick<KubeletConfig, 'resolvConf' | 'clusterDomain'>): string | undefined {
  const path = cfg.resolvConf ?? DEFAULT_RESOLV_CONF;
  if (path === '') return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return `open ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`;
  }
  const { searches } = parseResolvConf(text);
  const limit = MAX_DNS_SEARCH_PATHS - (cfg.clusterDomain ? 3 : 0);
  if (searches.length > limit) return `Resolv.conf file '${path}' contains search line consisting of more than ${limit} domains!`;
  if (searches.some((d) => d.length > DNS1123_SUBDOMAIN_MAX_LEN)) return `Resolv.conf file "${path}" contains a search path which length is more than allowed ${DNS1123_SUBDOMAIN_MAX_LEN} chars!`;
  if (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) return `Resolv.conf file '${path}' contains search line which length is more than allowed ${MAX_DNS_SEARCH_LIST_CHARS} chars!`;
  return undefined;
}

/** A warning GetPodDNS records: on the pod, or (MissingClusterDNS's first copy) on the node. */
export interface DNSWarning {
  object: 'pod' | 'node';
  reason: 'MissingClusterDNS' | 'DNSConfigForming';
  message: string;
}

/**
 * GetPodDNS: the pod's resolver by dnsPolicy (None / ClusterFirst / ClusterFirstWithHostNet /
 * Default; ClusterFirst on the host network is Default), with spec.dnsConfig appended and the
 * result cut to the resolver's limits. ClusterFirst without cluster DNS servers falls back to
 * Default with a MissingClusterDNS warning, as upstream.
 */
export function podDNSConfig(
  pod: Pod,
  cfg: Pick<KubeletConfig, 'clusterDNS' | 'clusterDomain' | 'resolvConf'>,
  host: Required<DNSConfig> = hostDNS(cfg),
  warn: (w: DNSWarning) => void = () => {},
): DNSConfig {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  let type: 'None' | 'Cluster' | 'Host';
  if (policy === 'None') type = 'None';
  else if (policy === 'ClusterFirstWithHostNet') type = 'Cluster';
  else if (policy === 'ClusterFirst' && !pod.spec?.hostNetwork) type = 'Cluster';
  else type = 'Host';
  if (type === 'Cluster' && cfg.clusterDNS.length === 0) {
    const message = 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
    warn({ object: 'node', reason: 'MissingClusterDNS', message });
    warn({ object: 'pod', reason: 'MissingClusterDNS', message: `pod: ${JSON.stringify(formatPod(pod))}. ${message}` });
    type = 'Host';
  }

  let dns: Required<DNSConfig>;
  if (type === 'None') dns = { servers: [], searches: [], options: [] };
  else if (type === 'Host') {
    // resolvConf "" (no file): the resolver on the local machine, and no search path.
    dns = cfg.resolvConf === '' ? { servers: ['127.0.0.1'], searches: ['.'], options: [] } : { servers: [...host.servers], searches: [...host.searches], options: [...host.options] };
  } else {
    const ns = pod.metadata?.namespace ?? '';
    const d = cfg.clusterDomain;
    const clusterSearches = d ? [`${ns}.svc.${d}`, `svc.${d}`, d] : [];
    dns = { servers: [...cfg.clusterDNS], searches: unique([...clusterSearches, ...host.searches]), options: ['ndots:5'] };
  }

  const extra = pod.spec?.dnsConfig;
  if (extra) {
    dns.servers = unique([...dns.servers, ...(extra.nameservers ?? [])]);
    dns.searches = unique([...dns.searches, ...(extra.searches ?? [])]);
    const podOptions = (extra.options ?? []).map((o) => (o.value ? `${o.name ?? ''}:${o.value}` : (o.name ?? '')));
    dns.options = mergeOptions(dns.options, podOptions);
  }
  // containerd copies the node's own resolv.conf into a pod whose DNS config is empty, and the node's
  // resolvers may be off the machine: ndots:1 (the resolver's default) keeps the file the pod's own.
  if (type !== 'None' && dns.servers.length + dns.searches.length + dns.options.length === 0) dns.options = ['ndots:1'];
  return fitDNSLimits(dns, warn);
}

/** formDNSConfigFitsLimits: at most 3 nameservers; at most 32 search paths of at most 253 characters, 2048 in all. */
function fitDNSLimits(dns: Required<DNSConfig>, warn: (w: DNSWarning) => void): DNSConfig {
  let servers = dns.servers;
  if (servers.length > MAX_DNS_NAMESERVERS) {
    servers = servers.slice(0, MAX_DNS_NAMESERVERS);
    warn({ object: 'pod', reason: 'DNSConfigForming', message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(' ')}` });
  }
  let searches = dns.searches.slice(0, MAX_DNS_SEARCH_PATHS).filter((s) => s.length <= DNS1123_SUBDOMAIN_MAX_LEN);
  let cut = searches.length < dns.searches.length;
  // Whole domains come off the end until the line fits.
  while (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    searches = searches.slice(0, -1);
    cut = true;
  }
  if (cut) warn({ object: 'pod', reason: 'DNSConfigForming', message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')}` });
  return { servers, searches, options: dns.options };
}

/** MakePortMappings over every container: each port once (by name, or by protocol/host IP/ports when unnamed). */
export function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const seen = new Set<string>();
    for (const p of c.ports ?? []) {
      const protocol = (p.protocol ?? 'TCP') as Protocol;
      const key = p.name || `${protocol}-${p.hostIP ?? ''}:${p.containerPort}:${p.hostPort ?? 0}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const m: PortMapping = { protocol, container_port: p.containerPort, host_port: p.hostPort ?? 0 };
      if (p.hostIP) m.host_ip = p.hostIP;
      out.push(m);
    }
  }
  return out;
}

/** The labels every sandbox carries: the pod's own plus the kubelet's identity labels. */
export function sandboxLabels(pod: Pod): Record<string, string> {
  return {
    ...(pod.metadata?.labels ?? {}),
    [POD_NAME_LABEL]: pod.metadata?.name ?? '',
    [POD_NAMESPACE_LABEL]: pod.metadata?.namespace ?? '',
    [POD_UID_LABEL]: pod.metadata?.uid ?? '',
  };
}

/** utilsysctl.NormalizeName: "net/ipv4/ip_forward" → "net.ipv4.ip_forward" (dots in slashed names become slashes). */
export function normalizeSysctlName(name: string): string {
  const dot = name.indexOf('.');
  const slash = name.indexOf('/');
  if (slash < 0 || (dot >= 0 && dot < slash)) return name;
  return name.replace(/[./]/g, (ch) => (ch === '.' ? '/' : '.'));
}

function linuxConfig(pod: Pod, cfg: KubeletConfig): LinuxPodSandboxConfig {
  const linux: LinuxPodSandboxConfig = {
    cgroup_parent: podCgroupParent(podQOS(pod), pod.metadata?.uid ?? '', cfg.cgroupRoot),
    security_context: sandboxSecurityContext(pod, cfg),
    resources: sandboxResources(pod),
  };
  const sysctls = pod.spec?.securityContext?.sysctls ?? [];
  if (sysctls.length > 0) linux.sysctls = Object.fromEntries(sysctls.map((s) => [normalizeSysctlName(s.name), s.value]));
  const overhead = sandboxOverhead(pod);
  if (overhead) linux.overhead = overhead;
  return linux;
}

/**
 * generatePodSandboxConfig. Throws (with upstream's message) when the hostname or subdomain is
 * invalid. hostNetwork pods get no hostname: they keep the node's UTS namespace (runc refuses one).
 * The DNS warnings (MissingClusterDNS, DNSConfigForming) go to the recorder.
 */
export function generatePodSandboxConfig(pod: Pod, attempt: number, cfg: KubeletConfig, recorder?: EventRecorder): PodSandboxConfig {
  const warn = (w: DNSWarning) => {
    const ref = w.object === 'node' ? { kind: 'Node', name: cfg.nodeName, uid: cfg.nodeName } : podRef(pod);
    recorder?.event(ref, 'Warning', w.reason, w.message);
  };
  const config: PodSandboxConfig = {
    metadata: {
      name: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
      uid: pod.metadata?.uid ?? '',
      attempt,
    },
    labels: sandboxLabels(pod),
    annotations: { ...(pod.metadata?.annotations ?? {}) },
    dns_config: podDNSConfig(pod, cfg, hostDNS(cfg), warn),
    log_directory: podLogsDirectory(cfg, pod),
    port_mappings: portMappings(pod),
    linux: linuxConfig(pod, cfg),
  };
  if (!pod.spec?.hostNetwork) {
    const { hostname, domain } = podHostnameAndDomain(pod, cfg.clusterDomain);
    config.hostname = kernelHostname(pod, hostname, domain);
  }
  return config;
}
