// A policy's expressions compiled once per generation (upstream compiles when the policy informer
// sees a new object); an expression that does not compile keeps its error, reported when it runs.
import type { ValidatingAdmissionPolicy } from 'kubernetes-types/admissionregistration/v1.js';
import { compile, type CompiledExpression } from '../../../../api/cel/cel.js';

/** One expression: compiled, or why it is not. */
export type Compiled = { expression: string; program: CompiledExpression; error?: undefined } | { expression: string; program?: undefined; error: string };

export interface CompiledValidation {
  check: Compiled;
  messageExpression?: Compiled;
  message?: string;
  reason?: string;
}

export interface CompiledPolicy {
  validations: CompiledValidation[];
  matchConditions: { name: string; check: Compiled }[];
  variables: { name: string; value: Compiled }[];
}

function compileOne(expression: string): Compiled {
  try {
    return { expression, program: compile(expression) };
  } catch (err) {
    return { expression, error: err instanceof Error ? err.message : String(err) };
  }
}

function compilePolicy(policy: ValidatingAdmissionPolicy): CompiledPolicy {
  const spec = policy.spec ?? {};
  return {
    validations: (spec.validations ?? []).map((v) => ({
      check: compileOne(v.expression),
      messageExpression: v.messageExpression ? compileOne(v.messageExpression) : undefined,
      message: v.message,
      reason: v.reason,
    })),
    matchConditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name, check: compileOne(c.expression) })),
    variables: (spec.variables ?? []).map((v) => ({ name: v.name, value: compileOne(v.expression) })),
  };
}

/** Compiled policies by name, recompiled when a policy's uid or generation changes. */
export class PolicyCompiler {
  private readonly byName = new Map<string, { key: string; compiled: CompiledPolicy }>();

  get(policy: ValidatingAdmissionPolicy): CompiledPolicy {
    const meta = policy.metadata ?? {};
    const name = meta.name ?? '';
    const key = `${meta.uid ?? ''}/${meta.generation ?? meta.resourceVersion ?? ''}`;
    const cached = this.byName.get(name);
    if (cached?.key === key) return cached.compiled;
    const compiled = compilePolicy(policy);
    this.byName.set(name, { key, compiled });
    return compiled;
  }

  /** Forgets policies that no longer exist. */
  retain(names: ReadonlySet<string>): void {
    for (const name of this.byName.keys()) if (!names.has(name)) this.byName.delete(name);
  }
}
