// The cluster domain's records as CoreDNS's `kubernetes` plugin answers them (the default Corefile:
// `kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure; fallthrough in-addr.arpa ip6.arpa }`,
// TTL 5), following the Kubernetes DNS specification (schema 1.1.0):
//   <svc>.<ns>.svc.<zone>               A/AAAA: the ClusterIPs; headless: the ready endpoints' addresses
//   <host>.<svc>.<ns>.svc.<zone>        A/AAAA of the endpoint whose hostname (or dashed IP) is <host>
//   _<port>._<proto>.<svc>.<ns>.svc.<zone>  SRV per named port, targets as CoreDNS names them
//   <a-b-c-d>.<ns>.pod.<zone>           A (pods insecure: any address in an existing namespace)
//   <svc>.<ns>.svc.<zone> (ExternalName)  CNAME
//   reverse names of ClusterIPs and endpoint addresses  PTR
// Absent names get NXDOMAIN, names without records of the type NODATA, both with the zone's SOA.
// What the zone does not hold (other domains, unknown reverse names) falls through: to the
// configured upstream, or SERVFAIL as CoreDNS without a `forward` plugin answers.
import { isIP } from 'node:net';
import type { Answer, Question, SoaAnswer, SrvAnswer } from 'dns-packet';
import type { EndpointSlice, Service } from '../api/types.js';

export const defaultClusterDomain = 'cluster.local';
/** CoreDNS's kubernetes plugin default TTL. */
export const recordTtl = 5;
/** The TTL of the schema-version TXT record. */
const versionTtl = 28800;
/** The Kubernetes DNS specification's schema version, served as TXT at dns-version.<zone>. */
export const dnsSchemaVersion = '1.1.0';
/** Bound on CNAME chains inside the zone (CoreDNS's maxCnameChainLength). */
const maxCnameChain = 10;

/** What the resolver reads of the cluster: the informers' caches. */
export interface ClusterView {
  service(namespace: string, name: string): Service | undefined;
  /** The EndpointSlices labelled kubernetes.io/service-name=<name> in the namespace. */
  endpointSlices(namespace: string, serviceName: string): EndpointSlice[];
  /** Services one of whose ClusterIPs is ip. */
  servicesByIP(ip: string): Service[];
  /** EndpointSlices with an endpoint at ip. */
  endpointSlicesByIP(ip: string): EndpointSlice[];
  namespaceExists(namespace: string): boolean;
  /** Whether the caches have synced; until then absent names are SERVFAIL, not NXDOMAIN. */
  synced(): boolean;
  /** The SOA serial: Unix seconds of the last change seen. */
  serial(): number;
}

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface Resolution {
  rcode: Rcode;
  authoritative: boolean;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /** A CNAME's target outside the zone (an ExternalName) whose addresses an upstream may add. */
  chase?: string;
}

/** The name is not the cluster's: ask the upstream (or answer SERVFAIL without one). */
export const fallthrough = Symbol('fallthrough');

export interface ResolverOptions {
  view: ClusterView;
  /** The cluster domain (default cluster.local). */
  domain?: string;
  /** This server's own addresses, for ns.dns.<zone> when the kube-dns Service is not found. */
  localAddresses: readonly string[];
}

/** One backend record before it becomes RRs (CoreDNS's msg.Service). */
interface Entry {
  /** An IP address, or a name for a CNAME (ExternalName). */
  host: string;
  /** -1 when the endpoints carry no ports. */
  port: number;
  /** The owner name of the entry's own address: SRV target, the headless endpoint's name. */
  target: string;
}

interface Lookup {
  /** Set when the name does not exist (NXDOMAIN). */
  nameError?: true;
  entries: Entry[];
}

interface ParsedName {
  podOrSvc: 'pod' | 'svc' | '';
  namespace: string;
  service: string;
  endpoint: string;
  port: string;
  protocol: string;
}

const noSuchName: Lookup = { nameError: true, entries: [] };
const noRecords: Lookup = { entries: [] };

const stripUnderscore = (s: string) => (s.startsWith('_') ? s.slice(1) : s);

/** The endpoint's DNS label: its hostname, else its address with dashes (CoreDNS's endpointHostname). */
export function endpointHostname(hostname: string | undefined, ip: string): string {
  if (hostname) return hostname;
  if (ip.includes('.')) return ip.replaceAll('.', '-');
  const dashed = ip.replaceAll(':', '-');
  return dashed.endsWith('-') ? dashed + '0' : dashed;
}

/** The address a reverse name stands for, or undefined (CoreDNS's ExtractAddressFromReverse). */
export function addressFromReverse(name: string): string | undefined {
  if (name.endsWith('.in-addr.arpa')) {
    const labels = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (labels.length !== 4 || !labels.every((l) => /^\d{1,3}$/.test(l) && Number(l) <= 255)) return undefined;
    return labels.reverse().map(Number).join('.');
  }
  if (name.endsWith('.ip6.arpa')) {
    const nibbles = name.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || !nibbles.every((n) => /^[0-9a-f]$/.test(n))) return undefined;
    const hex = nibbles.reverse().join('');
    return canonicalIP(hex.match(/.{4}/g)!.join(':'));
  }
  return undefined;
}

/** The shortest form of an IPv6 address (as Go's net.IP.String, which Services and slices use); IPv4 as is. */
export function canonicalIP(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

export class Resolver {
  private readonly view: ClusterView;
  private readonly zone: string;

  constructor(private readonly opts: ResolverOptions) {
    this.view = opts.view;
    this.zone = (opts.domain ?? defaultClusterDomain).toLowerCase().replace(/\.$/, '');
  }

  /** The answer to one question, or `fallthrough` for names the cluster does not hold. */
  resolve(question: Question): Resolution | typeof fallthrough {
    const qname = question.name.replace(/\.$/, '');
    const name = qname.toLowerCase();
    if (name === this.zone || name.endsWith(`.${this.zone}`)) {
      return this.resolveInZone(qname, name, question.type);
    }
    if (name.endsWith('.in-addr.arpa') || name.endsWith('.ip6.arpa')) {
      // Only PTR of a known address is answered; everything else in the reverse zones falls through.
      if (question.type !== 'PTR') return fallthrough;
      const targets = this.reverse(name);
      if (targets.length === 0) return fallthrough;
      return this.answer(targets.map((t) => ({ name: qname, type: 'PTR', class: 'IN', ttl: recordTtl, data: t })));
    }
    return fallthrough;
  }

  private resolveInZone(qname: string, name: string, type: Question['type']): Resolution {
    // The zone as the query spelt it: CoreDNS keeps the query's case in the SOA's owner name.
    const zone = qname.slice(qname.length - this.zone.length);
    let records: Answer[] = [];
    let additionals: Answer[] = [];
    let lookup: Lookup;
    const chase: string[] = [];
    switch (type) {
      case 'A':
      case 'AAAA':
        lookup = this.services(name);
        if (!lookup.nameError) records = this.addresses(qname, type, lookup.entries, [name], chase);
        break;
      case 'TXT':
        if (name === `dns-version.${this.zone}`) {
          lookup = noRecords;
          records = [{ name: qname, type: 'TXT', class: 'IN', ttl: versionTtl, data: dnsSchemaVersion }];
        } else {
          lookup = this.records(name).entries.length > 0 ? noRecords : noSuchName;
        }
        break;
      case 'SRV':
        lookup = this.services(name);
        if (!lookup.nameError) [records, additionals] = this.srv(qname, lookup.entries);
        break;
      case 'PTR':
        lookup = this.records(name);
        break;
      case 'CNAME': {
        lookup = this.services(name);
        const first = lookup.entries[0];
        if (first && isIP(first.host) === 0) records = [{ name: qname, type: 'CNAME', class: 'IN', ttl: recordTtl, data: first.host }];
        break;
      }
      case 'SOA':
        lookup = noRecords;
        if (name === this.zone) records = [this.soa(zone)];
        break;
      case 'AXFR':
      case 'IXFR':
        return { rcode: 'REFUSED', authoritative: false, answers: [], authorities: [], additionals: [] };
      case 'NS':
        if (name === this.zone) {
          lookup = noRecords;
          const ns = this.nameserver();
          records = [{ name: qname, type: 'NS', class: 'IN', ttl: recordTtl, data: ns.name }];
          additionals = ns.addresses.map((a) => addressRecord(ns.name, a));
        } else {
          lookup = this.services(name);
        }
        break;
      default:
        // Whether the name exists decides NODATA or NXDOMAIN (CoreDNS's fake A lookup).
        lookup = this.services(name);
    }
    if (lookup.nameError) {
      return { rcode: this.view.synced() ? 'NXDOMAIN' : 'SERVFAIL', authoritative: true, answers: [], authorities: [this.soa(zone)], additionals: [] };
    }
    if (records.length === 0) return { rcode: 'NOERROR', authoritative: true, answers: [], authorities: [this.soa(zone)], additionals: [] };
    return { ...this.answer(records), additionals, ...(chase[0] ? { chase: chase[0] } : {}) };
  }

  private answer(answers: Answer[]): Resolution {
    return { rcode: 'NOERROR', authoritative: true, answers, authorities: [], additionals: [] };
  }

  private soa(zone: string): SoaAnswer {
    return {
      name: zone,
      type: 'SOA',
      class: 'IN',
      ttl: recordTtl,
      data: { mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: this.view.serial() >>> 0, refresh: 7200, retry: 1800, expire: 86400, minimum: recordTtl },
    };
  }

  /** CoreDNS's Services(): ns.dns.<zone> is the name server; the rest are the cluster's records. */
  private services(name: string): Lookup {
    if (name === `ns.dns.${this.zone}`) {
      return { entries: this.nameserver().addresses.map((host) => ({ host, port: 0, target: name })) };
    }
    return this.records(name);
  }

  /** The kube-dns Service's ClusterIPs (as CoreDNS finds its own Service), else this server's addresses. */
  private nameserver(): { name: string; addresses: string[] } {
    const ips = clusterIPs(this.view.service('kube-system', 'kube-dns'));
    if (ips.length > 0) return { name: `kube-dns.kube-system.svc.${this.zone}`, addresses: ips };
    return { name: `ns.dns.${this.zone}`, addresses: [...this.opts.localAddresses] };
  }

  /** CoreDNS's parseRequest: undefined for a name the zone cannot hold. */
  private parse(name: string): ParsedName | undefined {
    const base = name === this.zone ? '' : name.slice(0, -(this.zone.length + 1));
    const r: ParsedName = { podOrSvc: '', namespace: '', service: '', endpoint: '', port: '', protocol: '' };
    if (base === '' || base === 'svc' || base === 'pod') return r;
    const segs = base.split('.');
    let last = segs.length - 1;
    const kind = segs[last--]!;
    if (kind !== 'svc' && kind !== 'pod') return undefined;
    r.podOrSvc = kind;
    if (last < 0) return r;
    r.namespace = segs[last--]!;
    if (last < 0) return r;
    r.service = segs[last--]!;
    if (last < 0) return r;
    if (last === 0) r.endpoint = segs[0]!;
    else if (last === 1) {
      r.protocol = stripUnderscore(segs[1]!);
      r.port = stripUnderscore(segs[0]!);
    } else return undefined;
    return r;
  }

  /** CoreDNS's Records(): the entries for a forward name. */
  private records(name: string): Lookup {
    const r = this.parse(name);
    if (!r) return noSuchName;
    if (r.podOrSvc === '') return noRecords;
    if (!this.view.namespaceExists(r.namespace)) return noSuchName;
    return r.podOrSvc === 'pod' ? this.pod(r) : this.service(r);
  }

  private pod(r: ParsedName): Lookup {
    if (r.service === '') return noRecords;
    const label = r.service;
    const ip = label.split('-').length === 4 && !label.includes('--') ? label.replaceAll('-', '.') : label.replaceAll('-', ':');
    if (isIP(ip) === 0) return noSuchName;
    return { entries: [{ host: canonicalIP(ip), port: 0, target: `${label}.${r.namespace}.pod.${this.zone}` }] };
  }

  private service(r: ParsedName): Lookup {
    if (r.service === '') return noRecords;
    const svc = this.view.service(r.namespace, r.service);
    if (!svc) return noSuchName;
    const spec = svc.spec ?? {};
    const svcName = `${r.service}.${r.namespace}.svc.${this.zone}`;
    if (spec.type === 'ExternalName') {
      // No endpoints and no SRV pseudo-names under an ExternalName; an address is no CNAME target.
      if (r.endpoint || r.port || r.protocol || !spec.externalName || isIP(spec.externalName) !== 0) return noSuchName;
      return { entries: [{ host: spec.externalName.replace(/\.$/, ''), port: 0, target: svcName }] };
    }
    const matches = (p: { name?: string; protocol?: string }) =>
      (r.port === '' || r.port === (p.name ?? '').toLowerCase()) && (r.protocol === '' || r.protocol === (p.protocol ?? 'TCP').toLowerCase());
    const entries: Entry[] = [];
    if (spec.clusterIP === 'None' || r.endpoint !== '') {
      const publishNotReady = spec.publishNotReadyAddresses === true;
      for (const slice of this.view.endpointSlices(r.namespace, r.service)) {
        if (slice.addressType === 'FQDN') continue;
        const ports = slice.ports?.length ? slice.ports : [{ port: -1 }];
        for (const ep of slice.endpoints ?? []) {
          if (!publishNotReady && ep.conditions?.ready === false) continue;
          for (const raw of ep.addresses ?? []) {
            const ip = canonicalIP(raw);
            const host = endpointHostname(ep.hostname, ip);
            if (r.endpoint !== '' && r.endpoint !== host.toLowerCase()) continue;
            for (const p of ports) {
              if (!matches(p)) continue;
              entries.push({ host: ip, port: p.port ?? -1, target: `${host}.${svcName}` });
            }
          }
        }
      }
      // As CoreDNS: a headless Service without ready endpoints is NXDOMAIN.
      return entries.length > 0 ? { entries } : noSuchName;
    }
    for (const p of spec.ports ?? []) {
      if (!matches(p)) continue;
      for (const ip of clusterIPs(svc)) entries.push({ host: ip, port: p.port, target: svcName });
    }
    return entries.length > 0 ? { entries } : noSuchName;
  }

  /** A/AAAA records from entries: addresses of the family, CNAMEs followed inside the zone; targets outside it go to chase. */
  private addresses(owner: string, type: 'A' | 'AAAA', entries: Entry[], chain: string[], chase: string[]): Answer[] {
    const family = type === 'A' ? 4 : 6;
    const out: Answer[] = [];
    const seen = new Set<string>();
    for (const e of entries) {
      const f = isIP(e.host);
      if (f === family) {
        if (seen.has(e.host)) continue;
        seen.add(e.host);
        out.push({ name: owner, type, class: 'IN', ttl: recordTtl, data: e.host });
      } else if (f === 0) {
        const target = e.host.toLowerCase();
        if (chain.includes(target) || chain.length > maxCnameChain) continue;
        const cname: Answer = { name: owner, type: 'CNAME', class: 'IN', ttl: recordTtl, data: e.host };
        if (target === this.zone || target.endsWith(`.${this.zone}`)) {
          // Inside the zone: the CNAME only with what it leads to.
          const next = this.services(target);
          const more = next.nameError ? [] : this.addresses(e.host, type, next.entries, [...chain, target], chase);
          if (more.length > 0) out.push(cname, ...more);
        } else {
          out.push(cname);
          chase.push(e.host);
        }
      }
    }
    return out;
  }

  /** SRV records, weights shared out as CoreDNS does (100 split evenly), targets' addresses as additionals. */
  private srv(owner: string, entries: Entry[]): [Answer[], Answer[]] {
    const usable = entries.filter((e) => isIP(e.host) !== 0);
    const weight = Math.max(1, Math.floor(100 / Math.max(1, usable.length)));
    const records: SrvAnswer[] = [];
    const additionals: Answer[] = [];
    const seen = new Set<string>();
    for (const e of usable) {
      if (e.port === -1) continue;
      const srvKey = `${e.target}/${e.port}`;
      if (!seen.has(srvKey)) {
        seen.add(srvKey);
        records.push({ name: owner, type: 'SRV', class: 'IN', ttl: recordTtl, data: { priority: 0, weight, port: e.port, target: e.target } });
      }
      const addrKey = `${e.target}@${e.host}`;
      if (!seen.has(addrKey)) {
        seen.add(addrKey);
        additionals.push(addressRecord(e.target, e.host));
      }
    }
    return [records, additionals];
  }

  /** PTR targets for a reverse name: the Service whose ClusterIP it is, else every endpoint at it. */
  private reverse(name: string): string[] {
    const ip = addressFromReverse(name);
    if (!ip) return [];
    const svc = this.view.servicesByIP(ip)[0];
    if (svc) return [`${svc.metadata?.name}.${svc.metadata?.namespace}.svc.${this.zone}`];
    const targets = new Set<string>();
    for (const slice of this.view.endpointSlicesByIP(ip)) {
      const service = slice.metadata?.labels?.['kubernetes.io/service-name'];
      if (!service) continue;
      const publishNotReady = this.view.service(slice.metadata?.namespace ?? '', service)?.spec?.publishNotReadyAddresses === true;
      for (const ep of slice.endpoints ?? []) {
        if (!publishNotReady && ep.conditions?.ready === false) continue;
        if (!(ep.addresses ?? []).some((a) => canonicalIP(a) === ip)) continue;
        targets.add(`${endpointHostname(ep.hostname, ip)}.${service}.${slice.metadata?.namespace}.svc.${this.zone}`);
      }
    }
    return [...targets];
  }
}

function addressRecord(owner: string, ip: string): Answer {
  return { name: owner, type: isIP(ip) === 6 ? 'AAAA' : 'A', class: 'IN', ttl: recordTtl, data: ip };
}

/** A Service's ClusterIPs (none for headless and ExternalName Services). */
export function clusterIPs(svc: Service | undefined): string[] {
  const spec = svc?.spec;
  if (!spec || spec.type === 'ExternalName') return [];
  const ips = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
  return ips.filter((ip) => ip !== 'None' && ip !== '').map(canonicalIP);
}
