// Expectations, as upstream's controller_utils.go: a controller that just created or deleted pods
// records how many it expects to see, and does not act on its (lagging) informer view until the
// informer has reported them all, or until ExpectationsTimeout passed (a lost watch event must not
// stall it for ever). Without them a ReplicaSet creates its pods twice while the informer lags.
import type { Clock } from '../../util/clock.js';

/** Upstream's ExpectationsTimeout. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

/** What one controller (by key) still waits to observe. */
export interface ControlleeExpectations {
  add: number;
  del: number;
  /** When they were set (clock ms). */
  timestamp: number;
}

export class ControllerExpectations {
  private readonly store = new Map<string, ControlleeExpectations>();

  constructor(private readonly clock: Clock) {}

  getExpectations(controllerKey: string): ControlleeExpectations | undefined {
    return this.store.get(controllerKey);
  }

  /**
   * True when the controller may sync: nothing recorded (a new controller, or one whose
   * expectations were deleted), everything observed, or the expectations expired.
   */
  satisfiedExpectations(controllerKey: string): boolean {
    const exp = this.store.get(controllerKey);
    if (!exp) return true;
    return fulfilled(exp) || this.clock.now() - exp.timestamp > EXPECTATIONS_TIMEOUT_MS;
  }

  setExpectations(controllerKey: string, add: number, del: number): void {
    this.store.set(controllerKey, { add, del, timestamp: this.clock.now() });
  }

  expectCreations(controllerKey: string, adds: number): void {
    this.setExpectations(controllerKey, adds, 0);
  }

  expectDeletions(controllerKey: string, dels: number): void {
    this.setExpectations(controllerKey, 0, dels);
  }

  /** Counts down (observed, or a create/delete that failed and will not be observed). */
  lowerExpectations(controllerKey: string, add: number, del: number): void {
    const exp = this.store.get(controllerKey);
    if (!exp) return;
    exp.add -= add;
    exp.del -= del;
  }

  raiseExpectations(controllerKey: string, add: number, del: number): void {
    const exp = this.store.get(controllerKey);
    if (!exp) return;
    exp.add += add;
    exp.del += del;
  }

  creationObserved(controllerKey: string): void {
    this.lowerExpectations(controllerKey, 1, 0);
  }

  deletionObserved(controllerKey: string): void {
    this.lowerExpectations(controllerKey, 0, 1);
  }

  deleteExpectations(controllerKey: string): void {
    this.store.delete(controllerKey);
  }
}

const fulfilled = (e: ControlleeExpectations) => e.add <= 0 && e.del <= 0;

/**
 * Deletions tracked by pod key (upstream's UIDTrackingControllerExpectations, used by ReplicaSet):
 * a pod already terminating when the controller deleted it may be reported deleted once, or seen
 * again terminating; counting by key lowers the expectation exactly once per pod.
 */
export class UIDTrackingControllerExpectations {
  private readonly uids = new Map<string, Set<string>>();

  constructor(readonly expectations: ControllerExpectations) {}

  getUIDs(controllerKey: string): ReadonlySet<string> | undefined {
    return this.uids.get(controllerKey);
  }

  /** Expects exactly these pods (by key) to go; replaces what was expected before. */
  expectDeletions(controllerKey: string, deletedKeys: readonly string[]): void {
    this.uids.set(controllerKey, new Set(deletedKeys));
    this.expectations.expectDeletions(controllerKey, deletedKeys.length);
  }

  /** Lowers the expectation once for a pod key it was waiting for. */
  deletionObserved(controllerKey: string, deleteKey: string): void {
    const keys = this.uids.get(controllerKey);
    if (!keys?.delete(deleteKey)) return;
    this.expectations.deletionObserved(controllerKey);
  }

  satisfiedExpectations(controllerKey: string): boolean {
    return this.expectations.satisfiedExpectations(controllerKey);
  }

  /** Forgets the controller (it was deleted). */
  deleteExpectations(controllerKey: string): void {
    this.uids.delete(controllerKey);
    this.expectations.deleteExpectations(controllerKey);
  }
}
