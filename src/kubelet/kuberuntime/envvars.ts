// Service links, as upstream's pkg/kubelet/envvars and the kubelet's getServiceEnvVarMap: every
// Service with a ClusterIP in the pod's namespace (when spec.enableServiceLinks, the default) and,
// always, the `kubernetes` Service of `default`, as <NAME>_SERVICE_HOST / _SERVICE_PORT[_<PORT>]
// plus Docker's link variables (<NAME>_PORT, <NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]).
import type { Service } from '../../api/types.js';

/** What the kubelet knows of Services: its informer's cache (upstream's serviceLister). */
export interface ServiceSource {
  /** False until the first list arrived: env built before that would miss KUBERNETES_SERVICE_HOST. */
  hasSynced(): boolean;
  list(): Service[];
}

/** The namespace and names whose links every pod gets (upstream's masterServiceNamespace, masterServices). */
const MASTER_SERVICE_NAMESPACE = 'default';
const MASTER_SERVICES = new Set(['kubernetes']);

/** IsServiceIPSet: a ClusterIP that is neither empty nor None (headless, ExternalName have none). */
export function isServiceIPSet(service: Service): boolean {
  const ip = service.spec?.clusterIP;
  return !!ip && ip !== 'None';
}

/** makeEnvVariableName: upper case, '.' and '-' as '_', a leading digit prefixed with '_'. */
export function envVariableName(name: string): string {
  const v = name.replace(/[.-]/g, '_').toUpperCase();
  return /^[0-9]/.test(v) ? `_${v}` : v;
}

/** FromServices: the variables of each Service with a ClusterIP, in the given order. */
export function serviceEnvVars(services: Service[]): [string, string][] {
  const out: [string, string][] = [];
  for (const svc of services) {
    const ports = svc.spec?.ports ?? [];
    if (!isServiceIPSet(svc) || ports.length === 0) continue;
    const ip = svc.spec!.clusterIP!;
    const prefix = envVariableName(svc.metadata?.name ?? '');
    out.push([`${prefix}_SERVICE_HOST`, ip]);
    out.push([`${prefix}_SERVICE_PORT`, String(ports[0]!.port)]);
    // Only the first port may be unnamed (validation), so every other port has its own variable.
    for (const p of ports) if (p.name) out.push([`${prefix}_SERVICE_PORT_${envVariableName(p.name)}`, String(p.port)]);
    ports.forEach((p, i) => {
      const proto = (p.protocol ?? 'TCP').toLowerCase();
      const url = `${proto}://${ip}:${p.port}`;
      // Docker gives the first port the bare <NAME>_PORT too.
      if (i === 0) out.push([`${prefix}_PORT`, url]);
      const portPrefix = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      out.push([portPrefix, url], [`${portPrefix}_PROTO`, proto], [`${portPrefix}_PORT`, String(p.port)], [`${portPrefix}_ADDR`, ip]);
    });
  }
  return out;
}

/**
 * getServiceEnvVarMap: the links a pod in namespace ns sees. A Service of the pod's own namespace
 * named like a master service replaces the master one; Services are taken by name order, so a
 * collision of variable names (a-b and a.b) always resolves the same way.
 */
export function serviceEnvVarMap(services: Service[], ns: string, enableServiceLinks: boolean): Map<string, string> {
  const byName = new Map<string, Service>();
  for (const svc of services) {
    if (!isServiceIPSet(svc)) continue;
    const name = svc.metadata?.name ?? '';
    const svcNs = svc.metadata?.namespace ?? '';
    if (svcNs === MASTER_SERVICE_NAMESPACE && MASTER_SERVICES.has(name)) {
      if (!byName.has(name)) byName.set(name, svc);
    } else if (svcNs === ns && enableServiceLinks) {
      byName.set(name, svc);
    }
  }
  const ordered = [...byName.keys()].sort().map((n) => byName.get(n)!);
  return new Map(serviceEnvVars(ordered));
}
