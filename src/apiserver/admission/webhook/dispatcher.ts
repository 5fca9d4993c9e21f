// What both webhook plugins share (upstream's generic.Webhook): the webhooks of every configuration
// (configurations by name, webhooks in list order) that a request calls, the dry-run check, the
// call itself and the failurePolicy applied to a failed call.
import type { MutatingWebhook, ValidatingWebhook } from 'kubernetes-types/admissionregistration/v1.js';
import { hpaV1FromV2, hpaV2FromV1 } from '../../../api/autoscaling.js';
import { badRequest, internalError, StatusError, type StatusReason } from '../../../api/errors.js';
import type { KubeObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import type { Clock } from '../../../util/clock.js';
import type { AdmissionAttributes, AdmissionLookups } from '../interface.js';
import { WebhookCallError, WebhookClient } from './client.js';
import { MatchConditionMatcher } from './matchconditions.js';
import { matchNamespaceSelector, matchObjectSelector, matchRules } from './matching.js';
import { InvalidResponseError, newAdmissionReview, verifyAdmissionResponse, type AdmissionResponse } from './review.js';

export type Webhook = MutatingWebhook | ValidatingWebhook;

/** Upstream's default timeoutSeconds, for webhooks stored before defaulting. */
const defaultTimeoutSeconds = 10;

export interface WebhookDeps {
  lookups: AdmissionLookups;
  clock: Clock;
}

/** A webhook with its configuration's name and its place among all the configurations' webhooks. */
export interface ConfiguredWebhook<W extends Webhook> {
  hook: W;
  configuration: string;
  index: number;
}

/** A webhook the request calls, and the resource it matched the request as. */
export interface WebhookInvocation<W extends Webhook> extends ConfiguredWebhook<W> {
  resource: ResourceInfo;
}

/** Requests on these are never sent to webhooks, so a broken webhook cannot lock its own configuration away (upstream's exemption). */
const exemptResources = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

export function isExempt(a: AdmissionAttributes): boolean {
  return a.resource.group === 'admissionregistration.k8s.io' && exemptResources.has(a.resource.resource);
}

/** The configurations' webhooks in upstream's order: configurations sorted by name, webhooks as listed. */
export function orderedWebhooks<W extends Webhook>(configs: { metadata?: { name?: string }; webhooks?: W[] }[]): ConfiguredWebhook<W>[] {
  return [...configs]
    .sort((x, y) => ((x.metadata?.name ?? '') < (y.metadata?.name ?? '') ? -1 : (x.metadata?.name ?? '') > (y.metadata?.name ?? '') ? 1 : 0))
    .flatMap((c) => (c.webhooks ?? []).map((hook) => ({ hook, configuration: c.metadata?.name ?? '' })))
    .map((w, index) => ({ ...w, index }));
}

/** The webhooks among `hooks` that request `a` calls, in order. */
export async function invocations<W extends Webhook>(hooks: ConfiguredWebhook<W>[], a: AdmissionAttributes, lookups: AdmissionLookups): Promise<WebhookInvocation<W>[]> {
  const out: WebhookInvocation<W>[] = [];
  for (const configured of hooks) {
    const { hook } = configured;
    const matched = matchRules(hook, a);
    if (!matched) continue;
    if (!(await matchNamespaceSelector(hook, a, lookups))) continue;
    if (!matchObjectSelector(hook, a)) continue;
    out.push({ ...configured, resource: matched.resource });
  }
  return out;
}

/** The audit annotation keys of a webhook call, upstream's `round_<r>_index_<i>` suffixes. */
export const auditKeys = {
  mutation: (round: number, index: number) => `mutation.webhook.admission.k8s.io/round_${round}_index_${index}`,
  patch: (round: number, index: number) => `patch.webhook.admission.k8s.io/round_${round}_index_${index}`,
  failedOpen: (kind: 'mutation' | 'validating', round: number, index: number) => `failed-open.${kind}.webhook.admission.k8s.io/round_${round}_index_${index}`,
};

/** Upstream's ToStatusErr: a denial worded `admission webhook "<name>" denied the request: <why>`, with the webhook's code (at least 400). */
export function denial(webhook: string, status: AdmissionResponse['status']): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const why = status?.message || status?.reason;
  const code = status?.code && status.code >= 400 ? status.code : 400;
  // The webhook's reason is passed through as upstream does, whatever it says.
  return new StatusError(code, (status?.reason ?? '') as StatusReason, why ? `${deniedBy}: ${why}` : `${deniedBy} without explanation`);
}

export class WebhookCaller {
  private readonly client: WebhookClient;
  private readonly matchConditions = new MatchConditionMatcher();

  constructor(deps: WebhookDeps) {
    this.client = new WebhookClient(deps);
  }

  /**
   * Whether the webhook's matchConditions hold for the request (objects in the matched resource's
   * version), checked just before its call so a mutating webhook's see earlier webhooks' changes.
   */
  matches(inv: WebhookInvocation<Webhook>, a: AdmissionAttributes, objects: { object?: KubeObject; oldObject?: KubeObject }): boolean {
    return this.matchConditions.matches(inv.hook.matchConditions, inv.hook.failurePolicy, a, objects);
  }

  /**
   * Calls the webhook with the review of `a` (objects in the matched resource's version). A failed
   * call is undefined under failurePolicy Ignore and a 500 otherwise; a webhook with side effects
   * refuses dry-run requests.
   */
  async call(
    inv: WebhookInvocation<Webhook>,
    a: AdmissionAttributes,
    objects: { object?: KubeObject; oldObject?: KubeObject },
    mutating: boolean,
    round = 0,
  ): Promise<AdmissionResponse | undefined> {
    const { hook } = inv;
    if (a.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
      throw badRequest(`admission webhook "${hook.name}" does not support dry run`);
    }
    const review = newAdmissionReview(a, inv.resource, objects.object, objects.oldObject);
    try {
      const body = await this.client.post({ webhook: hook.name, clientConfig: hook.clientConfig, timeoutSeconds: hook.timeoutSeconds ?? defaultTimeoutSeconds, body: review });
      let response: AdmissionResponse;
      try {
        response = verifyAdmissionResponse(review.request.uid, mutating, body);
      } catch (err) {
        if (err instanceof InvalidResponseError) throw new WebhookCallError(hook.name, `received invalid webhook response: ${err.message}`);
        throw err;
      }
      // A webhook's own annotations, under its name.
      for (const [key, value] of response.auditAnnotations) a.annotate?.(`${hook.name}/${key}`, value);
      return response;
    } catch (err) {
      if (!(err instanceof WebhookCallError)) throw err;
      if (hook.failurePolicy === 'Ignore') {
        a.annotate?.(auditKeys.failedOpen(mutating ? 'mutation' : 'validating', round, inv.index), hook.name);
        return undefined;
      }
      throw internalError(err.message);
    }
  }
}

/**
 * `obj` (of request resource `from`) in the version of `to`, the resource a webhook matched it as:
 * only autoscaling serves a resource in two versions.
 */
export function inVersion(obj: KubeObject | undefined, from: ResourceInfo, to: ResourceInfo): KubeObject | undefined {
  if (!obj || from.version === to.version || to.group !== 'autoscaling' || to.resource !== 'horizontalpodautoscalers') return obj;
  return (to.version === 'v1' ? hpaV1FromV2(obj) : hpaV2FromV1(obj)) as KubeObject;
}
