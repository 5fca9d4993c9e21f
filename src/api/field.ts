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
  private constructor(private readonly text: string) {}
  static root(name: string): Path {
    return new Path(name);
  }
  child(name: string, ...more: string[]): Path {
    let p = this.text === '' ? name : `${this.text}.${name}`;
    for (const m of more) p = `${p}.${m}`;
    return new Path(p);
  }
  index(i: number): Path {
    return new Path(`${this.text}[${i}]`);
  }
  key(k: string): Path {
    return new Path(`${this.text}[${k}]`);
  }
  toString(): string {
    return this.text;
  }
}

export const required = (p: Path, detail?: string): FieldError => ({ type: 'FieldValueRequired', field: `${p}`, detail });
export const invalid = (p: Path, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueInvalid', field: `${p}`, badValue: value, detail });
export const forbidden = (p: Path, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: `${p}`, detail });
export const duplicate = (p: Path, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: `${p}`, badValue: value });
export const notFound = (p: Path, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: `${p}`, badValue: value });
export const tooLong = (p: Path, value: unknown, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field: `${p}`,
  badValue: value,
  detail: `must have at most ${max} bytes`,
});
export const tooMany = (p: Path, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field: `${p}`,
  badValue: actual,
  detail: `must have at most ${max} items`,
});
export function notSupported(p: Path, value: unknown, valid: string[]): FieldError {
  const detail = valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : undefined;
  return { type: 'FieldValueNotSupported', field: `${p}`, badValue: value, detail };
}

/** Upstream's rendering of a bad value: strings quoted, numbers and booleans bare, others as Go would print them. */
function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

/** The message of one error, e.g. `spec.containers[0].image: Required value`. */
export function fieldErrorMessage(e: FieldError): string {
  let s = `${e.field}: ${typeText[e.type]}`;
  const hasValue = e.type !== 'FieldValueRequired' && e.type !== 'FieldValueForbidden' && e.type !== 'InternalError' && e.type !== 'FieldValueTooMany'
    ? e.badValue !== omitValue && !(e.type === 'FieldValueTooLong' && e.badValue === undefined)
    : false;
  if (hasValue && 'badValue' in e) s += `: ${renderValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** The aggregate as upstream prints it: one error bare, several in brackets joined by ", ". */
export function aggregateMessage(errs: FieldError[]): string {
  const msgs = [...new Set(errs.map(fieldErrorMessage))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}
