// ValidatingAdmissionPolicy, as upstream's policy/validating plugin: every policy whose
// matchConstraints match the request is evaluated once per matching binding and parameter; a
// failed validation is denied, warned about or left to audit as the binding's validationActions
// say, and an evaluation error follows the policy's failurePolicy.
import { randomUUID } from 'node:crypto';
import type {
  ParamKind,
  ParamRef,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-types/admissionregistration/v1.js';
import { StatusError, type StatusReason } from '../../../../api/errors.js';
import { qualifiedResourceName, type ResourceName } from '../../../../api/kinds.js';
import { labelSelectorAsSelector } from '../../../../api/labels.js';
import { findKind } from '../../../../api/resources.js';
import { boundedValue, evaluate, largestCollection, toCel } from '../../../../api/cel/cel.js';
import { admissionForbidden } from '../../errors.js';
import type { AdmissionAttributes, AdmissionLookups, ValidatingAdmissionPlugin } from '../../interface.js';
import { PolicyCompiler, type Compiled, type CompiledPolicy } from './compiled.js';
import { matchesResources, requestNamespace } from './matching.js';

export const pluginName = 'ValidatingAdmissionPolicy';

/** Upstream's MaxEvaluatedMessageExpressionSizeBytes. */
const maxMessageLength = 5 * 1024;

interface Decision {
  policy: string;
  binding?: string;
  message: string;
  reason?: string;
}

export interface ValidatingAdmissionPolicyOptions {
  lookups: AdmissionLookups;
}

export class ValidatingAdmissionPolicyPlugin implements ValidatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: AdmissionLookups;
  private readonly compiler = new PolicyCompiler();

  constructor(opts: ValidatingAdmissionPolicyOptions) {
    this.lookups = opts.lookups;
  }

  /** Upstream exempts the admission configuration kinds, so a bad policy can always be fixed. */
  handles(a: AdmissionAttributes): boolean {
    return a.resource.group !== 'admissionregistration.k8s.io';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const policies = await this.lookups.list('validatingadmissionpolicies.admissionregistration.k8s.io');
    if (policies.length === 0) return;
    const bindings = await this.lookups.list('validatingadmissionpolicybindings.admissionregistration.k8s.io');
    this.compiler.retain(new Set(policies.map((p) => p.metadata?.name ?? '')));
    const byPolicy = new Map<string, ValidatingAdmissionPolicyBinding[]>();
    for (const b of sortedByName(bindings)) {
      const name = b.spec?.policyName ?? '';
      byPolicy.set(name, [...(byPolicy.get(name) ?? []), b]);
    }
    const denied: Decision[] = [];
    const request = admissionRequest(a);
    for (const policy of sortedByName(policies)) {
      const policyBindings = byPolicy.get(policy.metadata?.name ?? '');
      if (!policyBindings || !policy.spec?.matchConstraints) continue;
      if (!(await matchesResources(policy.spec.matchConstraints, a, this.lookups))) continue;
      for (const binding of policyBindings) {
        if (!(await matchesResources(binding.spec?.matchResources, a, this.lookups))) continue;
        await this.evaluateBinding(a, request, policy, binding, denied);
      }
    }
    if (denied.length > 0) throw denial(a, denied[0]);
  }

  private async evaluateBinding(
    a: AdmissionAttributes,
    request: Record<string, unknown>,
    policy: ValidatingAdmissionPolicy,
    binding: ValidatingAdmissionPolicyBinding,
    denied: Decision[],
  ): Promise<void> {
    const policyName = policy.metadata?.name ?? '';
    const bindingName = binding.metadata?.name ?? '';
    const failClosed = policy.spec?.failurePolicy !== 'Ignore';
    let params: unknown[];
    try {
      params = await this.collectParams(policy.spec?.paramKind, binding.spec?.paramRef, requestNamespace(a));
    } catch (err) {
      if (failClosed) denied.push({ policy: policyName, binding: bindingName, message: `failed to configure binding: ${messageOf(err)}` });
      return;
    }
    const namespace = a.namespace && !(a.resource.group === '' && a.resource.resource === 'namespaces') ? await this.lookups.get('namespaces', '', a.namespace) : undefined;
    const compiled = this.compiler.get(policy);
    const actions = binding.spec?.validationActions ?? [];
    for (const param of params) {
      const failures = validateOnce(compiled, failClosed, {
        object: toCel(a.object ?? null),
        oldObject: toCel(a.oldObject ?? null),
        params: toCel(param),
        request: toCel(request),
        namespaceObject: toCel(namespace ? namespaceObject(namespace) : null),
      });
      for (const f of failures) {
        if (actions.includes('Deny')) denied.push({ policy: policyName, binding: bindingName, ...f });
        if (actions.includes('Warn')) {
          const warning = `Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${f.message}`;
          // Upstream's recorder drops a repeated warning (an update retried after a conflict admits again).
          if (!a.warnings?.includes(warning)) a.warnings?.push(warning);
        }
        // Audit: kite keeps no audit log, so an Audit-only binding records nothing.
      }
    }
  }

  /** The parameters a binding evaluates with, as upstream's CollectParams: [null] when it takes none. */
  private async collectParams(kind: ParamKind | undefined, ref: ParamRef | undefined, namespace: string): Promise<unknown[]> {
    if (!kind || !ref) return [null];
    const [group, version] = (kind.apiVersion ?? '').includes('/') ? (kind.apiVersion ?? '').split('/', 2) : ['', kind.apiVersion ?? ''];
    const info = findKind(group, kind.kind ?? '');
    if (!info || info.version !== version) throw new Error(`paramKind kind \`&ParamKind{APIVersion:${kind.apiVersion ?? ''},Kind:${kind.kind ?? ''},}\` not known`);
    const resource = qualifiedResourceName(info) as ResourceName;
    let paramNamespace = '';
    if (info.namespaced) {
      paramNamespace = ref.namespace || namespace;
      if (!paramNamespace) throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    } else if (ref.namespace) {
      throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
    }
    let found: unknown[];
    if (ref.name) {
      const obj = await this.lookups.get(resource, paramNamespace, ref.name);
      found = obj ? [obj] : [];
    } else if (ref.selector) {
      const selector = labelSelectorAsSelector(ref.selector);
      const all = (await this.lookups.list(resource)) as { metadata?: { namespace?: string; labels?: Record<string, string> } }[];
      found = all.filter((o) => (o.metadata?.namespace ?? '') === paramNamespace && selector.matches(o.metadata?.labels ?? {}));
    } else {
      throw new Error('one of name or selector must be provided');
    }
    if (found.length === 0 && ref.parameterNotFoundAction === 'Deny') throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
    // Typed objects may lack their type meta; expressions may read params.kind (upstream's wrappedParam).
    return found.map((p) => ({ apiVersion: kind.apiVersion, kind: kind.kind, ...(p as object) }));
  }
}

function sortedByName<T extends { metadata?: { name?: string } }>(items: T[]): T[] {
  return [...items].sort((x, y) => ((x.metadata?.name ?? '') < (y.metadata?.name ?? '') ? -1 : 1));
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The failures of one evaluation: the validations that did not hold, and the errors failurePolicy Fail turns into them. */
function validateOnce(policy: CompiledPolicy, failClosed: boolean, inputs: Record<string, unknown>): { message: string; reason?: string }[] {
  const inputSize = largestCollection(inputs);
  const activation: Record<string, unknown> = { ...inputs, variables: lazyVariables(policy, inputs, inputSize) };
  const run = (c: Compiled): unknown => {
    try {
      if (c.error !== undefined) throw new Error(c.error);
      return evaluate(c.program, activation, inputSize);
    } catch (err) {
      // Worded as upstream's CEL filter error.
      throw new Error(`expression '${c.expression}' resulted in error: ${messageOf(err)}`, { cause: err });
    }
  };
  const errors: string[] = [];
  for (const condition of policy.matchConditions) {
    try {
      if (run(condition.check) !== true) return [];
    } catch (err) {
      errors.push(messageOf(err));
    }
  }
  if (errors.length > 0) return failClosed ? [{ message: errors.join(', ') }] : [];
  const failures: { message: string; reason?: string }[] = [];
  for (const v of policy.validations) {
    let result: unknown;
    try {
      result = run(v.check);
    } catch (err) {
      if (failClosed) failures.push({ message: messageOf(err) });
      continue;
    }
    if (result === true) continue;
    failures.push({ message: failureMessage(v.messageExpression, v.message, v.check.expression, run), reason: v.reason ?? 'Invalid' });
  }
  return failures;
}

/** messageExpression's value when it is a usable one-line string, else message, else the expression. */
function failureMessage(messageExpression: Compiled | undefined, message: string | undefined, expression: string, run: (c: Compiled) => unknown): string {
  if (messageExpression) {
    try {
      const value = run(messageExpression);
      const text = typeof value === 'string' ? value.trim() : '';
      if (text && text.length <= maxMessageLength && !text.includes('\n')) return text;
    } catch {
      // Upstream only logs a failing messageExpression and falls back.
    }
  }
  return message?.trim() || `failed expression: ${expression.trim()}`;
}

/** `variables`: each evaluated on first use and kept for the rest of the evaluation. */
function lazyVariables(policy: CompiledPolicy, inputs: Record<string, unknown>, inputSize: number): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  const activation = { ...inputs, variables };
  for (const v of policy.variables) {
    let state: { value: unknown } | { error: string } | undefined;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get() {
        if (!state) {
          try {
            if (v.value.error !== undefined) throw new Error(v.value.error);
            state = { value: boundedValue(evaluate(v.value.program, activation, inputSize)) };
          } catch (err) {
            state = { error: `composited variable "${v.name}" fails to evaluate: ${messageOf(err)}` };
          }
        }
        if ('error' in state) throw new Error(state.error);
        return state.value;
      },
    });
  }
  return variables;
}

/** The AdmissionRequest an expression sees as `request`. */
export function admissionRequest(a: AdmissionAttributes): Record<string, unknown> {
  const { group, version, resource, kind } = a.resource;
  const gvk = { group, version, kind };
  const gvr = { group, version, resource };
  const user = a.user;
  return {
    uid: randomUUID(),
    kind: gvk,
    resource: gvr,
    ...(a.subresource && { subResource: a.subresource, requestSubResource: a.subresource }),
    requestKind: gvk,
    requestResource: gvr,
    ...(a.name && { name: a.name }),
    ...(a.namespace && { namespace: a.namespace }),
    operation: a.operation,
    userInfo: { username: user.name, ...(user.uid && { uid: user.uid }), groups: user.groups, ...(user.extra && { extra: user.extra }) },
    dryRun: a.dryRun,
  };
}

/** `namespaceObject`: the namespace's metadata (without managed fields), spec and status, as upstream exposes. */
function namespaceObject(ns: { metadata?: object; spec?: unknown; status?: unknown }): Record<string, unknown> {
  const { managedFields: _managedFields, ...metadata } = (ns.metadata ?? {}) as { managedFields?: unknown };
  return { apiVersion: 'v1', kind: 'Namespace', metadata, spec: ns.spec ?? {}, status: ns.status ?? {} };
}

const codeOfReason: Partial<Record<string, number>> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 };

/** Upstream's refusal: NewForbidden's message, with the decision's reason and its HTTP code (422 unless known). */
function denial(a: AdmissionAttributes, d: Decision): StatusError {
  const message = d.binding
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const forbidden = admissionForbidden(a, message);
  const reason = (d.reason || 'Invalid') as StatusReason;
  return new StatusError(codeOfReason[reason] ?? 422, reason, forbidden.message, { ...forbidden.details, causes: [{ message }] });
}
