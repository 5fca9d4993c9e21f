// PodSecurity, as upstream's pod-security-admission: a namespace's `pod-security.kubernetes.io/`
// labels pick a level (and version) to enforce, audit and warn about. Pods that break the enforce
// level are refused; the warn level becomes response warnings, for pods and for the pod templates
// of workload resources (which are never refused: their pods are). Changing a namespace's enforce
// level warns about its existing pods that break the new one. Audit annotations as upstream's:
// the enforced policy, the audit level's violations, an exemption's reason, a label error.
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type { Namespace, Pod, PodSpec, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { invalid } from '../../../../api/errors.js';
import { aggregateMessage, invalid as invalidField, notSupported, Path, type FieldError } from '../../../../api/field.js';
import { deepEqual } from '../../../../api/validation/meta.js';
import { admissionForbidden } from '../../errors.js';
import type { AdmissionAttributes, AdmissionLookups, ValidatingAdmissionPlugin } from '../../interface.js';
import { evaluatePod, forbiddenDetail, forbiddenReason, type Level } from './checks.js';

export const pluginName = 'PodSecurity';

/** The namespace labels' prefix, and the audit annotations'. */
const labelPrefix = 'pod-security.kubernetes.io/';
const enforcePolicyKey = 'enforce-policy';
const exemptKey = 'exempt';
const modes = ['enforce', 'audit', 'warn'] as const;
type Mode = (typeof modes)[number];
const levels: readonly Level[] = ['privileged', 'baseline', 'restricted'];

export interface LevelVersion {
  level: Level;
  /** 'latest' or 'v1.N'. */
  version: string;
}

export type Policy = Record<Mode, LevelVersion>;

const levelVersionString = (lv: LevelVersion) => `${lv.level}:${lv.version}`;
const sameLevelVersion = (a: LevelVersion, b: LevelVersion) => a.level === b.level && a.version === b.version;

/** kite serves 1.33: a newer version label means the newest checks, as upstream's latest. */
const servedMinor = 33;

function parseVersion(v: string): number | undefined {
  if (v === 'latest') return Infinity;
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(v);
  return m ? Number(m[1]) : undefined;
}

/**
 * The policy of a namespace's labels, over the server's default (privileged:latest). An invalid
 * level means restricted and an invalid version latest, as upstream, with the errors it reports.
 */
export function policyOf(labels: Record<string, string> | undefined, defaults: LevelVersion = { level: 'privileged', version: 'latest' }): { policy: Policy; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const path = Path.root('metadata').child('labels');
  const policy = {} as Policy;
  for (const mode of modes) {
    const lv = { ...defaults };
    const level = labels?.[`${labelPrefix}${mode}`];
    if (level !== undefined) {
      if ((levels as readonly string[]).includes(level)) lv.level = level as Level;
      else {
        errors.push(notSupported(path.key(`${labelPrefix}${mode}`), level, [...levels]));
        lv.level = 'restricted';
      }
    }
    const version = labels?.[`${labelPrefix}${mode}-version`];
    if (version !== undefined) {
      const minor = parseVersion(version);
      if (minor === undefined) {
        errors.push(invalidField(path.key(`${labelPrefix}${mode}-version`), version, "must be 'latest' or 'v1.x'"));
        lv.version = 'latest';
      } else lv.version = minor > servedMinor ? 'latest' : version;
    }
    policy[mode] = lv;
  }
  return { policy, errors };
}

/** Pod subresources that cannot change what PodSecurity looks at. */
const ignoredPodSubresources = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** The workload resources whose pod templates get warnings, and where their template is. */
const podControllers: ReadonlyMap<string, (o: Record<string, unknown>) => PodTemplateSpec | undefined> = new Map([
  ['/podtemplates', (o: Record<string, unknown>) => o.template as PodTemplateSpec | undefined],
  ['/replicationcontrollers', specTemplate],
  ['apps/deployments', specTemplate],
  ['apps/replicasets', specTemplate],
  ['apps/statefulsets', specTemplate],
  ['apps/daemonsets', specTemplate],
  ['batch/jobs', specTemplate],
  ['batch/cronjobs', (o: Record<string, unknown>) => (o.spec as { jobTemplate?: { spec?: { template?: PodTemplateSpec } } } | undefined)?.jobTemplate?.spec?.template],
]);

function specTemplate(o: Record<string, unknown>): PodTemplateSpec | undefined {
  return (o.spec as { template?: PodTemplateSpec } | undefined)?.template;
}

const resourceKey = (a: AdmissionAttributes) => `${a.resource.group}/${a.resource.resource}`;

/** Upstream's stand-in for an unbounded list: it checks at most this many pods on a label change. */
const namespaceMaxPodsToCheck = 3000;

export interface PodSecurityExemptions {
  usernames?: readonly string[];
  namespaces?: readonly string[];
  runtimeClasses?: readonly string[];
}

export interface PodSecurityOptions {
  lookups: AdmissionLookups;
  /** None by default, as upstream's default configuration. */
  exemptions?: PodSecurityExemptions;
}

export class PodSecurity implements ValidatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: AdmissionLookups;
  private readonly exemptions: Required<PodSecurityExemptions>;

  constructor(opts: PodSecurityOptions) {
    this.lookups = opts.lookups;
    this.exemptions = { usernames: [], namespaces: [], runtimeClasses: [], ...opts.exemptions };
  }

  handles(a: AdmissionAttributes): boolean {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return false;
    const key = resourceKey(a);
    if (key === '/pods') return !ignoredPodSubresources.has(a.subresource);
    return a.subresource === '' && (key === '/namespaces' || podControllers.has(key));
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const key = resourceKey(a);
    if (key === '/namespaces') return this.validateNamespace(a);
    const annotate = (k: string, v: string) => a.annotate?.(`${labelPrefix}${k}`, v);
    if (this.exemptions.namespaces.includes(a.namespace)) return annotate(exemptKey, 'namespace');
    if (this.exemptions.usernames.includes(a.user.name)) return annotate(exemptKey, 'user');
    const ns = await this.lookups.get('namespaces', '', a.namespace);
    const { policy, errors } = policyOf(ns?.metadata?.labels);
    if (key === '/pods') {
      const pod = a.object as Pod | undefined;
      if (!pod?.spec) return;
      if (errors.length === 0 && modes.every((m) => policy[m].level === 'privileged')) return annotate(enforcePolicyKey, levelVersionString(policy.enforce));
      if (a.operation === 'UPDATE' && !isSignificantPodUpdate(pod, a.oldObject as Pod | undefined)) return;
      return this.evaluate(a, policy, errors, pod.metadata ?? {}, pod.spec, true);
    }
    if (errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const template = podControllers.get(key)?.(a.object as Record<string, unknown>);
    if (!template?.spec) return;
    return this.evaluate(a, policy, errors, template.metadata ?? {}, template.spec, false);
  }

  /**
   * Refuses a pod that breaks the enforce level (only when `enforce`), records the audit level's
   * violations, and warns about the warn level's when the request goes through.
   */
  private async evaluate(a: AdmissionAttributes, policy: Policy, errors: FieldError[], meta: ObjectMeta, spec: PodSpec, enforce: boolean): Promise<void> {
    const annotate = (k: string, v: string) => a.annotate?.(`${labelPrefix}${k}`, v);
    if (spec.runtimeClassName && this.exemptions.runtimeClasses.includes(spec.runtimeClassName)) return annotate(exemptKey, 'runtimeClass');
    if (errors.length) annotate('error', `Failed to parse policy: ${aggregateMessage(errors)}`);
    let refusal: Error | undefined;
    if (enforce) {
      annotate(enforcePolicyKey, levelVersionString(policy.enforce));
      const results = evaluatePod(policy.enforce.level, meta, spec);
      if (results.length) refusal = admissionForbidden(a, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(results)}`);
    }
    const audited = evaluatePod(policy.audit.level, meta, spec);
    if (audited.length) annotate('audit-violations', `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audited)}`);
    if (refusal) throw refusal;
    const results = evaluatePod(policy.warn.level, meta, spec);
    if (results.length) a.warnings?.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(results)}`);
  }

  private async validateNamespace(a: AdmissionAttributes): Promise<void> {
    const ns = a.object as Namespace | undefined;
    if (!ns) return;
    const { policy, errors } = policyOf(ns.metadata?.labels);
    const refuse = () => invalid('Namespace', '', ns.metadata?.name ?? '', errors);
    if (a.operation === 'CREATE') {
      if (errors.length) throw refuse();
      return;
    }
    const old = policyOf((a.oldObject as Namespace | undefined)?.metadata?.labels);
    // Labels already invalid the same way stay allowed, so unrelated updates still go through.
    if (errors.length && (!old.errors.length || !deepEqual(errors, old.errors))) throw refuse();
    const enforce = policy.enforce;
    if (sameLevelVersion(enforce, old.policy.enforce) || enforce.level === 'privileged') return;
    if (enforce.version === old.policy.enforce.version && levels.indexOf(enforce.level) <= levels.indexOf(old.policy.enforce.level)) return;
    if (this.exemptions.namespaces.includes(a.name)) return;
    for (const w of await this.existingPodWarnings(a.name, enforce)) a.warnings?.push(w);
  }

  /** Upstream's warnings for the pods that break a namespace's new enforce level: one per distinct set of reasons. */
  private async existingPodWarnings(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const pods = (await this.lookups.list('pods')).filter((p) => p.metadata?.namespace === namespace);
    const checked = pods.slice(0, namespaceMaxPodsToCheck);
    const byReason = new Map<string, { first: string; count: number }>();
    for (const pod of checked) {
      const results = evaluatePod(enforce.level, pod.metadata ?? {}, pod.spec ?? { containers: [] });
      if (!results.length) continue;
      const reason = forbiddenReason(results);
      const name = pod.metadata?.name ?? '';
      const seen = byReason.get(reason);
      if (!seen) byReason.set(reason, { first: name, count: 1 });
      else {
        seen.count++;
        if (name < seen.first) seen.first = name;
      }
    }
    const warnings: string[] = [];
    if (checked.length < pods.length) warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
    if (byReason.size) warnings.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
    const podWarnings = [...byReason].map(([reason, { first, count }]) => {
      if (count === 1) return `${first}: ${reason}`;
      return `${first} (and ${count - 1} other ${count === 2 ? 'pod' : 'pods'}): ${reason}`;
    });
    return [...warnings, ...podWarnings.sort()];
  }
}

const appArmorAnnotationPrefix = 'container.apparmor.security.beta.kubernetes.io/';

/**
 * Whether a pod update can change what PodSecurity decides: AppArmor annotations, or the spec
 * beyond what a running pod may change anyway (images, activeDeadlineSeconds, tolerations), as upstream.
 */
function isSignificantPodUpdate(pod: Pod, old: Pod | undefined): boolean {
  if (!old) return true;
  const appArmor = (p: Pod) => Object.entries(p.metadata?.annotations ?? {}).filter(([k]) => k.startsWith(appArmorAnnotationPrefix));
  if (!deepEqual(appArmor(pod), appArmor(old))) return true;
  const comparable = (spec: PodSpec | undefined) => {
    const { activeDeadlineSeconds: _d, tolerations: _t, ...rest } = spec ?? { containers: [] };
    const strip = <C extends { image?: string }>(cs: C[] | undefined) => cs?.map(({ image: _i, ...c }) => c);
    return { ...rest, containers: strip(rest.containers), initContainers: strip(rest.initContainers), ephemeralContainers: strip(rest.ephemeralContainers) };
  };
  return !deepEqual(comparable(pod.spec), comparable(old.spec));
}
