// The files of configMap, secret, downwardAPI and projected volumes (upstream's MakePayload and
// CollectData in pkg/volume/{configmap,secret,downwardapi,projected}), ready for the atomic writer.
import type { ConfigMap, Pod, Secret } from '../../api/types.js';
import type {
  ConfigMapVolumeSource,
  DownwardAPIVolumeFile,
  KeyToPath,
  ProjectedVolumeSource,
  SecretVolumeSource,
} from 'kubernetes-types/core/v1.js';
import { extractContainerResource, extractFieldPath, type EnvSources } from '../kuberuntime/env.js';
import type { FileProjection, Payload } from './atomic-writer.js';
import type { ServiceAccountTokenSource } from '../token/manager.js';

/** The API's default for defaultMode (0644). */
export const DEFAULT_MODE = 0o644;

function fromEntries(
  mappings: KeyToPath[] | undefined,
  entries: Map<string, Uint8Array>,
  defaultMode: number,
  optional: boolean,
  missing: (key: string) => string,
): Payload {
  const payload: Payload = new Map();
  if (!mappings || mappings.length === 0) {
    for (const [k, data] of entries) payload.set(k, { data, mode: defaultMode });
    return payload;
  }
  for (const m of mappings) {
    const data = entries.get(m.key);
    if (!data) {
      if (optional) continue;
      throw new Error(missing(m.key));
    }
    payload.set(m.path, { data, mode: m.mode ?? defaultMode });
  }
  return payload;
}

function configMapEntries(cm: ConfigMap): Map<string, Uint8Array> {
  const m = new Map<string, Uint8Array>();
  for (const [k, v] of Object.entries(cm.data ?? {})) m.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) m.set(k, Buffer.from(v, 'base64'));
  return m;
}

function secretEntries(s: Secret): Map<string, Uint8Array> {
  const m = new Map<string, Uint8Array>();
  for (const [k, v] of Object.entries(s.stringData ?? {})) m.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(s.data ?? {})) m.set(k, Buffer.from(v, 'base64'));
  return m;
}

const configMapMissingKey = (key: string) => `configmap references non-existent config key: ${key}`;
const secretMissingKey = (key: string) => `secret references non-existent secret key: ${key}`;

/** A configMap volume's files; a missing configMap is an error unless optional (then the volume is empty). */
export async function configMapPayload(pod: Pod, src: ConfigMapVolumeSource, sources: EnvSources): Promise<Payload> {
  const name = src.name ?? '';
  const cm = await sources.getConfigMap(pod.metadata?.namespace ?? '', name);
  if (!cm) {
    if (src.optional) return new Map();
    throw new Error(`configmap "${name}" not found`);
  }
  return fromEntries(src.items, configMapEntries(cm), src.defaultMode ?? DEFAULT_MODE, src.optional === true, configMapMissingKey);
}

/** A secret volume's files, as configMapPayload. */
export async function secretPayload(pod: Pod, src: SecretVolumeSource, sources: EnvSources): Promise<Payload> {
  const name = src.secretName ?? '';
  const s = await sources.getSecret(pod.metadata?.namespace ?? '', name);
  if (!s) {
    if (src.optional) return new Map();
    throw new Error(`secret "${name}" not found`);
  }
  return fromEntries(src.items, secretEntries(s), src.defaultMode ?? DEFAULT_MODE, src.optional === true, secretMissingKey);
}

/** downwardapi.CollectData: one file per item, from a field of the pod or a container's resources. */
export function downwardAPIPayload(pod: Pod, items: DownwardAPIVolumeFile[] | undefined, defaultMode: number, nodeAllocatable: Record<string, string>): Payload {
  const payload: Payload = new Map();
  const errors: string[] = [];
  for (const item of items ?? []) {
    const file: FileProjection = { data: new Uint8Array(), mode: item.mode ?? defaultMode };
    try {
      if (item.fieldRef) file.data = Buffer.from(extractFieldPath(pod, item.fieldRef.fieldPath, { podIPs: [], hostIPs: [] }));
      else if (item.resourceFieldRef) {
        const name = item.resourceFieldRef.containerName ?? '';
        const container = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((c) => c.name === name);
        if (!container) throw new Error(`container ${name} not found`);
        file.data = Buffer.from(extractContainerResource(item.resourceFieldRef, container, nodeAllocatable));
      }
    } catch (err) {
      errors.push((err as Error).message);
      continue;
    }
    payload.set(posixClean(item.path), file);
  }
  if (errors.length > 0) throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
  return payload;
}

function posixClean(p: string): string {
  return p.split('/').filter((s) => s !== '' && s !== '.').join('/');
}

/**
 * A projected volume's files: every source merged, later sources winning on the same path. A
 * serviceAccountToken comes from the token manager, bound to the pod (without one it fails);
 * clusterTrustBundle sources fail: kite serves none.
 */
export async function projectedPayload(
  pod: Pod,
  src: ProjectedVolumeSource,
  sources: EnvSources,
  nodeAllocatable: Record<string, string>,
  tokens?: ServiceAccountTokenSource,
): Promise<Payload> {
  const defaultMode = src.defaultMode ?? DEFAULT_MODE;
  const ns = pod.metadata?.namespace ?? '';
  const payload: Payload = new Map();
  const add = (p: Payload) => p.forEach((v, k) => payload.set(k, v));
  for (const s of src.sources ?? []) {
    if (s.configMap) {
      const name = s.configMap.name ?? '';
      const cm = await sources.getConfigMap(ns, name);
      if (!cm) {
        if (s.configMap.optional) continue;
        throw new Error(`configmap "${name}" not found`);
      }
      add(fromEntries(s.configMap.items, configMapEntries(cm), defaultMode, s.configMap.optional === true, configMapMissingKey));
    } else if (s.secret) {
      const name = s.secret.name ?? '';
      const sec = await sources.getSecret(ns, name);
      if (!sec) {
        if (s.secret.optional) continue;
        throw new Error(`secret "${name}" not found`);
      }
      add(fromEntries(s.secret.items, secretEntries(sec), defaultMode, s.secret.optional === true, secretMissingKey));
    } else if (s.downwardAPI) {
      add(downwardAPIPayload(pod, s.downwardAPI.items, defaultMode, nodeAllocatable));
    } else if (s.serviceAccountToken) {
      if (!tokens) throw new Error('failed to fetch token: this kubelet has no API server to ask');
      const { audience, expirationSeconds, path } = s.serviceAccountToken;
      let token: string;
      try {
        const tr = await tokens.getServiceAccountToken(ns, pod.spec?.serviceAccountName ?? '', {
          spec: {
            audiences: audience ? [audience] : [],
            expirationSeconds: expirationSeconds ?? 3600,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
          },
        });
        token = tr.status?.token ?? '';
      } catch (err) {
        throw new Error(`failed to fetch token: ${(err as Error).message}`, { cause: err });
      }
      payload.set(path, { data: Buffer.from(token, 'utf8'), mode: defaultMode });
    } else if ((s as { clusterTrustBundle?: unknown }).clusterTrustBundle) {
      throw new Error(`clusterTrustBundle projections are not supported by this kubelet`);
    }
  }
  return payload;
}
