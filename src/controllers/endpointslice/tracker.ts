// Upstream's EndpointSliceTracker: every slice this controller wrote, per Service, so a sync never
// plans from an informer cache older than its own writes (which would create duplicates or undo a
// change), and the controller's own writes coming back through the informer do not queue the
// Service again. Upstream fails such a sync until the cache catches up; here the sync plans from
// the cache with this controller's newer writes laid over it (current), which is what the cache
// will hold, without waiting for the watch to bring it.
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { LABEL_SERVICE_NAME } from './reconciler.js';

/** What is recorded for a slice this controller deleted. */
const DELETION_EXPECTED = 'deleted';

type Written = EndpointSlice | typeof DELETION_EXPECTED;

/** Resource versions are the store's revisions: numbers that grow with every write. */
const revision = (s: EndpointSlice) => Number(s.metadata?.resourceVersion ?? 0) || 0;

const serviceKeyOf = (slice: EndpointSlice) => `${slice.metadata?.namespace ?? ''}/${slice.metadata?.labels?.[LABEL_SERVICE_NAME] ?? ''}`;

export class EndpointSliceTracker {
  /** Service key → slice UID → the slice as this controller last wrote it. */
  private readonly byService = new Map<string, Map<string, Written>>();

  private gens(slice: EndpointSlice, create = false): Map<string, Written> | undefined {
    const key = serviceKeyOf(slice);
    let gens = this.byService.get(key);
    if (!gens && create) this.byService.set(key, (gens = new Map()));
    return gens;
  }

  has(slice: EndpointSlice): boolean {
    return this.gens(slice)?.has(slice.metadata?.uid ?? '') ?? false;
  }

  /** Whether the slice changed beyond what this controller wrote (so its Service needs a sync). */
  shouldSync(slice: EndpointSlice): boolean {
    const w = this.gens(slice)?.get(slice.metadata?.uid ?? '');
    return w === undefined || (w !== DELETION_EXPECTED && (slice.metadata?.generation ?? 0) > (w.metadata?.generation ?? 0));
  }

  /**
   * The Service's slices as they are after this controller's writes: the cached ones, each replaced
   * by this controller's write when that is newer, without those it deleted, with those it created
   * that the cache has not seen yet.
   */
  current(serviceKey: string, cached: readonly EndpointSlice[]): EndpointSlice[] {
    const written = this.byService.get(serviceKey);
    if (!written) return [...cached];
    const out: EndpointSlice[] = [];
    const seen = new Set<string>();
    for (const slice of cached) {
      const uid = slice.metadata?.uid ?? '';
      seen.add(uid);
      const w = written.get(uid);
      if (w === DELETION_EXPECTED) continue;
      out.push(w && revision(w) > revision(slice) ? w : slice);
    }
    for (const [uid, w] of written) if (w !== DELETION_EXPECTED && !seen.has(uid)) out.push(w);
    return out;
  }

  update(slice: EndpointSlice): void {
    this.gens(slice, true)!.set(slice.metadata?.uid ?? '', slice);
  }

  expectDeletion(slice: EndpointSlice): void {
    this.gens(slice, true)!.set(slice.metadata?.uid ?? '', DELETION_EXPECTED);
  }

  /** Forgets a deleted slice; true when this controller did not expect the deletion. */
  handleDeletion(slice: EndpointSlice): boolean {
    const gens = this.gens(slice);
    const uid = slice.metadata?.uid ?? '';
    const w = gens?.get(uid);
    gens?.delete(uid);
    return w !== undefined && w !== DELETION_EXPECTED;
  }

  deleteService(serviceKey: string): void {
    this.byService.delete(serviceKey);
  }
}
