// A webhook's matchConditions, as upstream's webhook/matchconditions matcher: CEL expressions over
// `object`, `oldObject` and `request` (not `authorizer` yet) that must all be true for the webhook
// to be called. One false skips it; an error with none false follows failurePolicy: Ignore skips,
// Fail refuses the request without calling it.
import type { MatchCondition } from 'kubernetes-types/admissionregistration/v1.js';
import { compile, evaluate, largestCollection, toCel, type CompiledExpression } from '../../../api/cel/cel.js';
import type { KubeObject } from '../../../api/meta.js';
import { newForbidden } from '../../authz/forbidden.js';
import type { AdmissionAttributes } from '../interface.js';
import { admissionRequest } from '../plugins/validatingadmissionpolicy/plugin.js';

/** Compiled expressions by their text; bounded, since configurations come and go. */
const maxCachedExpressions = 1024;

export class MatchConditionMatcher {
  private readonly compiled = new Map<string, CompiledExpression | Error>();

  /**
   * Whether the webhook is called for this request: true when every condition holds. Throws
   * upstream's Forbidden when one errs (and none is false) under failurePolicy Fail.
   */
  matches(conditions: readonly MatchCondition[] | undefined, failurePolicy: string | undefined, a: AdmissionAttributes, objects: { object?: KubeObject; oldObject?: KubeObject }): boolean {
    if (!conditions?.length) return true;
    const inputs = { object: toCel(objects.object ?? null), oldObject: toCel(objects.oldObject ?? null), request: toCel(admissionRequest(a)) };
    const inputSize = largestCollection(inputs);
    const errors: string[] = [];
    for (const c of conditions) {
      let result: unknown;
      try {
        const program = this.program(c.expression);
        if (program instanceof Error) throw program;
        result = evaluate(program, inputs, inputSize);
      } catch (err) {
        errors.push(`expression '${c.expression}' resulted in error: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      if (result === false) return false;
      if (result !== true) errors.push(`expression '${c.expression}' resulted in error: no such overload`);
    }
    if (errors.length === 0) return true;
    if (failurePolicy === 'Ignore') return false;
    // utilerrors.NewAggregate's wording: one error alone, several in brackets.
    const why = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
    throw newForbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, why);
  }

  private program(expression: string): CompiledExpression | Error {
    let p = this.compiled.get(expression);
    if (p === undefined) {
      try {
        p = compile(expression);
      } catch (err) {
        p = err instanceof Error ? err : new Error(String(err));
      }
      if (this.compiled.size >= maxCachedExpressions) this.compiled.clear();
      this.compiled.set(expression, p);
    }
    return p;
  }
}
