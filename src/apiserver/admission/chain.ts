// The admission chain: the mutating phase runs every interested mutating plugin in order, the
// validating phase every interested validating one; the first refusal (a thrown error) ends it.
// The registry calls admit() before its own validation and validate() after, as upstream does.
import type { AdmissionAttributes, AdmissionPlugin, MutatingAdmissionPlugin, ValidatingAdmissionPlugin } from './interface.js';

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
    for (const p of this.mutating) {
      if (!p.handles(a)) continue;
      const start = a.timeline?.mark();
      await p.admit(a);
      if (start !== undefined) a.timeline!.admitted(p.name, 'mutating', start, a.timeline!.mark());
    }
  }

  /** The validating phase: plugins may only refuse. */
  async validate(a: AdmissionAttributes): Promise<void> {
    for (const p of this.validating) {
      if (!p.handles(a)) continue;
      const start = a.timeline?.mark();
      await p.validate(a);
      if (start !== undefined) a.timeline!.admitted(p.name, 'validating', start, a.timeline!.mark());
    }
  }
}

function isMutating(p: AdmissionPlugin): p is MutatingAdmissionPlugin {
  return typeof (p as Partial<MutatingAdmissionPlugin>).admit === 'function';
}

function isValidating(p: AdmissionPlugin): p is ValidatingAdmissionPlugin {
  return typeof (p as Partial<ValidatingAdmissionPlugin>).validate === 'function';
}
