// The small expression language of stage files: paths into the object a stage looks at, a few
// literals, and function calls. It is compiled once per stage file, then evaluated per object, so a
// stage set stays cheap at thousands of objects.
//
//   .status.podIP                        a field of the object (the root is ".")
//   .metadata.annotations["a.b/c"]      a field whose name is not an identifier
//   .spec.containers[]                   every element (the expression yields a list)
//   .status.conditions[type="Ready"]     the element whose field equals a value (any expression)
//   .spec.containers[0]                  one element
//   item.name, index                     the current element and its position inside "$each"
//   concat("a", item.name), now()        function calls

import { goDuration, parseDuration } from '../api/duration.js';
import { rfc3339 } from '../api/time.js';

/** What an expression sees: the object, the current "$each" element, and the functions it may call. */
export interface Env {
  root: unknown;
  item?: unknown;
  index?: number;
  /** Milliseconds since the epoch, for now(). */
  now: number;
  fns: Readonly<Record<string, SimFunction>>;
}

export type SimFunction = (env: Env, ...args: unknown[]) => unknown;
export type Expr = (env: Env) => unknown;

type Segment = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'all' } | { kind: 'filter'; field: string; value: Expr };

/** A path compiled into a function yielding every value it reaches (missing fields yield nothing). */
export type PathExpr = (env: Env) => unknown[];

export class ExprError extends Error {}

type Token = { kind: 'punct' | 'ident' | 'string' | 'number'; text: string; pos: number };

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if ('.[](),='.includes(c)) {
      tokens.push({ kind: 'punct', text: c, pos: i++ });
    } else if (c === '"' || c === "'") {
      const start = i++;
      let text = '';
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\\' && i + 1 < src.length) i++;
        text += src[i++];
      }
      if (i >= src.length) throw new ExprError(`unterminated string at ${start} in ${JSON.stringify(src)}`);
      i++;
      tokens.push({ kind: 'string', text, pos: start });
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(\.\d+)?/.exec(src.slice(i));
      if (!m) throw new ExprError(`unexpected ${JSON.stringify(c)} at ${i} in ${JSON.stringify(src)}`);
      tokens.push({ kind: 'number', text: m[0], pos: i });
      i += m[0].length;
    } else if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(src.slice(i))!;
      tokens.push({ kind: 'ident', text: m[0], pos: i });
      i += m[0].length;
    } else {
      throw new ExprError(`unexpected ${JSON.stringify(c)} at ${i} in ${JSON.stringify(src)}`);
    }
  }
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly src: string,
  ) {}

  private peek(text?: string): Token | undefined {
    const t = this.tokens[this.pos];
    return text === undefined || t?.text === text ? t : undefined;
  }

  private next(): Token {
    const t = this.tokens[this.pos++];
    if (!t) throw this.error('unexpected end');
    return t;
  }

  private expect(text: string): void {
    const t = this.next();
    if (t.text !== text || t.kind === 'string') throw this.error(`expected ${JSON.stringify(text)} at ${t.pos}`);
  }

  error(msg: string): ExprError {
    return new ExprError(`${msg} in ${JSON.stringify(this.src)}`);
  }

  done(): void {
    const t = this.peek();
    if (t) throw this.error(`unexpected ${JSON.stringify(t.text)} at ${t.pos}`);
  }

  expr(): { eval: Expr; path?: PathExpr } {
    const t = this.next();
    if (t.kind === 'string') return { eval: () => t.text };
    if (t.kind === 'number') {
      const n = Number(t.text);
      return { eval: () => n };
    }
    if (t.kind === 'punct' && t.text === '.') return this.path((env) => env.root, true);
    if (t.kind !== 'ident') throw this.error(`unexpected ${JSON.stringify(t.text)} at ${t.pos}`);
    switch (t.text) {
      case 'true':
        return { eval: () => true };
      case 'false':
        return { eval: () => false };
      case 'null':
        return { eval: () => null };
      case 'item':
        return this.path((env) => env.item, false);
      case 'index':
        return { eval: (env) => env.index };
    }
    if (!this.peek('(')) throw this.error(`unknown name ${JSON.stringify(t.text)} at ${t.pos}`);
    this.next();
    const args: Expr[] = [];
    while (!this.peek(')')) {
      args.push(this.expr().eval);
      if (!this.peek(')')) this.expect(',');
    }
    this.next();
    const name = t.text;
    return {
      eval: (env) => {
        const fn = env.fns[name];
        if (!fn) throw new ExprError(`unknown function ${name}()`);
        return fn(env, ...args.map((a) => a(env)));
      },
    };
  }

  /** Segments after the root; `afterDot`: the root's "." was just read, so a field name may follow directly. */
  private path(root: (env: Env) => unknown, afterDot: boolean): { eval: Expr; path: PathExpr } {
    const segments: Segment[] = [];
    if (afterDot && this.peek()?.kind === 'ident') segments.push({ kind: 'field', name: this.next().text });
    for (;;) {
      if (this.peek('.')) {
        this.next();
        const name = this.next();
        if (name.kind !== 'ident') throw this.error(`expected a field name at ${name.pos}`);
        segments.push({ kind: 'field', name: name.text });
      } else if (this.peek('[')) {
        this.next();
        segments.push(this.bracket());
        this.expect(']');
      } else {
        break;
      }
    }
    const path = compileSegments(root, segments);
    // Only "[]" makes a list; a filter picks the first element that matches.
    const multi = segments.some((s) => s.kind === 'all');
    return { path, eval: multi ? path : (env) => path(env)[0] };
  }

  private bracket(): Segment {
    const t = this.peek();
    if (t?.text === ']' && t.kind === 'punct') return { kind: 'all' };
    this.next();
    if (t?.kind === 'string') return { kind: 'field', name: t.text };
    if (t?.kind === 'number') return { kind: 'index', index: Number(t.text) };
    if (t?.kind === 'ident' && this.peek('=')) {
      this.next();
      return { kind: 'filter', field: t.text, value: this.expr().eval };
    }
    throw this.error(`unexpected ${JSON.stringify(t?.text)} in brackets`);
  }
}

function compileSegments(root: (env: Env) => unknown, segments: Segment[]): PathExpr {
  return (env) => {
    let values = [root(env)];
    for (const seg of segments) {
      const next: unknown[] = [];
      for (const v of values) {
        if (v === null || v === undefined) continue;
        switch (seg.kind) {
          case 'field':
            if (typeof v === 'object' && !Array.isArray(v)) next.push((v as Record<string, unknown>)[seg.name]);
            break;
          case 'index':
            if (Array.isArray(v)) next.push(v[seg.index]);
            break;
          case 'all':
            if (Array.isArray(v)) next.push(...v);
            break;
          case 'filter': {
            if (!Array.isArray(v)) break;
            const want = seg.value(env);
            for (const el of v) if (el && typeof el === 'object' && (el as Record<string, unknown>)[seg.field] === want) next.push(el);
            break;
          }
        }
      }
      values = next.filter((x) => x !== undefined && x !== null);
    }
    return values;
  };
}

export function compileExpr(src: string): Expr {
  const p = new Parser(tokenize(src), src);
  const e = p.expr();
  p.done();
  return e.eval;
}

/** A selector key: a path whose every reached value counts. */
export function compilePath(src: string): PathExpr {
  const p = new Parser(tokenize(src), src);
  const e = p.expr();
  p.done();
  if (!e.path) throw new ExprError(`not a path: ${JSON.stringify(src)}`);
  return e.path;
}

/** Empty values are false, as in Go templates: undefined, null, false, 0, "", [] and {}. */
export function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}


const num = (v: unknown): number => {
  const n = typeof v === 'number' ? v : Number(v);
  if (Number.isNaN(n)) throw new ExprError(`not a number: ${JSON.stringify(v)}`);
  return n;
};

/** The functions every stage may call; the node and pod simulators add their own. */
export const builtinFunctions: Readonly<Record<string, SimFunction>> = {
  now: (env) => rfc3339(env.now),
  concat: (_env, ...args) => args.map((a) => (a === undefined || a === null ? '' : String(a))).join(''),
  join: (_env, list, sep) => (Array.isArray(list) ? list.join(sep === undefined ? ' ' : String(sep)) : ''),
  len: (_env, v) => (Array.isArray(v) || typeof v === 'string' ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0),
  add: (_env, a, b) => num(a) + num(b),
  mul: (_env, a, b) => num(a) * num(b),
  min: (_env, a, b) => Math.min(num(a), num(b)),
  pow: (_env, a, b) => num(a) ** num(b),
  eq: (_env, a, b) => a === b,
  not: (_env, a) => !truthy(a),
  // The first non-empty argument (Go templates' `or`), e.g. or(.status.startTime, now()).
  or: (_env, ...args) => args.find(truthy) ?? args[args.length - 1],
  duration: (_env, ms) => goDuration(num(ms)),
  // The status a command that exits at once exits with: `false` 1, `exit N` (sh -c 'exit N') N, else 0.
  exitCode: (_env, command) => {
    const line = Array.isArray(command) ? command.join(' ') : String(command ?? '');
    if (/(^|[\s/])false$/.test(line)) return 1;
    const m = /(?:^|\s)exit\s+([0-9]{1,3})$/.exec(line);
    return m ? Number(m[1]) & 255 : 0;
  },
  // A condition's lastTransitionTime: kept while its status stays the same, now() when it changes.
  transitionTime: (env, type, status) => {
    const conditions = (env.root as { status?: { conditions?: { type?: string; status?: string; lastTransitionTime?: string }[] } }).status?.conditions;
    const existing = conditions?.find((c) => c.type === type);
    return existing?.status === status && existing?.lastTransitionTime ? existing.lastTransitionTime : rfc3339(env.now);
  },
  parseDuration: (_env, s) => {
    try {
      return parseDuration(String(s));
    } catch (err) {
      throw new ExprError((err as Error).message, { cause: err });
    }
  },
};
