// Field errors as upstream's apimachinery field package reports them: a path, a type and a detail.
// Their text is what kubectl prints for a 422, so the wording of each type is upstream's.

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Marks a bad value that is not printed (upstream's field.OmitValueType). */
export const omitValue = Symbol('omitValue');

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail?: string;
}

/** A field path like `spec.containers[0].image`, built immutably. */
export class Path {
  /** Spelled on first use: validation makes a path for every field it visits and prints few. */
  private text?: string;
  private constructor(
    private readonly parent: Path | undefined,
    private readonly segment: string | number,
    private readonly bracketed: boolean,
  ) {}
  /** A root path; an empty name prints as "[]", as upstream's field.NewPath("") does. */
  static root(name: string): Path {
    return new Path(undefined, name === '' ? '[]' : name, false);
  }
  child(name: string, ...more: string[]): Path {
    let p = new Path(this, name, false);
    for (const m of more) p = new Path(p, m, false);
    return p;
  }
  index(i: number): Path {
    return new Path(this, i, true);
  }
  key(k: string): Path {
    return new Path(this, k, true);
  }
  toString(): string {
    if (this.text === undefined) {
      const segment = String(this.segment);
      this.text = !this.parent ? segment : this.bracketed ? `${this.parent.toString()}[${segment}]` : `${this.parent.toString()}.${segment}`;
    }
    return this.text;
  }
}

export const required = (p: Path, detail?: string): FieldError => ({ type: 'FieldValueRequired', field: `${p}`, detail });
export const invalid = (p: Path, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueInvalid', field: `${p}`, badValue: value, detail });
export const forbidden = (p: Path, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: `${p}`, detail });
export const duplicate = (p: Path, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: `${p}`, badValue: value });
export const notFound = (p: Path, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: `${p}`, badValue: value });
/** The value is never printed; a negative max gives upstream's generic detail. */
export const tooLong = (p: Path, value: unknown, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field: `${p}`,
  badValue: value,
  detail: max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long',
});
/** A negative actual omits the count, a negative max gives upstream's generic detail. */
export const tooMany = (p: Path, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field: `${p}`,
  badValue: actual >= 0 ? actual : omitValue,
  detail: max >= 0 ? `must have at most ${max} items` : 'has too many items',
});
export const typeInvalid = (p: Path, value: unknown, detail: string): FieldError => ({ type: 'FieldValueTypeInvalid', field: `${p}`, badValue: value, detail });
export const internalError = (p: Path, detail: string): FieldError => ({ type: 'InternalError', field: `${p}`, detail });

/**
 * A bad value printed verbatim, as Go prints a value whose type has a String() method (a Quantity,
 * an IntOrString) or a composite it renders with %#v (e.g. `v1.LabelSelector{...}`).
 */
export function rawValue(text: string): { toString(): string } {
  return { toString: () => text };
}
export function notSupported(p: Path, value: unknown, valid: string[]): FieldError {
  const detail = valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : undefined;
  return { type: 'FieldValueNotSupported', field: `${p}`, badValue: value, detail };
}

/** Go's %q for the strings validation reports. */
const goQuote = (s: string) => JSON.stringify(s);

/**
 * Upstream's rendering of a bad value: strings quoted, numbers and booleans bare, values with their
 * own toString (Go's fmt.Stringer) verbatim, string slices and maps as Go's %#v; other objects as JSON.
 */
function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) return `[]string{${v.map(goQuote).join(', ')}}`;
    return JSON.stringify(v);
  }
  if (typeof v === 'object' && v.toString !== Object.prototype.toString) return String(v);
  const entries = Object.entries(v as object);
  if (entries.every(([, x]) => typeof x === 'string')) {
    const sorted = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[string]string{${sorted.map(([k, x]) => `${goQuote(k)}:${goQuote(x as string)}`).join(', ')}}`;
  }
  return JSON.stringify(v);
}

/** The message of one error, e.g. `spec.containers[0].image: Required value`. */
export function fieldErrorMessage(e: FieldError): string {
  let s = `${e.field}: ${typeText[e.type]}`;
  const valueless = e.type === 'FieldValueRequired' || e.type === 'FieldValueForbidden' || e.type === 'FieldValueTooLong' || e.type === 'InternalError';
  if (!valueless && e.badValue !== omitValue) s += `: ${renderValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** The aggregate as upstream prints it: one error bare, several in brackets joined by ", ". */
export function aggregateMessage(errs: FieldError[]): string {
  const msgs = [...new Set(errs.map(fieldErrorMessage))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}
