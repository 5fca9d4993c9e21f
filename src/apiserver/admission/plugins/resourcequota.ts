// ResourceQuota, as upstream's admission plugin: a namespaced create (or an update that can change
// usage) is measured by its resource's evaluator against every quota of the namespace that tracks it;
// it is refused when it would exceed one, and otherwise charged into the quotas' status.used before
// the object is stored. Charges are compare-and-swap writes on the quota (several API servers may
// admit at once) and, within this server, one namespace's requests are charged one at a time, as
// upstream's per-namespace work queue does; the quota controller later recalculates the truth.
import type { ResourceQuota } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../../api/meta.js';
import { evaluatorFor, quotaMatches, type Evaluator } from '../../../api/quota/evaluators.js';
import {
  addUsage,
  exceeded,
  maskUsage,
  parseResourceList,
  prettyPrint,
  removeZeros,
  subtractNonNegative,
  toResourceList,
  usageEquals,
} from '../../../api/quota/resources.js';
import { hasStatusCode } from '../../../api/errors.js';
import type { Clock } from '../../../util/clock.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, AdmissionLookups, ValidatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'ResourceQuota';

/** Charges that lose a compare-and-swap are re-read and retried this many times (upstream's retries). */
const maxConflictRetries = 3;

/** What the plugin needs beyond the caches: fresh quotas after a lost race, and the status write. */
export interface ResourceQuotaAccess {
  /** The namespace's quotas, read from storage rather than the cache. */
  list(namespace: string): Promise<ResourceQuota[]>;
  /** Writes the quota's status on the condition that its resourceVersion is unchanged (a 409 otherwise). */
  updateStatus(quota: ResourceQuota): Promise<void>;
}

export interface ResourceQuotaAdmissionOptions {
  lookups: AdmissionLookups;
  quotas: ResourceQuotaAccess;
  clock: Clock;
}

const hardNames = (q: ResourceQuota) => Object.keys(q.status?.hard ?? {});

/**
 * upstream's CheckRequest: refuses the request (a Forbidden StatusError) or returns the quotas whose
 * status.used it changes, with their new usage.
 */
export function checkRequest(quotas: readonly ResourceQuota[], a: AdmissionAttributes, evaluator: Evaluator, now: number): ResourceQuota[] {
  const obj = a.object;
  if (!obj) return [];
  const interesting: ResourceQuota[] = [];
  for (const quota of quotas) {
    const hard = hardNames(quota);
    if (!quotaMatches(evaluator, quota, obj, hard)) continue;
    const restricted = evaluator.matchingResources(hard);
    const name = quota.metadata?.name ?? '';
    const why = evaluator.constraints(restricted, obj);
    if (why) throw admissionForbidden(a, `failed quota: ${name}: ${why}`);
    const used = quota.status?.used ?? {};
    if (restricted.some((r) => used[r] === undefined)) {
      throw admissionForbidden(a, `status unknown for quota: ${name}, resources: ${[...restricted].sort().join(',')}`);
    }
    interesting.push(quota);
  }
  if (interesting.length === 0) return [];
  const input = evaluator.usage(obj, now);
  const negative = [...input].filter(([, v]) => v.sign() < 0).map(([k]) => k);
  if (negative.length) throw admissionForbidden(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  const old = a.operation === 'UPDATE' && a.oldObject?.metadata?.resourceVersion ? (a.oldObject as KubeObject) : undefined;
  const charged: ResourceQuota[] = [];
  for (const quota of interesting) {
    const hard = parseResourceList(quota.status?.hard);
    // An update pays only for what it adds over the old object, when the quota counted that one too.
    const delta = removeZeros(old && quotaMatches(evaluator, quota, old, [...hard.keys()]) ? subtractNonNegative(input, evaluator.usage(old, now)) : input);
    if (delta.size === 0) continue;
    const used = parseResourceList(quota.status?.used);
    const requested = maskUsage(delta, hard.keys());
    const newUsage = addUsage(used, requested);
    const over = exceeded(maskUsage(newUsage, requested.keys()), hard);
    if (over.length) {
      throw admissionForbidden(
        a,
        `exceeded quota: ${quota.metadata?.name ?? ''}, requested: ${prettyPrint(maskUsage(requested, over))}, used: ${prettyPrint(maskUsage(used, over))}, limited: ${prettyPrint(maskUsage(hard, over))}`,
      );
    }
    if (usageEquals(newUsage, used)) continue;
    charged.push({ ...quota, status: { ...quota.status, used: toResourceList(newUsage) } });
  }
  return charged;
}

export class ResourceQuotaAdmission implements ValidatingAdmissionPlugin {
  readonly name = pluginName;
  /** The tail of each namespace's chain of evaluations. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly opts: ResourceQuotaAdmissionOptions) {}

  handles(a: AdmissionAttributes): boolean {
    // Subresource writes and cluster-scoped objects are never charged.
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.subresource === '' && a.namespace !== '';
  }

  validate(a: AdmissionAttributes): Promise<void> {
    const evaluator = evaluatorFor(a.resource.group, a.resource.resource);
    if (!evaluator || !evaluator.handles(a.operation as 'CREATE' | 'UPDATE')) return Promise.resolve();
    const ns = a.namespace;
    const run = (this.inFlight.get(ns) ?? Promise.resolve()).then(() => this.evaluate(a, evaluator));
    const tail = run.catch(() => undefined);
    this.inFlight.set(ns, tail);
    void tail.then(() => {
      if (this.inFlight.get(ns) === tail) this.inFlight.delete(ns);
    });
    return run;
  }

  private async evaluate(a: AdmissionAttributes, evaluator: Evaluator): Promise<void> {
    let quotas = (await this.opts.lookups.list('resourcequotas')).filter((q) => q.metadata?.namespace === a.namespace);
    if (quotas.length === 0) return;
    const done = new Set<string>();
    for (let attempt = 0; ; attempt++) {
      const charged = checkRequest(
        quotas.filter((q) => !done.has(q.metadata?.name ?? '')),
        a,
        evaluator,
        this.opts.clock.now(),
      );
      if (a.dryRun) return;
      let lost = false;
      for (const quota of charged) {
        try {
          await this.opts.quotas.updateStatus(quota);
          done.add(quota.metadata?.name ?? '');
        } catch (err) {
          if (!hasStatusCode(err, 409) || attempt >= maxConflictRetries) throw err;
          lost = true;
        }
      }
      if (!lost) return;
      quotas = await this.opts.quotas.list(a.namespace);
    }
  }
}
