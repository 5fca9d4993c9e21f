// MutatingAdmissionWebhook, as upstream: the matching webhooks are called one after the other, each
// seeing the object as the previous ones left it, and their JSON patches are applied to it. When a
// webhook changes the object, the webhooks with reinvocationPolicy IfNeeded called before it are
// called once more after the first round. The registry validates the object after this phase.
import type { MutatingWebhook, MutatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import { internalError } from '../../../api/errors.js';
import type { KubeObject } from '../../../api/meta.js';
import { deepEqual, type JsonObject } from '../../../api/patch/json.js';
import { applyOperations, JsonPatchError, type JsonPatchOperation } from '../../../api/patch/jsonpatch.js';
import { setOwn } from '../../../util/own.js';
import { changedPaths } from '../../timeline/trace.js';
import type { AdmissionAttributes, MutatingAdmissionPlugin } from '../interface.js';
import { auditKeys, denial, inVersion, invocations, isExempt, orderedWebhooks, WebhookCaller, type WebhookDeps, type WebhookInvocation } from './dispatcher.js';

export const pluginName = 'MutatingAdmissionWebhook';

export class MutatingAdmissionWebhook implements MutatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly caller: WebhookCaller;

  constructor(private readonly deps: WebhookDeps) {
    this.caller = new WebhookCaller(deps);
  }

  handles(a: AdmissionAttributes): boolean {
    return !isExempt(a);
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const configs: MutatingWebhookConfiguration[] = await this.deps.lookups.list('mutatingwebhookconfigurations.admissionregistration.k8s.io');
    const hooks = orderedWebhooks(configs);
    if (hooks.length === 0) return;
    const invoked = await invocations(hooks, a, this.deps.lookups);
    // IfNeeded webhooks called so far; a change moves them to the set called again.
    let reinvocable: WebhookInvocation<MutatingWebhook>[] = [];
    const reinvoke = new Set<WebhookInvocation<MutatingWebhook>>();
    for (const inv of invoked) {
      if (await this.callOne(inv, a, 0)) {
        for (const r of reinvocable) reinvoke.add(r);
        reinvocable = [];
      }
      if (inv.hook.reinvocationPolicy === 'IfNeeded') reinvocable.push(inv);
    }
    for (const inv of invoked) if (reinvoke.has(inv)) await this.callOne(inv, a, 1);
  }

  /**
   * Calls one webhook in `round` (0, or 1 when reinvoked) when its matchConditions hold, and applies
   * its patch to a.object in place; whether the object changed. Audited as upstream: whether it
   * mutated (at Metadata) and its patch (at Request).
   */
  private async callOne(inv: WebhookInvocation<MutatingWebhook>, a: AdmissionAttributes, round: number): Promise<boolean> {
    const convert = (o: KubeObject | undefined, from = a.resource, to = inv.resource) => (a.subresource ? o : inVersion(o, from, to));
    const object = convert(a.object);
    const objects = { object, oldObject: convert(a.oldObject) };
    if (!this.caller.matches(inv, a, objects)) return false;
    let mutated = false;
    try {
      const response = await this.caller.call(inv, a, objects, true, round);
      if (!response) return false;
      for (const w of response.warnings) a.warnings?.push(w);
      if (!response.allowed) throw denial(inv.hook.name, response.status);
      const ops = response.patch;
      if (ops === undefined || (Array.isArray(ops) && ops.length === 0)) return false;
      if (!object || !a.object) throw internalError(`admission webhook "${inv.hook.name}" attempted to modify the object, which is not supported for this operation`);
      if (!Array.isArray(ops) || ops.some((op) => op !== null && (typeof op !== 'object' || Array.isArray(op)))) {
        throw internalError(`json: cannot unmarshal the patch of admission webhook "${inv.hook.name}" into a JSON patch`);
      }
      let patched: JsonObject;
      try {
        patched = applyOperations(object as JsonObject, ops as (JsonPatchOperation | null)[]);
      } catch (err) {
        if (err instanceof JsonPatchError) throw internalError(err.message);
        throw err;
      }
      mutated = !deepEqual(patched, object);
      a.annotate?.(auditKeys.patch(round, inv.index), JSON.stringify({ configuration: inv.configuration, webhook: inv.hook.name, patch: ops, patchType: 'JSONPatch' }), 'Request');
      if (!mutated) return false;
      if (a.timeline) for (const path of changedPaths(object, patched)) a.timeline.mutated(path);
      const result = convert(patched as KubeObject, inv.resource, a.resource)!;
      // The registry holds a.object: it is changed in place.
      for (const key of Object.keys(a.object)) delete (a.object as Record<string, unknown>)[key];
      for (const [key, value] of Object.entries(result)) setOwn(a.object, key, value);
      return true;
    } finally {
      a.annotate?.(auditKeys.mutation(round, inv.index), JSON.stringify({ configuration: inv.configuration, webhook: inv.hook.name, mutated }));
    }
  }
}
