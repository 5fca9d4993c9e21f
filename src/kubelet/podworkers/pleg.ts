// The pod lifecycle event generator (upstream's GenericPLEG): every relist period it lists the
// runtime's sandboxes and containers — the cheap calls, no per-object status — and tells the pod
// workers at once about every pod whose containers or sandboxes changed state, appeared or went.
import type { Clock } from '../../util/clock.js';
import { Periodic } from '../../util/periodic.js';
import type { Runtime } from '../runtime/types.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';

export interface PlegConfig {
  runtime: Runtime;
  clock: Clock;
  relistPeriodMs: number;
  /** Called once per changed pod UID per relist. */
  onPodChanged: (uid: string) => void;
  log?: (msg: string, err?: unknown) => void;
}

export class Pleg {
  /** State and owning pod UID of every sandbox and container at the last relist. */
  private seen = new Map<string, string>();
  private ownerOf = new Map<string, string>();
  private readonly relister: Periodic;

  constructor(private readonly config: PlegConfig) {
    this.relister = new Periodic({ clock: config.clock, periodMs: config.relistPeriodMs, run: () => this.relist(), onError: (err) => config.log?.('relist failed', err) });
  }

  start(): void {
    this.relister.start();
  }

  stop(): Promise<void> {
    return this.relister.stop();
  }

  /** One relist; returns the UIDs it reported. */
  async relist(): Promise<string[]> {
    const [sandboxes, containers] = await Promise.all([this.config.runtime.listPodSandbox(), this.config.runtime.listContainers()]);
    const now = new Map<string, string>();
    const owner = new Map<string, string>();
    for (const s of sandboxes) {
      const uid = s.labels?.[POD_UID_LABEL];
      if (!uid) continue;
      now.set(s.id, s.state);
      owner.set(s.id, uid);
    }
    for (const c of containers) {
      const uid = c.labels?.[POD_UID_LABEL];
      if (!uid) continue;
      now.set(c.id, c.state);
      owner.set(c.id, uid);
    }
    const changed = new Set<string>();
    for (const [id, state] of now) if (this.seen.get(id) !== state) changed.add(owner.get(id)!);
    for (const id of this.seen.keys()) if (!now.has(id)) changed.add(this.ownerOf.get(id) ?? '');
    changed.delete('');
    this.seen = now;
    this.ownerOf = owner;
    for (const uid of changed) this.config.onPodChanged(uid);
    return [...changed];
  }
}
