// CEL for admission policies (upstream's admission/plugin/cel and pkg/cel/library), on
// @marcbachmann/cel-js: one shared environment declaring the policy variables, the Kubernetes
// library functions the engine lacks, and a cost bound. The engine has no runtime cost model, so a
// call is bounded before it starts: its comprehension nesting times the largest collection in its
// inputs must stay within the per-call budget, and every composited variable's value is bounded in
// size, so an expression cannot loop or grow without limit.
import { Environment, Optional } from '@marcbachmann/cel-js';
import { formatAddr, formatPrefix, masked, parseAddr, parsePrefix, prefixContains, prefixContainsPrefix, type Addr, type Prefix } from '../netip.js';
import { Quantity } from '../quantity.js';

/** The names a policy expression may use (upstream's activation); `authorizer` is not offered. */
export const policyVariableNames = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'] as const;

/** Upstream's PerCallLimit: the cost one evaluation may spend. */
export const perCallCostLimit = 1_000_000;
/** The largest string or collection a composited variable may produce. */
const maxValueSize = 1 << 20;
/** Upstream's macro names: the ones that iterate their receiver. */
const comprehensions = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/** A Kubernetes quantity as a CEL value (library `quantity()`). */
class CelQuantity {
  constructor(readonly q: Quantity) {}
}

/** An IP address and a CIDR as CEL values (library `ip()` and `cidr()`). */
class CelIP {
  constructor(readonly addr: Addr) {}
}
class CelCIDR {
  constructor(readonly prefix: Prefix) {}
}

function ipOf(s: string): CelIP {
  const a = parseAddr(s);
  if (!a) throw new Error(`IP Address ${JSON.stringify(s)} parse error during conversion from string`);
  return new CelIP(a);
}

function cidrOf(s: string): CelCIDR {
  const p = parsePrefix(s);
  if (!p) throw new Error(`network address ${JSON.stringify(s)} parse error during conversion from string`);
  return new CelCIDR(p);
}

function compareLists(l: unknown[]): boolean {
  for (let i = 1; i < l.length; i++) if ((l[i - 1] as number) > (l[i] as number)) return false;
  return true;
}

function extreme(l: unknown[], pick: (a: unknown, b: unknown) => boolean, name: string): unknown {
  if (l.length === 0) throw new Error(`${name}(list) argument must not be empty`);
  return l.reduce((best, v) => (pick(v, best) ? v : best));
}

function parseOrUndefined(s: string): Quantity | undefined {
  try {
    return Quantity.parse(s);
  } catch {
    return undefined;
  }
}

const int64 = { min: -(1n << 63n), max: (1n << 63n) - 1n };
/** Whether the quantity is a whole number an int64 holds (upstream's isInteger). */
function isInt64(q: Quantity): boolean {
  const v = q.value();
  return v >= int64.min && v <= int64.max && Quantity.fromValue(v).equals(q);
}

function newEnvironment(): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: false,
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: false,
    limits: { maxAstNodes: 10_000, maxDepth: 100, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 },
  });
  for (const name of policyVariableNames) env.registerVariable(name, 'dyn');
  env.registerType('Quantity', { ctor: CelQuantity, fields: {} });
  env.registerType('net.IP', { ctor: CelIP, fields: {} });
  env.registerType('net.CIDR', { ctor: CelCIDR, fields: {} });
  env
    // lists library
    .registerFunction('list.isSorted(): bool', (l: unknown[]) => compareLists(l))
    .registerFunction('list.sum(): dyn', (l: unknown[]) => l.reduce((a, b) => (a as bigint) + (b as bigint), 0n))
    .registerFunction('list.min(): dyn', (l: unknown[]) => extreme(l, (a, b) => (a as number) < (b as number), 'min'))
    .registerFunction('list.max(): dyn', (l: unknown[]) => extreme(l, (a, b) => (a as number) > (b as number), 'max'))
    .registerFunction('list.indexOf(dyn): int', (l: unknown[], v: unknown) => BigInt(l.findIndex((x) => x === v)))
    .registerFunction('list.lastIndexOf(dyn): int', (l: unknown[], v: unknown) => BigInt(l.findLastIndex((x) => x === v)))
    // quantity library
    .registerFunction('isQuantity(string): bool', (s: string) => parseOrUndefined(s) !== undefined)
    .registerFunction('quantity(string): Quantity', (s: string) => new CelQuantity(Quantity.parse(s)))
    .registerFunction('Quantity.compareTo(Quantity): int', (a: CelQuantity, b: CelQuantity) => BigInt(a.q.cmp(b.q)))
    .registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: CelQuantity, b: CelQuantity) => a.q.cmp(b.q) > 0)
    .registerFunction('Quantity.isLessThan(Quantity): bool', (a: CelQuantity, b: CelQuantity) => a.q.cmp(b.q) < 0)
    .registerFunction('Quantity.sign(): int', (a: CelQuantity) => BigInt(a.q.sign()))
    .registerFunction('Quantity.isInteger(): bool', (a: CelQuantity) => isInt64(a.q))
    .registerFunction('Quantity.asInteger(): int', (a: CelQuantity) => {
      if (!isInt64(a.q)) throw new Error('cannot convert value to integer');
      return a.q.value();
    })
    .registerFunction('Quantity.asApproximateFloat(): double', (a: CelQuantity) => a.q.toNumber())
    // ip and cidr libraries
    .registerFunction('isIP(string): bool', (s: string) => parseAddr(s) !== undefined)
    .registerFunction('ip(string): net.IP', ipOf)
    .registerFunction('net.IP.family(): int', (ip: CelIP) => (ip.addr.family === 'IPv4' ? 4n : 6n))
    .registerFunction('string(net.IP): string', (ip: CelIP) => formatAddr(ip.addr))
    .registerFunction('isCIDR(string): bool', (s: string) => parsePrefix(s) !== undefined)
    .registerFunction('cidr(string): net.CIDR', cidrOf)
    .registerFunction('net.CIDR.containsIP(net.IP): bool', (c: CelCIDR, ip: CelIP) => prefixContains(c.prefix, ip.addr))
    .registerFunction('net.CIDR.containsIP(string): bool', (c: CelCIDR, s: string) => prefixContains(c.prefix, ipOf(s).addr))
    .registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (c: CelCIDR, o: CelCIDR) => prefixContainsPrefix(c.prefix, o.prefix))
    .registerFunction('net.CIDR.containsCIDR(string): bool', (c: CelCIDR, s: string) => prefixContainsPrefix(c.prefix, cidrOf(s).prefix))
    .registerFunction('net.CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.prefix.bits))
    .registerFunction('net.CIDR.ip(): net.IP', (c: CelCIDR) => new CelIP(c.prefix.addr))
    .registerFunction('net.CIDR.masked(): net.CIDR', (c: CelCIDR) => new CelCIDR(masked(c.prefix)))
    .registerFunction('string(net.CIDR): string', (c: CelCIDR) => formatPrefix(c.prefix));
  return env;
}

const env = newEnvironment();

/** A compiled expression: its program and how deeply its comprehensions nest. */
export interface CompiledExpression {
  readonly expression: string;
  readonly comprehensionDepth: number;
  readonly nodes: number;
  run(activation: Record<string, unknown>): unknown;
}

/** A compile error worded as upstream's (`compilation failed: ERROR: <input>:...`, here the engine's text). */
export class CompileError extends Error {}

/** Parses and type-checks one expression; throws CompileError when it is not valid CEL. */
export function compile(expression: string): CompiledExpression {
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = env.parse(expression);
  } catch (err) {
    throw new CompileError(`compilation failed: ERROR: <input>: ${firstLine(err)}`);
  }
  const check = parsed.check();
  if (!check.valid) throw new CompileError(`compilation failed: ERROR: <input>: ${firstLine(check.error)}`);
  const { depth, nodes } = measure(parsed.ast, 0);
  for (const pattern of regexLiterals(parsed.ast)) {
    const why = unboundedRegex(pattern);
    if (why) throw new CompileError(`compilation failed: ERROR: <input>: error parsing regexp ${JSON.stringify(pattern)}: ${why}`);
  }
  return { expression, comprehensionDepth: depth, nodes, run: (activation) => parsed(activation) };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/** The deepest comprehension nesting and the node count of an AST. */
function measure(node: unknown, depth: number): { depth: number; nodes: number } {
  if (Array.isArray(node)) {
    let out = { depth, nodes: 0 };
    for (const n of node) {
      const m = measure(n, depth);
      out = { depth: Math.max(out.depth, m.depth), nodes: out.nodes + m.nodes };
    }
    return out;
  }
  if (typeof node !== 'object' || node === null || !('op' in node)) return { depth, nodes: 0 };
  const { op, args } = node as { op: string; args: unknown };
  const nested = op === 'rcall' && Array.isArray(args) && comprehensions.has(args[0] as string) ? depth + 1 : depth;
  const m = measure(args, nested);
  return { depth: Math.max(nested, m.depth), nodes: m.nodes + 1 };
}

/** The string literals given to `.matches()`. */
function regexLiterals(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) regexLiterals(n, out);
  else if (typeof node === 'object' && node !== null && 'op' in node) {
    const { op, args } = node as { op: string; args: unknown };
    if (op === 'rcall' && Array.isArray(args) && args[0] === 'matches') {
      const pattern = (args[2] as { op?: string; args?: unknown }[] | undefined)?.[0];
      if (pattern?.op === 'value' && typeof pattern.args === 'string') out.push(pattern.args);
    }
    regexLiterals(args, out);
  }
  return out;
}

/** Whether a group's body starts with a repeated atom (or another group), so repeating the group is ambiguous. */
const startsRepeating = /^(?:\(|(?:\\.|\[(?:\\.|[^\]])*\]|[^\\[(|])(?:[*+]|\{\d+,\}))/;

/**
 * Why a pattern could backtrack without bound on a hostile subject (the engine uses JavaScript's
 * backtracking RegExp where upstream's RE2 is linear): backreferences and lookarounds, which RE2
 * refuses too, and a repeated group whose body starts with a repetition, like `(a+)+`.
 */
export function unboundedRegex(pattern: string): string | undefined {
  if (/\\[1-9k]/.test(pattern)) return 'invalid escape sequence: backreferences are not supported';
  if (/\(\?<?[=!]/.test(pattern)) return 'invalid or unsupported Perl syntax: lookaround';
  const opened: number[] = [];
  let ambiguousGroup = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const repeats = c === '*' || c === '+' || (c === '{' && /^\{\d+,\}/.test(pattern.slice(i)));
    if (repeats && ambiguousGroup) return 'nested repetition may backtrack without bound';
    ambiguousGroup = false;
    if (c === '\\') i++;
    else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (c === '(') opened.push(i);
    else if (c === ')' && opened.length > 0) {
      const body = pattern.slice(opened.pop()! + 1, i).replace(/^\?:/, '');
      ambiguousGroup = startsRepeating.test(body);
    }
  }
  return undefined;
}

/** The largest list, map or string reachable from a value (bounded walk: it stops past the limit). */
export function largestCollection(value: unknown, limit = perCallCostLimit): number {
  let largest = 0;
  let visited = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && visited < limit) {
    const v = stack.pop();
    visited++;
    if (typeof v === 'string') largest = Math.max(largest, v.length);
    else if (Array.isArray(v)) {
      largest = Math.max(largest, v.length);
      stack.push(...v);
    } else if (typeof v === 'object' && v !== null && !(v instanceof CelQuantity || v instanceof CelIP || v instanceof CelCIDR)) {
      const values = Object.values(v);
      largest = Math.max(largest, values.length);
      stack.push(...values);
    }
  }
  return visited >= limit ? limit : largest;
}

/** Upstream's runtime error when a call runs out of budget. */
export const costLimitExceeded = 'operation cancelled: actual cost limit exceeded';

/**
 * Runs a compiled expression once its estimated cost (nodes × largest input collection to the
 * power of the comprehension depth) fits the per-call budget; throws otherwise or on a runtime error.
 */
export function evaluate(compiled: CompiledExpression, activation: Record<string, unknown>, inputSize: number): unknown {
  const cost = compiled.nodes * Math.max(1, inputSize) ** compiled.comprehensionDepth;
  if (cost > perCallCostLimit) throw new Error(costLimitExceeded);
  return normalize(compiled.run(activation));
}

/** Bounds a composited variable's value so variables that build on each other cannot grow it without limit. */
export function boundedValue(value: unknown): unknown {
  if ((typeof value === 'string' || Array.isArray(value)) && value.length > maxValueSize) throw new Error(costLimitExceeded);
  return value;
}

function normalize(v: unknown): unknown {
  return v instanceof Optional ? (v.hasValue() ? v.value() : null) : v;
}

/**
 * A JSON value as CEL sees it: integral numbers are ints (bigint), others doubles; objects become
 * maps with only their own keys (no prototype is reachable from an expression).
 */
export function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  return v ?? null;
}
