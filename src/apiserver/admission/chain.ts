// The admission chain: the mutating phase runs every interested mutating plugin in order, the
// validating phase every interested validating one; the first refusal (a thrown error) ends it.
// The registry calls admit() before its own validation and validate() after, as upstream does.
import type { AdmissionAttributes, AdmissionPlugin, MutatingAdmissionPlugin, ValidatingAdmissionPlugin } from './interface.js';
import { deepClone } from '../../api/patch/json.js';
import { changedPaths } from '../timeline/trace.js';

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
    // Only a traced pod write pays for naming what each plugin changed: one copy of the object,
    // which changedPaths brings up to date after each plugin (copying only what it changed).
    let before: Record<string, unknown> | undefined;
    for (const p of this.mutating) {
      if (!p.handles(a)) continue;
      const trace = a.timeline;
      if (!trace) {
        await p.admit(a);
        continue;
      }
      if (a.object) before ??= deepClone(a.object) as Record<string, unknown>;
      const start = trace.mark();
      await p.admit(a);
      const end = trace.mark();
      const after = a.object as Record<string, unknown> | undefined;
      trace.admitted(p.name, 'mutating', start, end, before && after ? changedPaths(before, after) : []);
    }
  }

  /** The validating phase: plugins may only refuse. */
  async validate(a: AdmissionAttributes): Promise<void> {
    for (const p of this.validating) {
      if (!p.handles(a)) continue;
      const start = a.timeline?.mark();
      await p.validate(a);
      if (start !== undefined) a.timeline!.admitted(p.name, 'validating', start, a.timeline!.mark(), []);
    }
  }
}

function isMutating(p: AdmissionPlugin): p is MutatingAdmissionPlugin {
  return typeof (p as Partial<MutatingAdmissionPlugin>).admit === 'function';
}

function isValidating(p: AdmissionPlugin): p is ValidatingAdmissionPlugin {
  return typeof (p as Partial<ValidatingAdmissionPlugin>).validate === 'function';
}
