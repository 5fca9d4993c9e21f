// Templates in stage files are plain JSON values with expressions inside, compiled once:
//
//   "{{ expr }}"                     the expression's value, keeping its type (a field whose value is
//                                    undefined or null is left out)
//   "text {{ expr }} text"           a string with the values spliced in
//   { "$each": expr, "$do": T }      a list: T for every element of expr's list (item, index), or
//                                    no field at all when expr is not a list;
//                                    "$where": expr keeps only the elements for which it is non-empty.
//                                    Inside a list, the produced elements are spliced in place, and
//                                    a list produced by "$do" adds each of its elements.
//   { "$if": expr, "$then": T, "$else": T }
//                                    T by the expression's truth; a missing branch leaves the field out
import { compileExpr, ExprError, truthy, type Env, type Expr } from './expr.js';

export type Template = (env: Env) => unknown;

const EACH = Symbol('each');
type Spliced = { [EACH]: unknown[] };

// Lazy, so a "}" inside an expression's string literal does not end it; "}}" does.
const embeddedExpr = /\{\{(.*?)\}\}/gs;

function compileString(s: string): Template {
  const matches = [...s.matchAll(embeddedExpr)];
  if (matches.length === 1 && matches[0]![0] === s) return compileExpr(matches[0]![1]!.trim());
  const parts: (string | Expr)[] = [];
  let last = 0;
  for (const m of matches) {
    parts.push(s.slice(last, m.index), compileExpr(m[1]!.trim()));
    last = m.index + m[0].length;
  }
  if (last === 0) return () => s;
  parts.push(s.slice(last));
  return (env) => parts.map((p) => (typeof p === 'string' ? p : stringOf(p(env)))).join('');
}

function stringOf(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function compileEach(obj: Record<string, unknown>): (env: Env) => Spliced | undefined {
  const list = compileExpr(requireString(obj, '$each'));
  const where = obj.$where === undefined ? undefined : compileExpr(requireString(obj, '$where'));
  if (!('$do' in obj)) throw new ExprError('"$each" needs "$do"');
  const body = compileNode(obj.$do);
  return (env) => {
    const items = list(env);
    // No list at all (e.g. a pod without init containers) leaves the field out, as the kubelet does.
    if (!Array.isArray(items)) return undefined;
    const out: unknown[] = [];
    items.forEach((item, index) => {
      const inner = { ...env, item, index };
      if (where && !truthy(where(inner))) return;
      const v = body(inner);
      // The API has no lists of lists, so a list from "$do" is several elements (e.g. three events per container).
      if (Array.isArray(v)) out.push(...v);
      else if (v !== undefined && v !== null) out.push(v);
    });
    return { [EACH]: out };
  };
}

function requireString(obj: Record<string, unknown>, key: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw new ExprError(`${key} must be an expression string`);
  return v;
}

function compileNode(value: unknown): Template {
  if (typeof value === 'string') return compileString(value);
  if (Array.isArray(value)) {
    const items = value.map(compileNode);
    return (env) => {
      const out: unknown[] = [];
      for (const item of items) {
        const v = item(env);
        if (isSpliced(v)) out.push(...v[EACH]);
        else if (v !== undefined && v !== null) out.push(v);
      }
      return out;
    };
  }
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if ('$each' in obj) return compileEach(obj);
    if ('$if' in obj) {
      const cond = compileExpr(requireString(obj, '$if'));
      const then = '$then' in obj ? compileNode(obj.$then) : () => undefined;
      const otherwise = '$else' in obj ? compileNode(obj.$else) : () => undefined;
      return (env) => (truthy(cond(env)) ? then(env) : otherwise(env));
    }
    const fields = Object.entries(obj).map(([k, v]) => [k, compileNode(v)] as const);
    return (env) => {
      const out: Record<string, unknown> = {};
      for (const [k, f] of fields) {
        const v = unsplice(f(env));
        if (v !== undefined && v !== null) out[k] = v;
      }
      return out;
    };
  }
  return () => value;
}

function isSpliced(v: unknown): v is Spliced {
  return typeof v === 'object' && v !== null && EACH in v;
}

function unsplice(v: unknown): unknown {
  return isSpliced(v) ? v[EACH] : v;
}

/** Compiles a template; expression errors surface here, at load time. */
export function compileTemplate(value: unknown): Template {
  const t = compileNode(value);
  return (env) => unsplice(t(env));
}
