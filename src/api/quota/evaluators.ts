// Quota evaluators, as upstream's pkg/quota/v1/evaluator/core and quota/v1/generic: what an object
// of a resource charges (usage), which quota resource names it answers for, how it matches a quota's
// scopes, and the constraints a pod must meet. Shared by the ResourceQuota admission plugin and the
// resource quota controller, so both count the same way.
import type { Container, Pod, ResourceQuota, ScopedResourceSelectorRequirement, Service } from 'kubernetes-types/core/v1.js';
import { newRequirement, selectorOf } from '../labels.js';
import { isPodPhaseTerminal } from '../pod/status.js';
import { aggregatePodResources, type ResourceMeasure } from '../pod/resources.js';
import { podQOS } from '../pod/qos.js';
import { Quantity } from '../quantity.js';
import { isExtendedResourceName, isNativeResourceName } from '../validation/podspec.js';
import { addUsage, maskUsage, parseResourceList, type Usage } from './resources.js';

type Obj = { metadata?: { deletionTimestamp?: string; deletionGracePeriodSeconds?: number } };

export interface Evaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether a write can change usage (upstream's Handles): object counts only on create. */
  handles(operation: 'CREATE' | 'UPDATE'): boolean;
  /** The quota resource names, of those given, that this evaluator measures. */
  matchingResources(names: readonly string[]): string[];
  /** Whether an object matches one scope requirement; evaluators without scopes match none. */
  matchesScope(req: ScopedResourceSelectorRequirement, obj: object): boolean;
  /** Why the object cannot be admitted under a quota tracking `required` (pods only), or undefined. */
  constraints(required: readonly string[], obj: object): string | undefined;
  /** What the object charges; `now` (ms) decides whether a terminating pod still counts. */
  usage(obj: object, now: number): Usage;
}

/** The object count name of a resource: count/<resource> in the core group, count/<resource>.<group> elsewhere. */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

const one = () => Quantity.fromValue(1);

/** The bare names quota counted before count/<resource> existed. */
const legacyCountNames: ReadonlyMap<string, string> = new Map([
  ['configmaps', 'configmaps'],
  ['secrets', 'secrets'],
  ['replicationcontrollers', 'replicationcontrollers'],
  ['resourcequotas', 'resourcequotas'],
  ['persistentvolumeclaims', 'persistentvolumeclaims'],
]);

/** generic.ObjectCountEvaluator: one of each object in storage. */
function objectCountEvaluator(group: string, resource: string): Evaluator {
  const names = [objectCountName(group, resource)];
  const legacy = group === '' ? legacyCountNames.get(resource) : undefined;
  if (legacy) names.push(legacy);
  return {
    group,
    resource,
    handles: (op) => op === 'CREATE',
    matchingResources: (input) => input.filter((n) => names.includes(n)),
    matchesScope: () => false,
    constraints: () => undefined,
    usage: () => new Map(names.map((n) => [n, one()])),
  };
}

// ---- services ----

const serviceResources = [objectCountName('', 'services'), 'services', 'services.nodeports', 'services.loadbalancers'];

function serviceUsage(svc: Service): Usage {
  const u: Usage = new Map([
    [objectCountName('', 'services'), one()],
    ['services', one()],
    ['services.loadbalancers', Quantity.fromValue(0)],
    ['services.nodeports', Quantity.fromValue(0)],
  ]);
  const ports = svc.spec?.ports ?? [];
  switch (svc.spec?.type) {
    case 'NodePort':
      u.set('services.nodeports', Quantity.fromValue(ports.length));
      break;
    case 'LoadBalancer': {
      // Without node port allocation only the ports that ask for one explicitly hold one.
      const count = svc.spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => p.nodePort).length : ports.length;
      u.set('services.nodeports', Quantity.fromValue(count));
      u.set('services.loadbalancers', one());
      break;
    }
  }
  return u;
}

const serviceEvaluator: Evaluator = {
  group: '',
  resource: 'services',
  handles: () => true,
  matchingResources: (input) => input.filter((n) => serviceResources.includes(n)),
  matchesScope: () => false,
  constraints: () => undefined,
  usage: (obj) => serviceUsage(obj as Service),
};

// ---- pods ----

const podCountName = objectCountName('', 'pods');
const podResources = [
  podCountName, 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods',
];
/** A quota on these makes every container say what it needs of them (upstream's validationSet, kept for compatibility). */
const validationSet = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** podComputeUsageHelper: the quota names a pod's requests and limits stand for. */
function computeUsage(requests: Usage, limits: Usage): Usage {
  const u: Usage = new Map([['pods', one()]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      u.set(r, req);
      u.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) u.set(`limits.${r}`, lim);
  }
  for (const [name, q] of requests) {
    if (name.startsWith('hugepages-')) {
      u.set(name, q);
      u.set(`requests.${name}`, q);
    }
    if (isExtendedResourceName(name)) u.set(`requests.${name}`, q);
  }
  return u;
}

const maxUsage = (a: Usage, b: Usage): Usage => {
  const out = new Map(a);
  for (const [k, v] of b) if (!out.has(k) || out.get(k)!.cmp(v) < 0) out.set(k, v);
  return out;
};

const usageMeasure: ResourceMeasure<Usage> = { zero: () => new Map(), add: addUsage, max: maxUsage };

/**
 * resourcehelper.PodRequests / PodLimits on quantities (pod/resources.ts's rule). Overhead is added
 * to requests, and to limits only where a limit is set.
 */
function podAggregate(pod: Pod, pick: (c: Container) => Record<string, string | number> | undefined, isLimits: boolean): Usage {
  const total = aggregatePodResources(pod, (c) => parseResourceList(pick(c)), usageMeasure);
  const overhead = parseResourceList(pod.spec?.overhead as Record<string, string> | undefined);
  return addUsage(total, isLimits ? maskUsage(overhead, total.keys()) : overhead);
}

/** The pod's effective requests (resourcehelper.PodRequests), also what "needs" means in kite why. */
export function podRequests(pod: Pod): Usage {
  return podAggregate(pod, (c) => c.resources?.requests as Record<string, string> | undefined, false);
}

/** QuotaV1Pod: terminal pods, and pods past their deletion grace, no longer hold compute quota. */
export function podCountsForQuota(pod: Pod, now: number): boolean {
  if (isPodPhaseTerminal(pod.status?.phase)) return false;
  const m = (pod as Obj).metadata;
  if (m?.deletionTimestamp && m.deletionGracePeriodSeconds !== undefined) {
    if (now > Date.parse(m.deletionTimestamp) + m.deletionGracePeriodSeconds * 1000) return false;
  }
  return true;
}

function podUsage(pod: Pod, now: number): Usage {
  const u: Usage = new Map([[podCountName, one()]]);
  if (!podCountsForQuota(pod, now)) return u;
  const requests = podRequests(pod);
  const limits = podAggregate(pod, (c) => c.resources?.limits as Record<string, string> | undefined, true);
  return addUsage(u, computeUsage(requests, limits));
}

function usesCrossNamespacePodAffinity(pod: Pod): boolean {
  const a = pod.spec?.affinity;
  const terms = [
    ...(a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
    ...(a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
  ];
  return terms.some((t) => (t.namespaces?.length ?? 0) > 0 || t.namespaceSelector != null);
}

const scopeOperators: Record<string, 'in' | 'notin' | 'exists' | '!'> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/** A PriorityClass scope selects on the label set {PriorityClass: <class>} (empty without a class). */
function podMatchesPriorityClass(pod: Pod, req: ScopedResourceSelectorRequirement): boolean {
  const name = pod.spec?.priorityClassName ?? '';
  if (req.operator === 'Exists') return name !== '';
  const op = scopeOperators[req.operator];
  if (!op) return false;
  const labels: Record<string, string> = name ? { PriorityClass: name } : {};
  return selectorOf([newRequirement('PriorityClass', op, req.values ?? [])]).matches(labels);
}

function podMatchesScope(req: ScopedResourceSelectorRequirement, pod: Pod): boolean {
  const terminating = pod.spec?.activeDeadlineSeconds != null && pod.spec.activeDeadlineSeconds >= 0;
  switch (req.scopeName) {
    case 'Terminating':
      return terminating;
    case 'NotTerminating':
      return !terminating;
    case 'BestEffort':
      return podQOS(pod) === 'BestEffort';
    case 'NotBestEffort':
      return podQOS(pod) !== 'BestEffort';
    case 'PriorityClass':
      return podMatchesPriorityClass(pod, req);
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespacePodAffinity(pod);
    default:
      return false;
  }
}

/** enforcePodContainerConstraints over every container: the tracked cpu/memory names each one leaves unset. */
function podConstraints(required: readonly string[], pod: Pod): string | undefined {
  const requiredSet = required.filter((r) => validationSet.has(r));
  const missing = new Map<string, Set<string>>();
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    const has = computeUsage(
      parseResourceList(c.resources?.requests as Record<string, string> | undefined),
      parseResourceList(c.resources?.limits as Record<string, string> | undefined),
    );
    for (const r of requiredSet) {
      if (has.has(r)) continue;
      if (!missing.has(r)) missing.set(r, new Set());
      missing.get(r)!.add(c.name);
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}

const podEvaluator: Evaluator = {
  group: '',
  resource: 'pods',
  handles: (op) => op === 'CREATE',
  matchingResources: (input) =>
    input.filter(
      (n) =>
        podResources.includes(n) ||
        n.startsWith('hugepages-') ||
        n.startsWith('requests.hugepages-') ||
        (!isNativeResourceName(n) && n.startsWith('requests.')),
    ),
  matchesScope: (req, obj) => podMatchesScope(req, obj as Pod),
  constraints: (required, obj) => podConstraints(required, obj as Pod),
  usage: (obj, now) => podUsage(obj as Pod, now),
};

/** Resources quota never tracks (upstream's ignored resources). */
const ignored = new Set(['/events', 'events.k8s.io/events']);

/** The evaluator of a resource: pods and services have their own, every other resource is counted. */
export function evaluatorFor(group: string, resource: string): Evaluator | undefined {
  if (ignored.has(`${group}/${resource}`)) return undefined;
  if (group === '' && resource === 'pods') return podEvaluator;
  if (group === '' && resource === 'services') return serviceEvaluator;
  return objectCountEvaluator(group, resource);
}

/** A quota's scopes and scope selector as one list of requirements (getScopeSelectorsFromQuota). */
export function quotaScopeSelectors(quota: ResourceQuota): ScopedResourceSelectorRequirement[] {
  return [
    ...(quota.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists' })),
    ...(quota.spec?.scopeSelector?.matchExpressions ?? []),
  ];
}

/** generic.Matches: the quota tracks something the evaluator measures, and the object is in all of its scopes. */
export function quotaMatches(evaluator: Evaluator, quota: ResourceQuota, obj: object, hard: readonly string[]): boolean {
  if (evaluator.matchingResources(hard).length === 0) return false;
  return quotaScopeSelectors(quota).every((req) => evaluator.matchesScope(req, obj));
}
