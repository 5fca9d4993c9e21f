// LimitRanger, as upstream: a new pod's containers get the request and limit defaults of their
// namespace's LimitRanges (noted in the kubernetes.io/limit-ranger annotation), then the pod is
// refused when a container or the whole pod is outside a range's min, max or limit/request ratio.
import type { Container, LimitRangeItem, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity, type Quantity } from '../../../api/quantity.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin, ValidatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'LimitRanger';

export const limitRangerAnnotation = 'kubernetes.io/limit-ranger';

type ResourceList = Record<string, string>;

/**
 * A Container item's effective defaults, as API defaulting completes them upstream: the limit
 * defaults to max, the request to the default limit, else to min.
 */
function containerDefaults(item: LimitRangeItem): { limits: ResourceList; requests: ResourceList } {
  const limits: ResourceList = { ...item.max, ...item.default };
  const requests: ResourceList = { ...item.min, ...item.default, ...item.defaultRequest };
  return { limits, requests };
}

/** Whether a quantity string parses (a bad LimitRange must not turn into a 500). */
function quantity(v: string | undefined): Quantity | undefined {
  if (v === undefined) return undefined;
  try {
    return parseQuantity(v);
  } catch {
    return undefined;
  }
}

export interface LimitRangerOptions {
  lookups: AdmissionLookups;
}

export class LimitRanger implements MutatingAdmissionPlugin, ValidatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: AdmissionLookups;

  constructor(opts: LimitRangerOptions) {
    this.lookups = opts.lookups;
  }

  // Upstream leaves pod updates alone: resources of a running pod are checked when it is created.
  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.subresource === '' && a.resource.group === '' && a.resource.resource === 'pods';
  }

  private async items(namespace: string): Promise<LimitRangeItem[]> {
    const ranges = (await this.lookups.list('limitranges')).filter((r) => r.metadata?.namespace === namespace);
    return ranges.flatMap((r) => r.spec?.limits ?? []);
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as Pod | undefined;
    if (!pod?.spec) return;
    const notes: string[] = [];
    for (const item of await this.items(a.namespace)) {
      if (item.type !== 'Container') continue;
      const defaults = containerDefaults(item);
      for (const [field, kind] of [['containers', 'container'], ['initContainers', 'init container']] as const) {
        (pod.spec[field] ?? []).forEach((c, i) => {
          const set = setDefaults(c, defaults, kind);
          if (set.length) a.timeline?.mutated(`spec.${field}[${i}].resources`);
          notes.push(...set);
        });
      }
    }
    if (!notes.length) return;
    pod.metadata ??= {};
    pod.metadata.annotations = { ...pod.metadata.annotations, [limitRangerAnnotation]: `LimitRanger plugin set: ${notes.join('; ')}` };
    a.timeline?.mutated('metadata.annotations');
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as Pod | undefined;
    if (!pod?.spec) return;
    const errors: string[] = [];
    for (const item of await this.items(a.namespace)) {
      if (item.type === 'Container') {
        for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])]) {
          errors.push(...constraintErrors(item, 'Container', c.resources?.requests ?? {}, c.resources?.limits ?? {}));
        }
      } else if (item.type === 'Pod') {
        errors.push(...constraintErrors(item, 'Pod', podTotal(pod, 'requests'), podTotal(pod, 'limits')));
      }
    }
    // Upstream's aggregate error: one message alone, several in brackets.
    if (errors.length === 1) throw admissionForbidden(a, errors[0]);
    if (errors.length > 1) throw admissionForbidden(a, `[${errors.join(', ')}]`);
  }
}

/** Fills what the container leaves unset; returns upstream's annotation notes for it. */
function setDefaults(c: Container, defaults: { limits: ResourceList; requests: ResourceList }, kind: string): string[] {
  const set = (field: 'requests' | 'limits'): string[] => {
    const names: string[] = [];
    for (const [name, value] of Object.entries(defaults[field])) {
      const own = c.resources?.[field];
      if (own && Object.hasOwn(own, name)) continue;
      c.resources = { ...c.resources, [field]: { ...own, [name]: value } };
      names.push(name);
    }
    return names.sort();
  };
  const limits = set('limits');
  const requests = set('requests');
  return [...(requests.length ? [`${requests.join(', ')} request for ${kind} ${c.name}`] : []), ...(limits.length ? [`${limits.join(', ')} limit for ${kind} ${c.name}`] : [])];
}

/** The pod's total per resource: its containers' sum, or an init container's when larger (they run one at a time). */
function podTotal(pod: Pod, field: 'requests' | 'limits'): ResourceList {
  const sum = new Map<string, Quantity>();
  for (const c of pod.spec?.containers ?? []) {
    for (const [name, v] of Object.entries(c.resources?.[field] ?? {})) {
      const q = quantity(v);
      if (q) sum.set(name, sum.get(name)?.add(q) ?? q);
    }
  }
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [name, v] of Object.entries(c.resources?.[field] ?? {})) {
      const q = quantity(v);
      const have = sum.get(name);
      if (q && (!have || q.cmp(have) > 0)) sum.set(name, q);
    }
  }
  return Object.fromEntries([...sum].map(([k, q]) => [k, q.toString()]));
}

/** Upstream's min, max and maxLimitRequestRatio constraints, worded as its errors. */
function constraintErrors(item: LimitRangeItem, limitType: string, requests: ResourceList, limits: ResourceList): string[] {
  const errors: string[] = [];
  const has = (list: ResourceList, name: string) => Object.hasOwn(list, name);
  for (const [name, bound] of Object.entries(item.min ?? {})) {
    const enforced = quantity(bound);
    if (!enforced) continue;
    const req = quantity(requests[name]);
    const lim = quantity(limits[name]);
    if (!has(requests, name)) errors.push(`minimum ${name} usage per ${limitType} is ${enforced}.  No request is specified`);
    else if (req && req.cmp(enforced) < 0) errors.push(`minimum ${name} usage per ${limitType} is ${enforced}, but request is ${req}`);
    else if (lim && lim.cmp(enforced) < 0) errors.push(`minimum ${name} usage per ${limitType} is ${enforced}, but limit is ${lim}`);
  }
  for (const [name, bound] of Object.entries(item.max ?? {})) {
    const enforced = quantity(bound);
    if (!enforced) continue;
    const req = quantity(requests[name]);
    const lim = quantity(limits[name]);
    if (!has(limits, name)) errors.push(`maximum ${name} usage per ${limitType} is ${enforced}.  No limit is specified`);
    else if (lim && lim.cmp(enforced) > 0) errors.push(`maximum ${name} usage per ${limitType} is ${enforced}, but limit is ${lim}`);
    else if (req && req.cmp(enforced) > 0) errors.push(`maximum ${name} usage per ${limitType} is ${enforced}, but request is ${req}`);
  }
  for (const [name, bound] of Object.entries(item.maxLimitRequestRatio ?? {})) {
    const enforced = quantity(bound);
    if (!enforced) continue;
    const req = quantity(requests[name]);
    const lim = quantity(limits[name]);
    const prefix = `${name} max limit to request ratio per ${limitType} is ${enforced}`;
    if (!req || req.isZero()) errors.push(`${prefix}, but no request is specified or request is 0`);
    else if (!lim || lim.isZero()) errors.push(`${prefix}, but no limit is specified or limit is 0`);
    else {
      const ratio = lim.toNumber() / req.toNumber();
      if (ratio > enforced.toNumber()) errors.push(`${prefix}, but provided ratio is ${ratio.toFixed(6)}`);
    }
  }
  return errors;
}
