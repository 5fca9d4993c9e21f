// ValidatingAdmissionWebhook, as upstream: the matching webhooks are called in parallel; the request
// is refused with the first refusal in webhook order once all have answered.
import type { ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/meta.js';
import type { AdmissionAttributes, ValidatingAdmissionPlugin } from '../interface.js';
import { denial, inVersion, invocations, isExempt, orderedWebhooks, WebhookCaller, type WebhookDeps } from './dispatcher.js';

export const pluginName = 'ValidatingAdmissionWebhook';

export class ValidatingAdmissionWebhook implements ValidatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly caller: WebhookCaller;

  constructor(private readonly deps: WebhookDeps) {
    this.caller = new WebhookCaller(deps);
  }

  handles(a: AdmissionAttributes): boolean {
    return !isExempt(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const configs: ValidatingWebhookConfiguration[] = await this.deps.lookups.list('validatingwebhookconfigurations.admissionregistration.k8s.io');
    const hooks = orderedWebhooks(configs);
    if (hooks.length === 0) return;
    const invoked = await invocations(hooks, a, this.deps.lookups);
    const outcomes = await Promise.allSettled(
      invoked.map(async (inv) => {
        const convert = (o: KubeObject | undefined) => (a.subresource ? o : inVersion(o, a.resource, inv.resource));
        const objects = { object: convert(a.object), oldObject: convert(a.oldObject) };
        if (!this.caller.matches(inv, a, objects)) return;
        const response = await this.caller.call(inv, a, objects, false);
        if (!response) return;
        for (const w of response.warnings) a.warnings?.push(w);
        if (!response.allowed) throw denial(inv.hook.name, response.status);
      }),
    );
    for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
  }
}
