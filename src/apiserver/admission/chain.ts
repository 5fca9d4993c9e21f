// The admission chain: the mutating phase runs every interested mutating plugin in order, the
// validating phase every interested validating one; the first refusal (a thrown error) ends it.
// The registry calls admit() before its own validation and validate() after, as upstream does.
import type { AdmissionAttributes, AdmissionPhase, AdmissionPlugin, MutatingAdmissionPlugin, ValidatingAdmissionPlugin } from './interface.js';

export type AnyAdmissionPlugin = MutatingAdmissionPlugin | ValidatingAdmissionPlugin;

export class AdmissionChain {
  private readonly mutating: MutatingAdmissionPlugin[];
  private readonly validating: ValidatingAdmissionPlugin[];

  /** plugins in their configured order; one implementing both phases takes part in both. */
  constructor(plugins: readonly AnyAdmissionPlugin[]) {
    this.mutating = plugins.filter(isMutating);
    this.validating = plugins.filter(isValidating);
  }

  /** The mutating phase: plugins may change a.object in place. */
  async admit(a: AdmissionAttributes): Promise<void> {
    let start = a.timeline?.mark();
    for (const p of this.mutating) {
      if (!p.handles(a)) continue;
      await p.admit(a);
      if (start !== undefined) start = admitted(a, p.name, 'mutating', start);
    }
  }

  /** The validating phase: plugins may only refuse. */
  async validate(a: AdmissionAttributes): Promise<void> {
    let start = a.timeline?.mark();
    for (const p of this.validating) {
      if (!p.handles(a)) continue;
      await p.validate(a);
      if (start !== undefined) start = admitted(a, p.name, 'validating', start);
    }
  }
}

/**
 * Tells the trace a plugin ran from `start` until now; returns now, the next plugin's start: one mark
 * per plugin (what skipped plugins' `handles` took counts towards the next one).
 */
function admitted(a: AdmissionAttributes, plugin: string, phase: AdmissionPhase, start: number): number {
  const end = a.timeline!.mark();
  a.timeline!.admitted(plugin, phase, start, end);
  return end;
}

function isMutating(p: AdmissionPlugin): p is MutatingAdmissionPlugin {
  return typeof (p as Partial<MutatingAdmissionPlugin>).admit === 'function';
}

function isValidating(p: AdmissionPlugin): p is ValidatingAdmissionPlugin {
  return typeof (p as Partial<ValidatingAdmissionPlugin>).validate === 'function';
}
