// The Pod Security Standards' checks, as pod-security-admission's policy package has them at its
// latest version (1.33): each looks at a pod's metadata and spec and says why it breaks the level.
// Their order is upstream's (baseline checks, then at baseline the ones restricted replaces, else
// the restricted ones), so aggregated messages read the same.
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type { Container, EphemeralContainer, PodSecurityContext, PodSpec, SecurityContext, Volume } from 'kubernetes-types/core/v1.js';

export type Level = 'privileged' | 'baseline' | 'restricted';

export interface CheckResult {
  /** Short, e.g. `privileged`. */
  reason: string;
  /** Which fields and containers, e.g. `container "c" must not set securityContext.privileged=true`. */
  detail: string;
}

type Check = (meta: ObjectMeta, spec: PodSpec) => CheckResult | undefined;

const pluralize = (singular: string, plural: string, n: number) => (n === 1 ? singular : plural);
const joinQuote = (items: readonly string[]) => items.map((s) => JSON.stringify(s)).join(', ');
const sorted = (items: Iterable<string>) => [...new Set(items)].sort();
/** `container "a"` / `containers "a", "b"`. */
const containersPhrase = (names: readonly string[]) => `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;

/** Init containers, then containers, then ephemeral containers, as upstream's visitor. */
function containers(spec: PodSpec): (Container | EphemeralContainer)[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

/** The names of the containers for which `bad` holds. */
function badContainers(spec: PodSpec, bad: (sc: SecurityContext | undefined) => boolean): string[] {
  return containers(spec)
    .filter((c) => bad(c.securityContext))
    .map((c) => c.name);
}

/** "pod and containers ..." style setters, as upstream joins them. */
function setters(pod: boolean, names: readonly string[]): string[] {
  return [...(pod ? ['pod'] : []), ...(names.length ? [containersPhrase(names)] : [])];
}

const isWindows = (spec: PodSpec) => spec.os?.name === 'windows';

const windowsHostProcess: Check = (_m, spec) => {
  const bad = badContainers(spec, (sc) => sc?.windowsOptions?.hostProcess === true);
  const who = setters(spec.securityContext?.windowsOptions?.hostProcess === true, bad);
  if (!who.length) return undefined;
  return { reason: 'hostProcess', detail: `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

const hostNamespaces: Check = (_m, spec) => {
  const ns = (['hostIPC', 'hostNetwork', 'hostPID'] as const).filter((k) => spec[k] === true);
  return ns.length ? { reason: 'host namespaces', detail: ns.join(', ') } : undefined;
};

const privileged: Check = (_m, spec) => {
  const bad = badContainers(spec, (sc) => sc?.privileged === true);
  return bad.length ? { reason: 'privileged', detail: `${containersPhrase(bad)} must not set securityContext.privileged=true` } : undefined;
};

const allowedCapabilities = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

const capabilitiesBaseline: Check = (_m, spec) => {
  const caps: string[] = [];
  const bad = badContainers(spec, (sc) => {
    const extra = (sc?.capabilities?.add ?? []).filter((c) => !allowedCapabilities.has(c));
    caps.push(...extra);
    return extra.length > 0;
  });
  if (!bad.length) return undefined;
  return { reason: 'non-default capabilities', detail: `${containersPhrase(bad)} must not include ${joinQuote(sorted(caps))} in securityContext.capabilities.add` };
};

const hostPathVolumes: Check = (_m, spec) => {
  const names = (spec.volumes ?? []).filter((v) => v.hostPath).map((v) => v.name);
  return names.length ? { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}` } : undefined;
};

const hostPorts: Check = (_m, spec) => {
  const ports: string[] = [];
  const bad = containers(spec)
    .filter((c) => {
      const used = (c.ports ?? []).filter((p) => p.hostPort).map((p) => String(p.hostPort));
      ports.push(...used);
      return used.length > 0;
    })
    .map((c) => c.name);
  if (!bad.length) return undefined;
  const unique = sorted(ports);
  return {
    reason: 'hostPort',
    detail: `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
  };
};

const appArmorAnnotationPrefix = 'container.apparmor.security.beta.kubernetes.io/';
const allowedAppArmorType = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
const allowedAppArmorAnnotation = (v: string) => v === '' || v === 'runtime/default' || v.startsWith('localhost/');

const appArmorProfile: Check = (meta, spec) => {
  const values = new Set<string>();
  const podType = spec.securityContext?.appArmorProfile?.type;
  const podBad = spec.securityContext?.appArmorProfile !== undefined && !allowedAppArmorType(podType);
  if (podBad) values.add(podType ?? '');
  const bad = badContainers(spec, (sc) => {
    const p = sc?.appArmorProfile;
    if (p === undefined || allowedAppArmorType(p.type)) return false;
    values.add(p.type);
    return true;
  });
  const who = setters(podBad, bad);
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(appArmorAnnotationPrefix) && !allowedAppArmorAnnotation(v))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  if (annotations.length) who.push(pluralize('annotation', 'annotations', annotations.length));
  if (!who.length) return undefined;
  const badValues = [...sorted(values), ...annotations];
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', badValues.length),
    detail: `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(badValues)}`,
  };
};

const allowedSELinuxTypes = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);

const seLinuxOptions: Check = (_m, spec) => {
  const types = new Set<string>();
  let user = false;
  let role = false;
  const bad = (sc: PodSecurityContext | SecurityContext | undefined) => {
    const o = sc?.seLinuxOptions;
    if (!o) return false;
    let invalid = false;
    if (!allowedSELinuxTypes.has(o.type ?? '')) {
      types.add(o.type ?? '');
      invalid = true;
    }
    if (o.user) invalid = user = true;
    if (o.role) invalid = role = true;
    return invalid;
  };
  const who = setters(bad(spec.securityContext), badContainers(spec, bad));
  if (!who.length) return undefined;
  // Upstream only names user and role alongside a bad type.
  const data: string[] = [];
  if (types.size) {
    data.push(`${pluralize('type', 'types', types.size)} ${joinQuote(sorted(types))}`);
    if (user) data.push('user may not be set');
    if (role) data.push('role may not be set');
  }
  return { reason: 'seLinuxOptions', detail: `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
};

const procMount: Check = (_m, spec) => {
  const types = new Set<string>();
  const bad = badContainers(spec, (sc) => {
    if (sc?.procMount === undefined || sc.procMount === 'Default') return false;
    types.add(sc.procMount);
    return true;
  });
  if (!bad.length) return undefined;
  return { reason: 'procMount', detail: `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sorted(types))}` };
};

const seccompProfileBaseline: Check = (_m, spec) => {
  const values = new Set<string>();
  const unconfined = (sc: PodSecurityContext | SecurityContext | undefined) => {
    if (sc?.seccompProfile?.type !== 'Unconfined') return false;
    values.add('Unconfined');
    return true;
  };
  const who = setters(unconfined(spec.securityContext), badContainers(spec, unconfined));
  if (!who.length) return undefined;
  return { reason: 'seccompProfile', detail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sorted(values))}` };
};

/** The namespaced, isolated sysctls the baseline level allows (1.32's list). */
const allowedSysctls = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
]);

const sysctls: Check = (_m, spec) => {
  const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !allowedSysctls.has(n));
  return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
};

const allowPrivilegeEscalation: Check = (_m, spec) => {
  if (isWindows(spec)) return undefined;
  const bad = badContainers(spec, (sc) => sc?.allowPrivilegeEscalation !== false);
  if (!bad.length) return undefined;
  return { reason: 'allowPrivilegeEscalation != false', detail: `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false` };
};

const capabilitiesRestricted: Check = (_m, spec) => {
  if (isWindows(spec)) return undefined;
  const caps: string[] = [];
  const missingDropAll = badContainers(spec, (sc) => !(sc?.capabilities?.drop ?? []).includes('ALL'));
  const adding = badContainers(spec, (sc) => {
    const extra = (sc?.capabilities?.add ?? []).filter((c) => c !== 'NET_BIND_SERVICE');
    caps.push(...extra);
    return extra.length > 0;
  });
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length) details.push(`${containersPhrase(adding)} must not include ${joinQuote(sorted(caps))} in securityContext.capabilities.add`);
  return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
};

const allowedVolumeSources = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'] as const;
const restrictedVolumeSources = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
] as const;

const restrictedVolumes: Check = (_m, spec) => {
  const names: string[] = [];
  const types = new Set<string>();
  for (const v of spec.volumes ?? []) {
    const source = v as Volume & Record<string, unknown>;
    if (allowedVolumeSources.some((k) => source[k] != null)) continue;
    names.push(v.name);
    types.add(v.hostPath ? 'hostPath' : (restrictedVolumeSources.find((k) => source[k] != null) ?? 'unknown'));
  }
  if (!names.length) return undefined;
  const unique = sorted(types);
  return {
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('restricted volume type', 'restricted volume types', unique.length)} ${joinQuote(unique)}`,
  };
};

const runAsNonRoot: Check = (_m, spec) => {
  const podValue = spec.securityContext?.runAsNonRoot;
  const explicit = badContainers(spec, (sc) => sc?.runAsNonRoot === false);
  const who = setters(podValue === false, explicit);
  if (who.length) return { reason: 'runAsNonRoot != true', detail: `${who.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  const implicit = podValue === true ? [] : badContainers(spec, (sc) => sc?.runAsNonRoot === undefined);
  if (!implicit.length) return undefined;
  return { reason: 'runAsNonRoot != true', detail: `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true` };
};

const runAsUser: Check = (_m, spec) => {
  const who = setters(spec.securityContext?.runAsUser === 0, badContainers(spec, (sc) => sc?.runAsUser === 0));
  return who.length ? { reason: 'runAsUser=0', detail: `${who.join(' and ')} must not set runAsUser=0` } : undefined;
};

const validSeccomp = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';

const seccompProfileRestricted: Check = (_m, spec) => {
  if (isWindows(spec)) return undefined;
  const values = new Set<string>();
  const podSet = spec.securityContext?.seccompProfile !== undefined;
  const podType = spec.securityContext?.seccompProfile?.type;
  const podBad = podSet && !validSeccomp(podType);
  if (podBad) values.add(podType ?? '');
  const explicit = badContainers(spec, (sc) => {
    if (sc?.seccompProfile === undefined || validSeccomp(sc.seccompProfile.type)) return false;
    values.add(sc.seccompProfile.type);
    return true;
  });
  const who = setters(podBad, explicit);
  if (who.length) return { reason: 'seccompProfile', detail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sorted(values))}` };
  const implicit = podSet && !podBad ? [] : badContainers(spec, (sc) => sc?.seccompProfile === undefined);
  if (!implicit.length) return undefined;
  return { reason: 'seccompProfile', detail: `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
};

/** Checked at baseline and restricted. */
const baselineChecks: Check[] = [appArmorProfile, hostNamespaces, hostPorts, privileged, procMount, seLinuxOptions, sysctls, windowsHostProcess];
/** Checked at baseline only: restricted has stricter versions of them. */
const overlappingBaselineChecks: Check[] = [capabilitiesBaseline, hostPathVolumes, seccompProfileBaseline];
const restrictedChecks: Check[] = [allowPrivilegeEscalation, capabilitiesRestricted, restrictedVolumes, runAsNonRoot, runAsUser, seccompProfileRestricted];

/** Every way the pod breaks the level, in upstream's order. */
export function evaluatePod(level: Level, meta: ObjectMeta, spec: PodSpec): CheckResult[] {
  if (level === 'privileged') return [];
  const checks = [...baselineChecks, ...(level === 'baseline' ? overlappingBaselineChecks : restrictedChecks)];
  return checks.map((check) => check(meta, spec)).filter((r): r is CheckResult => r !== undefined);
}

/** `reason (detail), reason (detail)`, as upstream's AggregateCheckResult.ForbiddenDetail. */
export const forbiddenDetail = (results: readonly CheckResult[]) => results.map((r) => (r.detail ? `${r.reason} (${r.detail})` : r.reason)).join(', ');

/** `reason, reason`, as upstream's AggregateCheckResult.ForbiddenReason. */
export const forbiddenReason = (results: readonly CheckResult[]) => results.map((r) => r.reason).join(', ');
