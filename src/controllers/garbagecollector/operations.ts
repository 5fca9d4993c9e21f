// The garbage collector's writes, as upstream's operations.go: each reads the live object first and
// pins its write to what it read (UID and resourceVersion preconditions), so an object that changed
// or was replaced under the same name is never acted on from a stale view.
import { isDeepStrictEqual } from 'node:util';
import type { DeleteOptions, OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { ObjectMeta } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import { hasStatusCode } from '../../api/errors.js';
import type { MetaObject } from '../../client/indexer.js';
import type { ObjectRef } from './graph.js';

/** The calls the garbage collector makes on one resource; the client's ResourceClient provides them. */
export interface ResourceAccess {
  namespace(ns: string | undefined): ResourceAccess;
  get(name: string): Promise<MetaObject>;
  patch(name: string, type: 'merge', body: unknown): Promise<MetaObject>;
  delete(name: string, opts?: DeleteOptions): Promise<unknown>;
}

/** The part of the Client the garbage collector uses. */
export interface GarbageCollectorClient {
  resource(info: ResourceInfo): ResourceAccess;
}

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';


// Conflicts mean someone else wrote in between; a few fresh reads settle it, else the queue retries.
const maxConflictRetries = 5;

function resourceOf(client: GarbageCollectorClient, ref: ObjectRef): ResourceAccess {
  return client.resource(ref.info).namespace(ref.info.namespaced ? ref.namespace : undefined);
}

/** The live object, or undefined when it is gone or its name now belongs to an object with another UID. */
export async function getLive(client: GarbageCollectorClient, ref: ObjectRef): Promise<MetaObject | undefined> {
  try {
    const obj = await resourceOf(client, ref).get(ref.name);
    return obj.metadata?.uid === ref.uid ? obj : undefined;
  } catch (err) {
    if (hasStatusCode(err, 404)) return undefined;
    throw err;
  }
}

/**
 * Deletes the object as read in `latest`. When the resourceVersion precondition fails but the
 * ownerReferences are still those the decision was made on, the deletion stands (as upstream).
 */
export async function deleteObject(client: GarbageCollectorClient, ref: ObjectRef, latest: MetaObject, policy: PropagationPolicy): Promise<void> {
  const rc = resourceOf(client, ref);
  const resourceVersion = latest.metadata?.resourceVersion;
  const remove = async (withVersion: boolean) => {
    try {
      await rc.delete(ref.name, { propagationPolicy: policy, preconditions: { uid: ref.uid, resourceVersion: withVersion ? resourceVersion : undefined } });
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
  };
  try {
    await remove(resourceVersion !== undefined);
  } catch (err) {
    if (!hasStatusCode(err, 409) || resourceVersion === undefined) throw err;
    const live = await getLive(client, ref);
    if (!live) return;
    if (!isDeepStrictEqual(live.metadata?.ownerReferences ?? [], latest.metadata?.ownerReferences ?? [])) throw err;
    await remove(false);
  }
}

/**
 * Reads the object, asks `change` for the metadata fields to write, and merge-patches them with the
 * read resourceVersion as precondition. Nothing happens when the object is gone or change returns undefined.
 */
async function patchMetadata(client: GarbageCollectorClient, ref: ObjectRef, change: (meta: ObjectMeta) => Record<string, unknown> | undefined): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const live = await getLive(client, ref);
    if (!live?.metadata) return;
    const fields = change(live.metadata);
    if (!fields) return;
    try {
      await resourceOf(client, ref).patch(ref.name, 'merge', { metadata: { ...fields, resourceVersion: live.metadata.resourceVersion } });
      return;
    } catch (err) {
      if (hasStatusCode(err, 404)) return;
      if (!hasStatusCode(err, 409) || attempt >= maxConflictRetries) throw err;
    }
  }
}

// A merge patch replaces lists whole; null removes the field once the list is empty.
const listOrNull = <T>(list: T[]): T[] | null => (list.length ? list : null);

/** Drops the references to the given owner UIDs from the object. */
export function removeOwnerReferences(client: GarbageCollectorClient, ref: ObjectRef, ownerUIDs: ReadonlySet<string>): Promise<void> {
  return patchMetadata(client, ref, (meta) => {
    const refs = meta.ownerReferences ?? [];
    const kept = refs.filter((r) => !ownerUIDs.has(r.uid));
    return kept.length === refs.length ? undefined : { ownerReferences: listOrNull(kept) };
  });
}

/** Sets blockOwnerDeletion=false on every blocking reference: breaks foreground cycles (as upstream). */
export function unblockOwnerReferences(client: GarbageCollectorClient, ref: ObjectRef): Promise<void> {
  return patchMetadata(client, ref, (meta) => {
    const refs = meta.ownerReferences ?? [];
    if (!refs.some((r) => r.blockOwnerDeletion === true)) return undefined;
    return { ownerReferences: refs.map((r): OwnerReference => (r.blockOwnerDeletion === true ? { ...r, blockOwnerDeletion: false } : r)) };
  });
}

/** Removes one finalizer; when it was the last of a deleted object, the API server deletes it. */
export function removeFinalizer(client: GarbageCollectorClient, ref: ObjectRef, finalizer: string): Promise<void> {
  return patchMetadata(client, ref, (meta) => {
    const finalizers = meta.finalizers ?? [];
    return finalizers.includes(finalizer) ? { finalizers: listOrNull(finalizers.filter((f) => f !== finalizer)) } : undefined;
  });
}
