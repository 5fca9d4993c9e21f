// The pods/eviction subresource as upstream's EvictionREST (pkg/registry/core/pod/storage/eviction.go):
// a pod covered by a PodDisruptionBudget is deleted only while the budget allows a disruption, which the
// eviction spends (disruptionsAllowed - 1, the pod recorded in disruptedPods) before the delete.
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { KubeObject, StoredObject } from '../../api/meta.js';
import type { Pod } from '../../api/types.js';
import { conflict, forbidden, hasStatusCode, internalError, notFound, StatusError } from '../../api/errors.js';
import { everything } from '../../api/labels.js';
import { everythingFields } from '../../api/fields.js';
import { podDisruptionBudgetsFor, withDisruptionAllowedCondition } from '../../api/pdb.js';
import { podConditionTrue } from '../../api/pod/status.js';
import { withPodCondition } from '../../api/pod/conditions.js';
import { rfc3339 } from '../../api/time.js';
import { writeObject } from '../http/respond.js';
import { Selection } from '../registry/selection.js';
import type { DeleteOptions } from '../registry/registry.js';
import { dryRunOf, type ResourceRequest } from './context.js';

/** Past this many approved but unobserved evictions the budget refuses more (MaxDisruptedPodSize). */
const MAX_DISRUPTED_POD_SIZE = 2000;
/** Upstream's EvictionsRetry allows 20 attempts on conflicts. */
const EVICTION_RETRIES = 20;

const pods = { group: '', resource: 'pods' };
const tooManyMessage = "Cannot evict pod as it would violate the pod's disruption budget.";

/** A 429 carrying the DisruptionBudget cause kubectl drain prints. */
function budgetViolation(cause: string, retryAfterSeconds: number): StatusError {
  return new StatusError(429, 'TooManyRequests', tooManyMessage, {
    causes: [{ reason: 'DisruptionBudget' as never, message: cause }],
    ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
  });
}

/** The budget's status is older than its spec: retry once the controller caught up. */
const stillProcessing = (name: string) => budgetViolation(`The disruption budget ${name} is still being processed by the server.`, 10);

interface Eviction {
  metadata?: { name?: string };
  deleteOptions?: DeleteOptions;
}

/** propagateDryRun: the body's deleteOptions.dryRun and the query's must agree when both are set. */
function deleteOptionsOf(eviction: Eviction, queryDryRun: string[]): DeleteOptions {
  const options = { ...eviction.deleteOptions };
  const body = options.dryRun ?? [];
  if (body.length === 0) options.dryRun = queryDryRun;
  else if (queryDryRun.length > 0 && JSON.stringify(body) !== JSON.stringify(queryDryRun)) {
    throw internalError(`Non-matching dry-run options in request and content: [${queryDryRun.join(' ')}] and [${body.join(' ')}]`);
  }
  dryRunOf(options.dryRun ?? []);
  return options;
}

const terminal = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
/** canIgnorePDB: terminal, not yet running (Pending) or terminating pods are deleted without asking a budget. */
const canIgnorePDB = (pod: Pod) => terminal(pod) || pod.status?.phase === 'Pending' || !!pod.metadata?.deletionTimestamp;
/** shouldEnforceResourceVersion: the delete must not race a pod turning Ready, unless it already terminated or terminates. */
const shouldEnforceResourceVersion = (pod: Pod) => !terminal(pod) && !pod.metadata?.deletionTimestamp;
const withResourceVersion = (options: DeleteOptions, resourceVersion: string | undefined): DeleteOptions => ({
  ...options,
  preconditions: { ...options.preconditions, resourceVersion },
});

export async function evict(r: ResourceRequest, eviction: Eviction): Promise<void> {
  const original = deleteOptionsOf(eviction, r.url.searchParams.getAll('dryRun'));
  const dryRun = (original.dryRun ?? []).length > 0;
  const pinned = !!original.preconditions?.resourceVersion;

  // Pods a budget does not guard are deleted at once, retried on conflicts unless the caller pinned a version.
  let pod: Pod & StoredObject;
  for (let attempt = 0; ; attempt++) {
    pod = (await r.registry.get(r.info.namespace, r.info.name)) as Pod & StoredObject;
    if (!canIgnorePDB(pod)) break;
    const options = shouldEnforceResourceVersion(pod) && !pinned ? withResourceVersion(original, pod.metadata.resourceVersion) : original;
    try {
      await addConditionAndDeletePod(r, options, dryRun);
    } catch (err) {
      if (hasStatusCode(err, 409) && !pinned && attempt + 1 < EVICTION_RETRIES) continue;
      throw err;
    }
    writeObject(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    return;
  }

  const pdbRegistry = r.registries.of('policy', 'poddisruptionbudgets');
  const all = (await pdbRegistry.list(r.info.namespace, { selection: new Selection(everything(), everythingFields()) })).items as unknown as PodDisruptionBudget[];
  const pdbs = podDisruptionBudgetsFor(all, pod);
  if (pdbs.length > 1) {
    // Upstream returns this Status as the result, not as an error: no reason, code 500.
    const message = 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
    writeObject(r.res, 500, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
    return;
  }
  const pdb = pdbs[0];
  // An unready pod whose loss leaves the budget whole is deleted without spending a disruption, pinned to
  // the version seen so that it cannot have turned Ready meanwhile.
  let unhealthyDelete = false;
  if (pdb) {
    if (!podConditionTrue(pod, 'Ready')) {
      const status = pdb.status;
      if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') unhealthyDelete = true;
      else if (status && status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0) unhealthyDelete = true;
    }
    if (!unhealthyDelete) await spendDisruption(r, pdb.metadata!.name!, pod.metadata.name!, dryRun);
  }

  const options = unhealthyDelete ? withResourceVersion(original, pod.metadata.resourceVersion) : original;
  try {
    await addConditionAndDeletePod(r, options, dryRun);
  } catch (err) {
    // The pod changed since it was judged unhealthy: the client retries on a 429.
    if (hasStatusCode(err, 409) && unhealthyDelete && !pinned) throw stillProcessing(pdb!.metadata!.name!);
    throw err;
  }
  writeObject(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

/**
 * checkAndDecrement on the stored budget, retried on write conflicts: refuses while the status is stale,
 * negative, or full of unobserved evictions, or when no disruption is left; else spends one.
 */
async function spendDisruption(r: ResourceRequest, pdbName: string, podName: string, dryRun: boolean): Promise<void> {
  const registry = r.registries.of('policy', 'poddisruptionbudgets');
  const now = rfc3339(r.clock.now());
  try {
    await registry.update(
      r.info.namespace,
      pdbName,
      (current) => {
        if (!current) throw notFound({ group: 'policy', resource: 'poddisruptionbudgets' }, pdbName);
        const pdb = current as unknown as PodDisruptionBudget & StoredObject;
        const status = pdb.status ?? { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 };
        if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw stillProcessing(pdbName);
        const denied = (why: string) => forbidden(`poddisruptionbudget.policy "${pdbName}" is forbidden: ${why}`, { name: pdbName, group: 'policy', kind: 'poddisruptionbudget' });
        if (status.disruptionsAllowed < 0) throw denied('pdb disruptions allowed is negative');
        if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) throw denied('DisruptedPods map too big - too many evictions not confirmed by PDB controller');
        if (status.disruptionsAllowed === 0) {
          throw budgetViolation(`The disruption budget ${pdbName} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`, 0);
        }
        let next = { ...status, disruptionsAllowed: status.disruptionsAllowed - 1 };
        if (next.disruptionsAllowed === 0) next = withDisruptionAllowedCondition(next, now);
        // Tell the controller the pod is about to go, so it does not count it as healthy meanwhile.
        next.disruptedPods = { ...status.disruptedPods, [podName]: now };
        // A dry run checks the budget and writes nothing: returning the object unchanged writes nothing.
        return (dryRun ? current : { ...current, status: next }) as KubeObject;
      },
      { dryRun, user: r.user, subresource: 'status' },
    );
  } catch (err) {
    if (hasStatusCode(err, 409)) {
      throw new StatusError(504, 'Timeout', `Timeout: couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`, { retryAfterSeconds: 10 });
    }
    throw err;
  }
}

/**
 * Marks the pod with the DisruptionTarget condition (checking the delete's preconditions against the
 * latest pod), then deletes it with the preconditions moved to the version that write produced.
 */
async function addConditionAndDeletePod(r: ResourceRequest, options: DeleteOptions, dryRun: boolean): Promise<void> {
  let deleteOptions = options;
  if (!dryRun) {
    const now = rfc3339(r.clock.now());
    const pre = options.preconditions;
    const podGroupResource = { group: '', resource: 'Pod' };
    const result = await r.registry.update(
      r.info.namespace,
      r.info.name,
      (current) => {
        if (!current) throw notFound(pods, r.info.name);
        if (pre?.uid && pre.uid !== current.metadata.uid) {
          throw conflict(
            podGroupResource,
            r.info.name,
            `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata.uid}). The object might have been deleted and then recreated`,
          );
        }
        if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
          throw conflict(
            podGroupResource,
            r.info.name,
            `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${current.metadata.resourceVersion}). The object might have been modified`,
          );
        }
        const condition = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: now, lastProbeTime: null as never };
        return { ...current, status: withPodCondition(current.status as Pod['status'], condition) };
      },
      { dryRun, user: r.user, subresource: 'status' },
    );
    if (pre?.resourceVersion) deleteOptions = withResourceVersion(options, result.object.metadata.resourceVersion);
  }
  await r.registry.delete(r.info.namespace, r.info.name, { ...deleteOptions, dryRun: undefined }, { dryRun, user: r.user, subresource: '' });
}
