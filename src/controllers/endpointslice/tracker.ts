// Upstream's EndpointSliceTracker: the generation of every slice this controller wrote, per
// Service, so a sync never plans from an informer cache older than its own writes (which would
// create duplicates or undo a change), and the controller's own writes coming back through the
// informer do not queue the Service again.
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { LABEL_SERVICE_NAME } from './reconciler.js';

/** The generation recorded for a slice this controller deleted. */
const DELETION_EXPECTED = -1;

const serviceKeyOf = (slice: EndpointSlice) => `${slice.metadata?.namespace ?? ''}/${slice.metadata?.labels?.[LABEL_SERVICE_NAME] ?? ''}`;

export class EndpointSliceTracker {
  /** Service key → slice UID → generation. */
  private readonly byService = new Map<string, Map<string, number>>();

  private gens(slice: EndpointSlice, create = false): Map<string, number> | undefined {
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
    const g = this.gens(slice)?.get(slice.metadata?.uid ?? '');
    return g === undefined || (slice.metadata?.generation ?? 0) > g;
  }

  /** Whether the cached slices of the Service lag this controller's writes. */
  staleSlices(serviceKey: string, slices: readonly EndpointSlice[]): boolean {
    const gens = this.byService.get(serviceKey);
    if (!gens) return false;
    const seen = new Set<string>();
    for (const slice of slices) {
      const uid = slice.metadata?.uid ?? '';
      seen.add(uid);
      const g = gens.get(uid);
      if (g !== undefined && (g === DELETION_EXPECTED || g > (slice.metadata?.generation ?? 0))) return true;
    }
    for (const [uid, g] of gens) if (g !== DELETION_EXPECTED && !seen.has(uid)) return true;
    return false;
  }

  update(slice: EndpointSlice): void {
    this.gens(slice, true)!.set(slice.metadata?.uid ?? '', slice.metadata?.generation ?? 0);
  }

  expectDeletion(slice: EndpointSlice): void {
    this.gens(slice, true)!.set(slice.metadata?.uid ?? '', DELETION_EXPECTED);
  }

  /** Forgets a deleted slice; true when this controller did not expect the deletion. */
  handleDeletion(slice: EndpointSlice): boolean {
    const gens = this.gens(slice);
    const uid = slice.metadata?.uid ?? '';
    const g = gens?.get(uid);
    gens?.delete(uid);
    return g !== undefined && g !== DELETION_EXPECTED;
  }

  deleteService(serviceKey: string): void {
    this.byService.delete(serviceKey);
  }
}
