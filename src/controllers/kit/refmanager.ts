// Adoption and release, as upstream's controller_ref_manager.go: a controller claims the pods its
// selector matches — orphans are adopted (a controller reference patched in), owned pods that no
// longer match are released (the reference patched out) — and never touches pods another
// controller owns. Adoption first re-reads the owner (canAdopt), so a controller deleted a moment
// ago does not adopt on the strength of a stale cache.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Selector } from '../../api/labels.js';
import { hasStatusCode } from '../../api/errors.js';
import type { Indexer, MetaObject } from '../../client/indexer.js';
import type { PodControl } from './podcontrol.js';

/** The object's controller reference (controller=true), if any. */
export function getControllerOf(obj: MetaObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** A controller reference to owner, as controllers set it on what they create. */
/** Upstream's resolveControllerRef: the object of this kind a controller reference names, if it is still that object (same UID). */
export function resolveControllerRef<T extends MetaObject>(
  indexer: Pick<Indexer<T>, 'getByKey'>,
  kind: string,
  namespace: string,
  ref: Pick<OwnerReference, 'kind' | 'name' | 'uid'> | undefined,
): T | undefined {
  if (ref?.kind !== kind) return undefined;
  const obj = indexer.getByKey(`${namespace}/${ref.name}`);
  return obj?.metadata?.uid === ref.uid ? obj : undefined;
}

export function newControllerRef(owner: MetaObject, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/**
 * Upstream's RecheckDeletionTimestamp: a canAdopt that fails when the fresh owner (read by
 * getObject, which should also check the UID is still the same) is being deleted.
 */
export function recheckDeletionTimestamp(getObject: () => Promise<MetaObject>): () => Promise<void> {
  return async () => {
    let obj: MetaObject;
    try {
      obj = await getObject();
    } catch (err) {
      throw new Error(`can't recheck DeletionTimestamp: ${(err as Error).message}`, { cause: err });
    }
    const m = obj.metadata ?? {};
    if (m.deletionTimestamp) throw new Error(`${m.namespace ?? ''}/${m.name ?? ''} has just been deleted at ${m.deletionTimestamp}`);
  };
}

export interface ClaimFunctions<T> {
  match(obj: T): boolean;
  adopt(obj: T): Promise<void>;
  release(obj: T): Promise<void>;
}

/** Upstream's BaseControllerRefManager: the claim rules, for any kind of dependent. */
export class BaseControllerRefManager {
  private canAdoptResult?: Promise<void>;

  constructor(
    readonly controller: MetaObject,
    readonly selector: Selector,
    private readonly canAdoptFunc?: () => Promise<void>,
  ) {}

  /** Runs canAdoptFunc at most once per manager (one sync), as upstream's sync.Once. */
  canAdopt(): Promise<void> {
    this.canAdoptResult ??= this.canAdoptFunc ? this.canAdoptFunc() : Promise.resolve();
    return this.canAdoptResult;
  }

  /** True when obj is (now) owned by this controller. */
  async claimObject<T extends MetaObject>(obj: T, fns: ClaimFunctions<T>): Promise<boolean> {
    const ref = getControllerOf(obj);
    const ownerMeta = this.controller.metadata ?? {};
    if (ref) {
      if (ref.uid !== ownerMeta.uid) return false; // another controller's
      if (fns.match(obj)) return true;
      // Ours but no longer selected: release it, unless we are going away anyway.
      if (ownerMeta.deletionTimestamp) return false;
      try {
        await fns.release(obj);
      } catch (err) {
        if (hasStatusCode(err, 404)) return false;
        throw err;
      }
      return false;
    }
    // An orphan: adopt it when it matches, neither side is being deleted, and it is in our namespace.
    if (ownerMeta.deletionTimestamp || !fns.match(obj)) return false;
    if (obj.metadata?.deletionTimestamp) return false;
    if (ownerMeta.namespace && ownerMeta.namespace !== obj.metadata?.namespace) return false;
    try {
      await fns.adopt(obj);
    } catch (err) {
      if (hasStatusCode(err, 404)) return false;
      throw err;
    }
    return true;
  }
}

export interface PodControllerRefManagerOptions {
  podControl: PodControl;
  controller: MetaObject;
  selector: Selector;
  /** The controller's kind, e.g. apps/v1 ReplicaSet. */
  controllerApiVersion: string;
  controllerKind: string;
  canAdopt?: () => Promise<void>;
  /** Finalizers adoption adds and release removes (Jobs' batch.kubernetes.io/job-tracking). */
  finalizers?: string[];
}

export class PodControllerRefManager extends BaseControllerRefManager {
  constructor(private readonly o: PodControllerRefManagerOptions) {
    super(o.controller, o.selector, o.canAdopt);
  }

  /**
   * The pods this controller owns after adopting and releasing; errors of single pods are gathered
   * (the claimed list is still returned with them, as upstream's aggregate).
   */
  async claimPods(pods: readonly Pod[], ...filters: ((pod: Pod) => boolean)[]): Promise<{ claimed: Pod[]; errors: Error[] }> {
    const fns: ClaimFunctions<Pod> = {
      match: (pod) => this.selector.matches(pod.metadata?.labels) && filters.every((f) => f(pod)),
      adopt: (pod) => this.adoptPod(pod),
      release: (pod) => this.releasePod(pod),
    };
    const claimed: Pod[] = [];
    const errors: Error[] = [];
    for (const pod of pods) {
      try {
        if (await this.claimObject(pod, fns)) claimed.push(pod);
      } catch (err) {
        errors.push(err as Error);
      }
    }
    return { claimed, errors };
  }

  async adoptPod(pod: Pod): Promise<void> {
    const m = pod.metadata ?? {};
    try {
      await this.canAdopt();
    } catch (err) {
      throw new Error(`can't adopt Pod ${m.namespace}/${m.name} (${m.uid}): ${(err as Error).message}`, { cause: err });
    }
    const ref = newControllerRef(this.controller, this.o.controllerApiVersion, this.o.controllerKind);
    const finalizers = this.o.finalizers?.length ? { finalizers: this.o.finalizers } : {};
    // The pod's UID pins the patch to the pod that was read.
    await this.o.podControl.patchPod(m.namespace ?? '', m.name ?? '', { metadata: { ownerReferences: [ref], uid: m.uid, ...finalizers } });
  }

  async releasePod(pod: Pod): Promise<void> {
    const m = pod.metadata ?? {};
    const finalizers = this.o.finalizers?.length ? { '$deleteFromPrimitiveList/finalizers': this.o.finalizers } : {};
    try {
      await this.o.podControl.patchPod(m.namespace ?? '', m.name ?? '', {
        metadata: { ownerReferences: [{ $patch: 'delete', uid: this.controller.metadata?.uid }], uid: m.uid, ...finalizers },
      });
    } catch (err) {
      // Gone, or no longer ours (422): nothing to release.
      if (hasStatusCode(err, 404, 422)) return;
      throw err;
    }
  }
}
