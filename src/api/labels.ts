// Label selectors as apimachinery's labels package: the string syntax (`a=b,c in (x,y),!d,e>1`),
// metav1.LabelSelector conversion, matching and rendering. Error texts are upstream's, because
// the API server returns them verbatim in 400 responses and kubectl prints them.
import type { LabelSelector as MetaLabelSelector } from 'kubernetes-types/meta/v1.js';
import { aggregateMessage, invalid, Path, type FieldError } from './field.js';

/** selection.Operator values. */
export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

const binaryOperators: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

export type Labels = Readonly<Record<string, string>>;

export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

export interface Selector {
  matches(labels: Labels | undefined): boolean;
  /** True when the selector does not restrict anything (everything()). */
  empty(): boolean;
  /** The requirements, or undefined for nothing() (it cannot be expressed as requirements). */
  requirements(): readonly Requirement[] | undefined;
  /** The single value `label` must have (`=`, `==`, or `in` with one value), if any. */
  requiresExactMatch(label: string): string | undefined;
  toString(): string;
}

// ---- validation (apimachinery util/validation), worded as upstream ----

const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);
const qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueRe = new RegExp(`^${labelValueFmt}$`);
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Upstream joins each "'x', " with " or ", hence the double spaces.
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
const maxLenError = (n: number) => `must be no more than ${n} characters`;

/** validation.IsQualifiedName: the problems with a label key (empty when valid). */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) errs.push(`prefix part ${maxLenError(253)}`);
      if (!dns1123SubdomainRe.test(prefix)) errs.push(`prefix part ${regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com')}`);
    }
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!qualifiedNameRe.test(name)) errs.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** validation.IsValidLabelValue: the problems with a label value (empty when valid). */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

// Go's nil *field.Path prints as "<nil>": the parser validates keys against it.
const nilPath = Path.root('<nil>');

function keyError(key: string, path: Path): FieldError | undefined {
  const errs = qualifiedNameErrors(key);
  return errs.length ? invalid(path, key, errs.join('; ')) : undefined;
}

/** strconv.ParseInt(s, 10, 64) as a bigint, or undefined. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** labels.NewRequirement: validates and builds one requirement; throws with the aggregated field errors. */
export function newRequirement(key: string, operator: Operator, values: readonly string[]): Requirement {
  const errs: FieldError[] = [];
  const ke = keyError(key, Path.root('key'));
  if (ke) errs.push(ke);
  const valuePath = Path.root('values');
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(invalid(valuePath, values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(invalid(valuePath, values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(invalid(valuePath, values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(invalid(valuePath, values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(valuePath.index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  values.forEach((v, i) => {
    const ve = labelValueErrors(v);
    if (ve.length) errs.push(invalid(valuePath.index(i).key(key), v, ve.join('; ')));
  });
  if (errs.length) throw new Error(aggregateMessage(errs));
  return { key, operator, values: [...values] };
}

export function requirementMatches(r: Requirement, labels: Labels): boolean {
  // Own properties only: "constructor" is no label.
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key]! : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const actual = parseInt64(value);
      const bound = parseInt64(r.values[0]!);
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

const opText: Record<Operator, string> = { in: ' in ', notin: ' notin ', '=': '=', '==': '==', '!=': '!=', gt: '>', lt: '<', exists: '', '!': '' };

export function requirementString(r: Requirement): string {
  const head = (r.operator === '!' ? '!' : '') + r.key;
  if (r.operator === 'exists' || r.operator === '!') return head;
  // More than one value prints sorted so equal selectors print alike.
  const values = r.values.length === 1 ? r.values[0]! : [...r.values].sort().join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${head}${opText[r.operator]}(${values})` : `${head}${opText[r.operator]}${values}`;
}

const noLabels: Labels = Object.freeze({});

class RequirementsSelector implements Selector {
  constructor(private readonly reqs: readonly Requirement[]) {}
  // A plain loop: selectors are matched against every pod of the cluster in the scheduler's hot loops.
  matches(labels: Labels | undefined): boolean {
    const reqs = this.reqs;
    const l = labels ?? noLabels;
    for (let i = 0; i < reqs.length; i++) if (!requirementMatches(reqs[i]!, l)) return false;
    return true;
  }
  empty(): boolean {
    return this.reqs.length === 0;
  }
  requirements(): readonly Requirement[] {
    return this.reqs;
  }
  requiresExactMatch(label: string): string | undefined {
    const r = this.reqs.find((x) => x.key === label);
    if (!r || r.values.length !== 1) return undefined;
    return r.operator === '=' || r.operator === '==' || r.operator === 'in' ? r.values[0] : undefined;
  }
  toString(): string {
    return this.reqs.map(requirementString).join(',');
  }
}

const byKey = (a: Requirement, b: Requirement) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A selector of the given requirements (sorted by key, as upstream's Add). */
export function selectorOf(reqs: readonly Requirement[]): Selector {
  return new RequirementsSelector([...reqs].sort(byKey));
}

const everythingSelector: Selector = new RequirementsSelector([]);
const nothingSelector: Selector = {
  matches: () => false,
  empty: () => false,
  requirements: () => undefined,
  requiresExactMatch: () => undefined,
  toString: () => '',
};

/** Matches every label set. */
export const everything = (): Selector => everythingSelector;
/** Matches no label set (a nil metav1.LabelSelector). */
export const nothing = (): Selector => nothingSelector;
export const isNothing = (s: Selector): boolean => s === nothingSelector;

/** Exact match on every pair of the set; an empty set is everything(). Not validated, as upstream's SelectorFromSet. */
export function selectorFromSet(set: Labels | undefined): Selector {
  return selectorOf(Object.entries(set ?? {}).map(([key, v]) => ({ key, operator: '=' as const, values: [v] })));
}

/** metav1.LabelSelectorAsSelector: undefined/null → nothing(), empty → everything(); throws on invalid input. */
export function labelSelectorAsSelector(ps: MetaLabelSelector | null | undefined): Selector {
  if (!ps) return nothing();
  const matchLabels = Object.entries(ps.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const exprs = ps.matchExpressions ?? [];
  if (matchLabels.length + exprs.length === 0) return everything();
  const reqs: Requirement[] = matchLabels.map(([k, v]) => newRequirement(k, '=', [v]));
  for (const e of exprs) {
    const op = metaOperators[e.operator];
    if (!op) throw new Error(`"${e.operator}" is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, e.values ?? []));
  }
  return selectorOf(reqs);
}

const metaOperators: Record<string, Operator | undefined> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

// ---- the string syntax: a lexer and a recursive-descent parser mirroring upstream's ----

type Token =
  | 'error'
  | 'eos'
  | 'closedPar'
  | 'comma'
  | 'doesNotExist'
  | 'doubleEquals'
  | 'equals'
  | 'greaterThan'
  | 'identifier'
  | 'in'
  | 'lessThan'
  | 'notEquals'
  | 'notIn'
  | 'openPar';

const literalTokens: Record<string, Token | undefined> = {
  ')': 'closedPar',
  ',': 'comma',
  '!': 'doesNotExist',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'greaterThan',
  in: 'in',
  '<': 'lessThan',
  '!=': 'notEquals',
  notin: 'notIn',
  '(': 'openPar',
};

const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => '=!(),><'.includes(c);

interface Scanned {
  tok: Token;
  lit: string;
}

function lex(s: string): Scanned[] {
  const out: Scanned[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++;
    if (pos >= s.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    if (isSpecial(s[pos]!)) {
      // Longest run of special characters that still forms a known operator.
      let buf = '';
      let last: Scanned | undefined;
      while (pos < s.length && isSpecial(s[pos]!)) {
        buf += s[pos];
        const t = literalTokens[buf];
        if (t) last = { tok: t, lit: buf };
        else if (last) break;
        pos++;
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
    } else {
      let buf = '';
      while (pos < s.length && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) buf += s[pos++];
      // Own keys only: a label key like "constructor" is an identifier, not Object.prototype's.
      out.push({ tok: (Object.hasOwn(literalTokens, buf) ? literalTokens[buf] : undefined) ?? 'identifier', lit: buf });
    }
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly items: Scanned[]) {}

  // In a values context the keywords `in`/`notin` are plain identifiers.
  private lookahead(values: boolean): Scanned {
    const it = this.items[Math.min(this.pos, this.items.length - 1)]!;
    return values && (it.tok === 'in' || it.tok === 'notIn') ? { tok: 'identifier', lit: it.lit } : it;
  }
  private consume(values: boolean): Scanned {
    const it = this.lookahead(values);
    this.pos++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === 'eos') return reqs;
      if (tok !== 'identifier' && tok !== 'doesNotExist') throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (e) {
        throw new Error(`unable to parse requirement: ${(e as Error).message}`, { cause: e });
      }
      const next = this.consume(true);
      if (next.tok === 'eos') return reqs;
      if (next.tok !== 'comma') throw new Error(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead(true);
      if (after.tok !== 'identifier' && after.tok !== 'doesNotExist') throw new Error(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): Requirement {
    let { tok, lit } = this.consume(true);
    let unary: Operator | undefined;
    if (tok === 'doesNotExist') {
      unary = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== 'identifier') throw new Error(`found '${lit}', expected: identifier`);
    const ke = keyError(lit, nilPath);
    if (ke) throw new Error(aggregateMessage([ke]));
    const key = lit;
    const next = this.lookahead(true).tok;
    if (unary === undefined && (next === 'eos' || next === 'comma')) unary = 'exists';
    if (unary) return newRequirement(key, unary, []);
    const op = this.operator();
    const values = op === 'in' || op === 'notin' ? this.setValues() : this.exactValue();
    // Upstream collects values in a set and lists them sorted.
    return newRequirement(key, op, [...new Set(values)].sort());
  }

  private operator(): Operator {
    const { tok, lit } = this.consume(false);
    const ops: Partial<Record<Token, Operator>> = {
      in: 'in',
      equals: '=',
      doubleEquals: '==',
      greaterThan: 'gt',
      lessThan: 'lt',
      notIn: 'notin',
      notEquals: '!=',
    };
    const op = ops[tok];
    if (!op) throw new Error(`found '${lit}', expected: ${binaryOperators.join(', ')}`);
    return op;
  }

  private setValues(): string[] {
    const open = this.consume(true);
    if (open.tok !== 'openPar') throw new Error(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    if (tok === 'closedPar') {
      this.consume(true);
      return [''];
    }
    if (tok !== 'identifier' && tok !== 'comma') throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.identifiersList();
    if (this.consume(true).tok !== 'closedPar') throw new Error(`found '${lit}', expected: ')'`);
    return values;
  }

  // A comma-separated list where empty entries stand for the empty value: `(a,,b)`, `(,a)`, `(a,)`.
  private identifiersList(): string[] {
    const values: string[] = [];
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === 'identifier') {
        values.push(lit);
        const next = this.lookahead(true);
        if (next.tok === 'comma') continue;
        if (next.tok === 'closedPar') return values;
        throw new Error(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok !== 'comma') throw new Error(`found '${lit}', expected: ',', or identifier`);
      if (values.length === 0) values.push('');
      const next = this.lookahead(true).tok;
      if (next === 'closedPar') {
        values.push('');
        return values;
      }
      if (next === 'comma') values.push('');
    }
  }

  private exactValue(): string[] {
    const next = this.lookahead(true).tok;
    if (next === 'eos' || next === 'comma') return [''];
    const { tok, lit } = this.consume(true);
    if (tok === 'identifier') return [lit];
    throw new Error(`found '${lit}', expected: identifier`);
  }
}

/** labels.Parse: the selector of a `labelSelector` string; '' is everything(). Throws with upstream's message. */
export function parseLabelSelector(selector: string): Selector {
  return selectorOf(new Parser(lex(selector)).parse());
}
