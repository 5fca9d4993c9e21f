// ServiceAccount, as upstream's plugin/pkg/admission/serviceaccount: a new pod runs as the
// `default` service account unless it names one; the one it names must exist (the default one is
// waited for a moment, since its controller makes it just after the namespace); and unless the pod
// or its service account opts out, every container and init container gets the projected
// `kube-api-access-<random>` volume (a bound token, the cluster CA and the namespace) mounted
// read-only at /var/run/secrets/kubernetes.io/serviceaccount. The pod also inherits the service
// account's imagePullSecrets when it has none.
import { randomInt } from 'node:crypto';
import type { Pod, ProjectedVolumeSource, ServiceAccount, VolumeMount } from 'kubernetes-types/core/v1.js';
import { hasStatusCode } from '../../../api/errors.js';
import { realClock, type Clock } from '../../../util/clock.js';
import { warnOnlyBoundTokenExpirationSeconds } from '../../authn/satoken.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'ServiceAccount';

export const defaultServiceAccountName = 'default';
export const serviceAccountVolumeName = 'kube-api-access';
export const defaultAPITokenMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
export const rootCAConfigMapName = 'kube-root-ca.crt';
const mirrorPodAnnotation = 'kubernetes.io/config.mirror';
/** The default service account is looked up this many times before the pod is refused. */
const defaultServiceAccountAttempts = 10;
/** names.SimpleNameGenerator's alphabet (no vowels, no look-alikes) and suffix length. */
const nameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const nameSuffixLength = 5;

/** The projected volume's source (upstream's TokenVolumeSource). */
export function tokenVolumeSource(): ProjectedVolumeSource {
  return {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: warnOnlyBoundTokenExpirationSeconds } },
      { configMap: { name: rootCAConfigMapName, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

export interface ServiceAccountAdmissionOptions {
  lookups: Pick<AdmissionLookups, 'get'>;
  clock?: Clock;
  /** The volume name's random suffix (tests fix it). */
  randomSuffix?: () => string;
}

export class ServiceAccountAdmission implements MutatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly clock: Clock;
  private readonly randomSuffix: () => string;

  constructor(private readonly opts: ServiceAccountAdmissionOptions) {
    this.clock = opts.clock ?? realClock;
    this.randomSuffix = opts.randomSuffix ?? (() => Array.from({ length: nameSuffixLength }, () => nameAlphabet[randomInt(nameAlphabet.length)]).join(''));
  }

  /** Only new pods are changed (upstream leaves updates to its validation of ephemeral containers). */
  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.subresource === '' && a.resource.group === '' && a.resource.resource === 'pods';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as Pod | undefined;
    if (!pod?.spec || pod.metadata?.annotations?.[mirrorPodAnnotation] !== undefined) return;
    const spec = pod.spec;
    if (!spec.serviceAccountName) {
      spec.serviceAccountName = defaultServiceAccountName;
      a.timeline?.mutated('spec.serviceAccountName');
    }
    const sa = await this.serviceAccount(a.namespace, spec.serviceAccountName);
    if (!sa) throw admissionForbidden(a, `error looking up service account ${a.namespace}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`);
    if (shouldAutomount(sa, pod)) this.mountServiceAccountToken(pod, a);
    if (!spec.imagePullSecrets?.length && sa.imagePullSecrets?.length) {
      spec.imagePullSecrets = sa.imagePullSecrets.map((s) => ({ name: s.name }));
      a.timeline?.mutated('spec.imagePullSecrets');
    }
  }

  /** The service account, looked up again a few times when it is the default one its controller is about to make. */
  private async serviceAccount(namespace: string, name: string): Promise<ServiceAccount | undefined> {
    const attempts = name === defaultServiceAccountName ? defaultServiceAccountAttempts : 1;
    const retryMs = 100 + randomInt(100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await this.clock.sleep(retryMs);
      try {
        const sa = await this.opts.lookups.get('serviceaccounts', namespace, name);
        if (sa) return sa;
      } catch (err) {
        if (!hasStatusCode(err, 404)) throw err;
      }
    }
    return undefined;
  }

  private mountServiceAccountToken(pod: Pod, a: AdmissionAttributes): void {
    const spec = pod.spec!;
    const volumes = spec.volumes ?? [];
    const existing = volumes.find((v) => v.name.startsWith(`${serviceAccountVolumeName}-`));
    let volumeName = existing?.name;
    if (!volumeName) {
      const names = new Set(volumes.map((v) => v.name));
      do volumeName = `${serviceAccountVolumeName}-${this.randomSuffix()}`;
      while (names.has(volumeName));
    }
    const mount: VolumeMount = { name: volumeName, readOnly: true, mountPath: defaultAPITokenMountPath };
    // A container that already mounts something at the token path keeps it.
    const addMount = (field: 'initContainers' | 'containers'): boolean => {
      let added = false;
      (spec[field] ?? []).forEach((c, i) => {
        if ((c.volumeMounts ?? []).some((m) => m.mountPath === defaultAPITokenMountPath)) return;
        c.volumeMounts = [...(c.volumeMounts ?? []), { ...mount }];
        a.timeline?.mutated(`spec.${field}[${i}].volumeMounts`);
        added = true;
      });
      return added;
    };
    const needsVolume = [addMount('initContainers'), addMount('containers')].some(Boolean);
    if (!existing && needsVolume) {
      spec.volumes = [...volumes, { name: volumeName, projected: tokenVolumeSource() }];
      a.timeline?.mutated('spec.volumes');
    }
  }
}

/** The pod's automountServiceAccountToken wins, then its service account's; default true. */
function shouldAutomount(sa: ServiceAccount, pod: Pod): boolean {
  return pod.spec?.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
}
