// Field selectors as apimachinery's fields package: `a=b,c==d,e!=f` over a flat field set, with
// `\`, `,` and `=` escaped by a backslash inside values. Messages are upstream's.
import { badRequest } from './errors.js';

export type Fields = Readonly<Record<string, string>>;

export interface FieldRequirement {
  readonly field: string;
  /** `==` parses to `=`, as upstream's selection.Equals. */
  readonly operator: '=' | '!=';
  readonly value: string;
}

export class FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}

  /** A missing field reads as '' (upstream's fields.Set.Get). */
  matches(fields: Fields): boolean {
    return this.requirements.every((r) => ((fields[r.field] ?? '') === r.value) === (r.operator === '='));
  }

  empty(): boolean {
    return this.requirements.length === 0;
  }

  /** The value `field` must equal, if the selector pins it (e.g. spec.nodeName for a kubelet's pods). */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  /** The field labels the selector refers to, in order, without repeats. */
  fieldsUsed(): string[] {
    return [...new Set(this.requirements.map((r) => r.field))];
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(',');
  }
}

export const everythingFields = (): FieldSelector => new FieldSelector([]);

/** Exact match on each field of the set (sorted, for a stable string). */
export function fieldSelectorFromSet(set: Fields): FieldSelector {
  return new FieldSelector(
    Object.keys(set)
      .sort()
      .map((field) => ({ field, operator: '=' as const, value: set[field]! })),
  );
}

export function escapeValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** fields.UnescapeValue: only `\\`, `\,` and `\=` are escapes; a bare `,` or `=` is an error. */
export function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw new Error(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      // Go's %v of a rune prints its code point.
      throw new Error(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw new Error('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on commas that are not escaped; escapes stay in the terms. */
function splitTerms(s: string): string[] {
  if (s === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** fields.ParseSelector: '' is everything. Terms are sorted, as upstream does before parsing. */
export function parseFieldSelector(selector: string): FieldSelector {
  const reqs: FieldRequirement[] = [];
  for (const part of splitTerms(selector).sort()) {
    if (part === '') continue;
    const m = /!=|==|=/.exec(part);
    if (!m) throw new Error(`invalid selector: '${selector}'; can't understand '${part}'`);
    const value = unescapeValue(part.slice(m.index + m[0].length));
    reqs.push({ field: part.slice(0, m.index), operator: m[0] === '!=' ? '!=' : '=', value });
  }
  return new FieldSelector(reqs);
}

/**
 * The server's check that a selector uses only the resource's supported field labels: throws
 * 400 BadRequest `field label not supported: <label>` for the first unsupported one.
 */
export function checkFieldLabels(selector: FieldSelector, allowed: readonly string[]): void {
  const bad = selector.requirements.find((r) => !allowed.includes(r.field));
  if (bad) throw badRequest(`field label not supported: ${bad.field}`);
}
