// A container's environment as upstream's makeEnvironmentVariables builds it: envFrom sources first
// (later sources overriding earlier ones), then env entries in order, each able to refer to the
// variables before it and to the service links with $(VAR); then the service links
// (FOO_SERVICE_HOST ...) the container did not set itself.
import type { ConfigMap, Container, Pod, Secret } from '../../api/types.js';
import { serviceEnvVarMap, type ServiceSource } from './envvars.js';
import type { EnvVarSource, ObjectFieldSelector, ResourceFieldSelector } from 'kubernetes-types/core/v1.js';
import { Quantity } from '../../api/quantity.js';
import type { KeyValue } from '../runtime/types.js';

/** Where configMap and secret references are read from (the API through informers, or a fake). */
export interface EnvSources {
  getConfigMap(ns: string, name: string): Promise<ConfigMap | undefined>;
  getSecret(ns: string, name: string): Promise<Secret | undefined>;
  /** The Services for service links; without them (a kubelet with no API server) there are none. */
  services?: ServiceSource;
}

/** What the downward API can see about the node and the running pod. */
export interface DownwardContext {
  /** The pod's IPs as the sandbox reported them (status.podIP(s)). */
  podIPs: string[];
  /** The node's addresses (status.hostIP(s)). */
  hostIPs: string[];
  /** Node allocatable: the value of limits.* when the container sets none. */
  nodeAllocatable: Record<string, string>;
}

/** An expected failure building the container's config: the message is shown as the waiting message. */
export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

// --- $(VAR) expansion (upstream's third_party/forked/golang/expansion) ---

/** Expands $(VAR) with mapping; `$$` is a literal `$`; unknown names and unterminated references stay as written. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') out += '$';
    else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close < 0) out += '$(';
      else {
        out += mapping(input.slice(cursor + 2, close));
        advance = close - cursor;
      }
    } else out += `$${next}`;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** expansion.MappingFuncFor: the first context holding the name wins; otherwise the reference is kept. */
export function mappingFor(...contexts: Map<string, string>[]): (name: string) => string {
  return (name) => {
    for (const c of contexts) {
      const v = c.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}

/** The container's command and args with $(VAR) expanded against its final environment. */
export function expandCommandAndArgs(container: Container, envs: KeyValue[]): { command?: string[]; args?: string[] } {
  const mapping = mappingFor(new Map(envs.map((e) => [e.key, e.value])));
  return {
    command: container.command?.map((c) => expand(c, mapping)),
    args: container.args?.map((a) => expand(a, mapping)),
  };
}

// --- downward API values ---

function formatMap(m: Record<string, string> | undefined): string {
  // Go's %q: a double-quoted string with Go escapes; JSON's escaping agrees for what labels may hold.
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

const subscripted = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/;

/** fieldpath.ExtractFieldPathAsString plus the kubelet's runtime fields (spec.nodeName, status.*). */
export function extractFieldPath(pod: Pod, fieldPath: string, ctx: Pick<DownwardContext, 'podIPs' | 'hostIPs'>): string {
  const sub = subscripted.exec(fieldPath);
  if (sub) {
    const map = sub[1] === 'metadata.labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[sub[2]!] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata?.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata?.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIPs[0] ?? '';
    case 'status.hostIPs':
      return ctx.hostIPs.join(',');
    case 'status.podIP':
      return ctx.podIPs[0] ?? '';
    case 'status.podIPs':
      return ctx.podIPs.join(',');
  }
  throw new EnvError(`unsupported fieldPath: ${fieldPath}`);
}

function divisorOf(sel: ResourceFieldSelector): Quantity {
  const d = sel.divisor === undefined ? undefined : Quantity.from(sel.divisor as string | number);
  return !d || d.isZero() ? Quantity.fromValue(1) : d;
}

/** ceil(value / divisor) as upstream's convertResource*ToString (cpu in milli units, the rest whole). */
function ceilDiv(value: Quantity, divisor: Quantity, milli: boolean): string {
  const v = milli ? value.milliValue() : value.value();
  const d = milli ? divisor.milliValue() : divisor.value();
  if (d === 0n) return '0';
  const q = v / d;
  return String(q * d === v || v < 0n ? q : q + 1n);
}

/**
 * resource.ExtractContainerResourceValue over the container with unset limits defaulted to node
 * allocatable (ExtractResourceValueByContainerNameAndNodeAllocatable).
 */
export function extractContainerResource(sel: ResourceFieldSelector, container: Container, nodeAllocatable: Record<string, string>): string {
  const divisor = divisorOf(sel);
  const [kind, name] = sel.resource.split('.', 2) as [string, string | undefined];
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  const pick = (list: Record<string, unknown>, fallback?: Record<string, string>): Quantity => {
    const raw = (list[name ?? ''] as string | number | undefined) ?? fallback?.[name ?? ''];
    return raw === undefined ? Quantity.fromValue(0) : Quantity.from(raw);
  };
  const supported = name === 'cpu' || name === 'memory' || name === 'ephemeral-storage' || name?.startsWith('hugepages-');
  if ((kind === 'limits' || kind === 'requests') && supported) {
    // Hugepages have no allocatable fallback for limits in upstream either.
    const fallback = kind === 'limits' && !name!.startsWith('hugepages-') ? nodeAllocatable : undefined;
    return ceilDiv(pick(kind === 'limits' ? limits : requests, fallback), divisor, name === 'cpu');
  }
  throw new EnvError(`unsupported container resource : ${sel.resource}`);
}

// --- makeEnvironmentVariables ---

/** What an env entry or envFrom source resolved to; optional missing sources resolve to nothing. */
function notFound(kind: 'configmap' | 'secret', name: string): EnvError {
  return new EnvError(`${kind} "${name}" not found`);
}

function secretData(secret: Secret): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.stringData ?? {})) out[k] = v;
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}

/** RelaxedEnvironmentVariableValidation (on by default in 1.33): printable ASCII without '='. */
export function isEnvVarName(name: string): boolean {
  return name.length > 0 && /^[\x20-\x3c\x3e-\x7e]+$/.test(name);
}

export interface EnvResult {
  envs: KeyValue[];
  /** Keys from envFrom sources that were skipped as invalid names, for the InvalidEnvironmentVariableNames event. */
  invalidKeys: { kind: 'configMap' | 'secret'; name: string; keys: string[] }[];
}

/** The message of the InvalidEnvironmentVariableNames event upstream records for skipped keys. */
export function invalidKeysMessage(namespace: string, skipped: EnvResult['invalidKeys'][number]): string {
  return `Keys [${skipped.keys.sort().join(', ')}] from the EnvFrom ${skipped.kind} ${namespace}/${skipped.name} were skipped since they are considered invalid environment variable names.`;
}

/** makeEnvironmentVariables: rejects with an EnvError whose message is upstream's. */
export async function makeEnvironmentVariables(pod: Pod, container: Container, sources: EnvSources, ctx: DownwardContext): Promise<EnvResult> {
  const ns = pod.metadata?.namespace ?? '';
  // Waiting for the first list keeps a restarted kubelet from starting pods without KUBERNETES_SERVICE_HOST.
  if (sources.services && !sources.services.hasSynced()) throw new EnvError('services have not yet been read at least once, cannot construct envvars');
  const serviceEnv = sources.services ? serviceEnvVarMap(sources.services.list(), ns, pod.spec?.enableServiceLinks !== false) : new Map<string, string>();
  const env = new Map<string, string>();
  const invalidKeys: EnvResult['invalidKeys'] = [];
  const configMaps = new Map<string, ConfigMap | undefined>();
  const secrets = new Map<string, Record<string, string> | undefined>();
  const configMap = async (name: string): Promise<ConfigMap | undefined> => {
    if (!configMaps.has(name)) configMaps.set(name, await sources.getConfigMap(ns, name));
    return configMaps.get(name);
  };
  const secret = async (name: string): Promise<Record<string, string> | undefined> => {
    if (!secrets.has(name)) {
      const s = await sources.getSecret(ns, name);
      secrets.set(name, s && secretData(s));
    }
    return secrets.get(name);
  };

  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? 'configMap' : 'secret';
    const name = ref.name ?? '';
    const data = kind === 'configMap' ? (await configMap(name))?.data : await secret(name);
    if (!data) {
      if (ref.optional) continue;
      throw notFound(kind === 'configMap' ? 'configmap' : 'secret', name);
    }
    const invalid: string[] = [];
    for (const [key, value] of Object.entries(data)) {
      const k = (from.prefix ?? '') + key;
      if (!isEnvVarName(k)) {
        invalid.push(k);
        continue;
      }
      env.set(k, value);
    }
    if (invalid.length > 0) invalidKeys.push({ kind, name, keys: invalid });
  }

  const mapping = mappingFor(env, serviceEnv);
  for (const e of container.env ?? []) {
    let value: string | undefined = e.value ?? '';
    if (e.value) value = expand(e.value, mapping);
    else if (e.valueFrom) value = await valueFrom(e.valueFrom);
    if (value === undefined) continue;
    env.set(e.name, value);
  }
  // The container's own variables win over the links of the same name.
  for (const [key, value] of serviceEnv) if (!env.has(key)) env.set(key, value);
  return { envs: [...env].map(([key, value]) => ({ key, value })), invalidKeys };

  async function valueFrom(src: EnvVarSource): Promise<string | undefined> {
    if (src.fieldRef) return extractFieldPath(pod, (src.fieldRef as ObjectFieldSelector).fieldPath, ctx);
    if (src.resourceFieldRef) return extractContainerResource(src.resourceFieldRef, container, ctx.nodeAllocatable);
    if (src.configMapKeyRef) {
      const { name = '', key, optional } = src.configMapKeyRef;
      const cm = await configMap(name);
      if (!cm) {
        if (optional) return undefined;
        throw notFound('configmap', name);
      }
      // Env values come from data only; binaryData cannot be an environment variable.
      const v = cm.data?.[key];
      if (v === undefined && !optional) throw new EnvError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
      return v;
    }
    if (src.secretKeyRef) {
      const { name = '', key, optional } = src.secretKeyRef;
      const data = await secret(name);
      if (!data) {
        if (optional) return undefined;
        throw notFound('secret', name);
      }
      const v = data[key];
      if (v === undefined && !optional) throw new EnvError(`couldn't find key ${key} in Secret ${ns}/${name}`);
      return v;
    }
    return '';
  }
}
