// ControllerRevision history, as upstream's pkg/controller/history (shared by the DaemonSet and
// StatefulSet controllers): a revision stores a patch that re-applies a template; its name is the
// parent's name and an FNV-32 hash of that patch (plus the parent's collisionCount, so a clash of
// names with different data moves to a new name); the parent lists the revisions it owns, adopts
// matching orphans, and truncates the old ones beyond revisionHistoryLimit.
import type { ControllerRevision } from 'kubernetes-types/apps/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import type { Selector } from '../../api/labels.js';
import type { Client } from '../../client/client.js';
import type { MetaObject } from '../../client/indexer.js';
import { getControllerOf, newControllerRef } from './refmanager.js';

/** The label a revision carries with its hash (upstream's history.ControllerRevisionHashLabel). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
/** The pod label naming the revision a DaemonSet's or StatefulSet's pod was made from. */
export const POD_REVISION_LABEL = 'controller-revision-hash';

export const controllerRevisionsResource = findResource('apps', 'v1', 'controllerrevisions')!;

/** Upstream's rand.SafeEncodeString alphabet: no vowels, no look-alikes, so no words. */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** FNV-1 (not 1a), 32 bits, as Go's hash/fnv New32. */
function fnv1_32(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let h = seed;
  for (const b of bytes) h = (Math.imul(h, 0x01000193) ^ b) >>> 0;
  return h;
}

export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHABET[s.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

/**
 * JSON as Go's encoding/json writes a map: keys sorted, and <, >, & and the line separators
 * escaped. A revision's data is compared and hashed in this form.
 */
export function canonicalJSON(value: unknown, depth = 0): string {
  if (depth > 100) throw new Error('revision data nested too deeply');
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJSON(v ?? null, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${goString(k)}:${canonicalJSON((value as Record<string, unknown>)[k], depth + 1)}`);
    return `{${entries.join(',')}}`;
  }
  if (typeof value === 'string') return goString(value);
  return JSON.stringify(value ?? null);
}

const goString = (s: string) => JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Upstream's HashControllerRevision: the data's bytes, then the collision count in decimal. */
export function hashControllerRevision(data: unknown, collisionCount?: number): string {
  const enc = new TextEncoder();
  let h = fnv1_32(enc.encode(canonicalJSON(data)));
  if (collisionCount !== undefined) h = fnv1_32(enc.encode(String(collisionCount)), h);
  return safeEncodeString(String(h));
}

/** Upstream's ControllerRevisionName: prefix-hash, the prefix cut to 223 characters. */
export function controllerRevisionName(prefix: string, hash: string): string {
  return `${prefix.slice(0, 223)}-${hash}`;
}

/**
 * The patch a revision stores (upstream's getPatch of both controllers): the parent's pod template
 * with `$patch: replace`, under spec.template.
 */
export function templatePatch(template: unknown): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: { ...(structuredClone(template ?? {}) as Record<string, unknown>), $patch: 'replace' } } };
}

export interface RevisionParent extends MetaObject {
  apiVersion: string;
  kind: string;
}

/** Upstream's NewControllerRevision: owned by parent, labelled with the template's labels and the hash. */
export function newControllerRevision(parent: RevisionParent, templateLabels: Record<string, string> | undefined, data: unknown, revision: number, collisionCount?: number): ControllerRevision {
  const hash = hashControllerRevision(data, collisionCount);
  const m = parent.metadata ?? {};
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(m.name ?? '', hash),
      namespace: m.namespace,
      labels: { ...templateLabels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ownerReferences: [newControllerRef(parent, parent.apiVersion, parent.kind)],
    },
    data: data as object,
    revision,
  };
}

/** Upstream's EqualRevision: the same data. */
export function equalRevision(a: ControllerRevision | undefined, b: ControllerRevision | undefined): boolean {
  if (!a || !b) return a === b;
  return canonicalJSON(a.data ?? null) === canonicalJSON(b.data ?? null);
}

/** Upstream's FindEqualRevisions. */
export function findEqualRevisions(revisions: readonly ControllerRevision[], needle: ControllerRevision): ControllerRevision[] {
  const want = canonicalJSON(needle.data ?? null);
  return revisions.filter((r) => canonicalJSON(r.data ?? null) === want);
}

/** Upstream's SortControllerRevisions: by revision, then creation, then name; a new array. */
export function sortControllerRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort(
    (a, b) =>
      (a.revision ?? 0) - (b.revision ?? 0) ||
      (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') ||
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}

/** Upstream's nextRevision: one more than the highest. */
export function nextRevision(revisions: readonly ControllerRevision[]): number {
  return revisions.reduce((max, r) => Math.max(max, r.revision ?? 0), 0) + 1;
}

/**
 * The revisions to delete so that at most limit remain besides those in use (the current and
 * update revisions, those live pods were made from): the oldest first, as upstream's truncateHistory.
 */
export function revisionsToTruncate(revisions: readonly ControllerRevision[], inUse: ReadonlySet<string>, limit: number): ControllerRevision[] {
  const old = sortControllerRevisions(revisions).filter((r) => !inUse.has(r.metadata?.name ?? ''));
  return old.slice(0, Math.max(0, old.length - Math.max(0, limit)));
}

/** Reads and writes ControllerRevisions for a parent (upstream's realHistory). */
export class ControllerHistory {
  constructor(private readonly client: Client) {}

  private revisions(namespace: string | undefined) {
    return this.client.resource<ControllerRevision>(controllerRevisionsResource).namespace(namespace);
  }

  /**
   * The revisions (from a lister's list of the namespace) the parent owns, after adopting the
   * orphans its selector matches; those another controller owns are left alone.
   */
  async claimControllerRevisions(parent: RevisionParent, selector: Selector, candidates: readonly ControllerRevision[]): Promise<ControllerRevision[]> {
    const uid = parent.metadata?.uid;
    const owned: ControllerRevision[] = [];
    for (const rev of candidates) {
      const ref = getControllerOf(rev);
      if (ref) {
        if (ref.uid === uid) owned.push(rev);
        continue;
      }
      if (parent.metadata?.deletionTimestamp || rev.metadata?.deletionTimestamp || !selector.matches(rev.metadata?.labels)) continue;
      try {
        const patch = { metadata: { ownerReferences: [newControllerRef(parent, parent.apiVersion, parent.kind)], uid: rev.metadata?.uid } };
        owned.push(await this.revisions(rev.metadata?.namespace).patch(rev.metadata?.name ?? '', 'strategic', patch));
      } catch (err) {
        if (!hasStatusCode(err, 404, 422)) throw err;
      }
    }
    return owned;
  }

  /**
   * Upstream's CreateControllerRevision: creates revision under the name its hash and the
   * collision count give; an existing revision of that name with the same data is returned, one
   * with other data bumps the collision count and tries the next name. Returns the revision and
   * the collision count the caller must store in its status.
   */
  async createControllerRevision(parent: RevisionParent, revision: ControllerRevision, collisionCount: number): Promise<{ revision: ControllerRevision; collisionCount: number }> {
    const client = this.revisions(parent.metadata?.namespace);
    for (let count = collisionCount; ; count++) {
      if (count - collisionCount > 100) throw new Error(`too many hash collisions creating a ControllerRevision for ${parent.metadata?.name}`);
      const clone = structuredClone(revision);
      const hash = hashControllerRevision(revision.data, count);
      clone.metadata!.name = controllerRevisionName(parent.metadata?.name ?? '', hash);
      // The hash labels follow the name (a DaemonSet's pods are labelled with it).
      for (const label of [CONTROLLER_REVISION_HASH_LABEL, POD_REVISION_LABEL]) if (clone.metadata?.labels?.[label] !== undefined) clone.metadata.labels[label] = hash;
      try {
        return { revision: await client.create(clone), collisionCount: count };
      } catch (err) {
        if (!hasStatusCode(err, 409)) throw err;
      }
      const exists = await client.get(clone.metadata!.name!);
      if (equalRevision(exists, clone)) return { revision: exists, collisionCount: count };
    }
  }

  /** Upstream's UpdateControllerRevision: sets revision.revision (a fresh read on conflict). */
  async updateControllerRevision(revision: ControllerRevision, newRevision: number): Promise<ControllerRevision> {
    const client = this.revisions(revision.metadata?.namespace);
    let current = revision;
    for (let attempt = 0; ; attempt++) {
      if (current.revision === newRevision) return current;
      try {
        return await client.update({ ...structuredClone(current), revision: newRevision });
      } catch (err) {
        if (!hasStatusCode(err, 409) || attempt >= 4) throw err;
        current = await client.get(revision.metadata?.name ?? '');
      }
    }
  }

  async deleteControllerRevision(revision: ControllerRevision): Promise<void> {
    try {
      await this.revisions(revision.metadata?.namespace).delete(revision.metadata?.name ?? '', { preconditions: { uid: revision.metadata?.uid } });
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
  }
}
