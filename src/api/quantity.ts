// resource.Quantity as apimachinery implements it: a fixed-point number with nano precision, a format
// (DecimalSI "1k", BinarySI "1Ki", DecimalExponent "1e3") and upstream's canonical serialization, which
// is what the API server writes back for every quantity it decodes (e.g. "0.5" → "500m").

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const formatRe = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** Upstream's parse errors, verbatim. */
export const errFormatWrong = `quantities must match the regular expression '${formatRe}'`;
export const errSuffix = "unable to parse quantity's suffix";

export class QuantityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityError';
  }
}

const NANO = 1_000_000_000n;
const MAX_INT64 = 2n ** 63n - 1n;

const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const decimalByExponent = new Map(Object.entries(decimalSuffixes).map(([s, e]) => [e, s]));
const binaryByExponent = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const abs = (n: bigint): bigint => (n < 0n ? -n : n);
/** a / b for b > 0, rounded away from zero. */
function divAway(a: bigint, b: bigint): bigint {
  const q = a / b;
  if (q * b === a) return q;
  return a > 0n ? q + 1n : q - 1n;
}

interface Parts {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

// Splits as upstream's parseQuantityString: sign, leading zeros, integer digits, fraction digits, suffix.
function split(str: string): Parts {
  let pos = 0;
  const end = str.length;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && str[i]! >= '0' && str[i]! <= '9') i++;
  // With every integer digit stripped, the integer part is 0 (so ".5" and "0n" parse).
  const num = str.slice(pos, i) || '0';
  let denom = '';
  if (str[i] === '.') {
    const start = ++i;
    while (i < end && str[i]! >= '0' && str[i]! <= '9') i++;
    denom = str.slice(start, i);
  }
  const suffixStart = i;
  while (i < end && 'eEinumkKMGTP'.includes(str[i]!)) i++;
  if (i < end && (str[i] === '-' || str[i] === '+')) i++;
  while (i < end && str[i]! >= '0' && str[i]! <= '9') i++;
  if (i < end) throw new QuantityError(errFormatWrong);
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

function interpret(suffix: string): { base: 10 | 2; exponent: number; format: QuantityFormat } {
  if (suffix in decimalSuffixes) return { base: 10, exponent: decimalSuffixes[suffix]!, format: 'DecimalSI' };
  if (suffix in binarySuffixes) return { base: 2, exponent: binarySuffixes[suffix]!, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    return { base: 10, exponent: Number(suffix.slice(1)), format: 'DecimalExponent' };
  }
  throw new QuantityError(errSuffix);
}

/**
 * Whether upstream keeps the text as given: its int64 fast path remembers the input when it is already
 * canonical, so e.g. "100m" and "1Ki" round-trip verbatim while "1000" becomes "1k".
 */
function keepsText(p: Parts, base: 10 | 2, exponent: number): boolean {
  const shifted = p.num + p.denom;
  if (BigInt(shifted) > MAX_INT64) return false;
  const value = BigInt(shifted);
  if (base === 2) {
    if (exponent < 0 || p.denom.length > 0 || 15 - p.num.length - Math.trunc((exponent * 3) / 10) - 1 < 0) return false;
    if (value << BigInt(exponent) > MAX_INT64) return false;
    return exponent % 10 === 0 && (value & 7n) !== 0n;
  }
  const scale = exponent - p.denom.length;
  if (18 - shifted.length < 0 || scale < -9) return false;
  return scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
}

export class Quantity {
  private constructor(
    /** The value in units of 10^-9. */
    readonly nanos: bigint,
    readonly format: QuantityFormat,
    private readonly text?: string,
  ) {}

  /** resource.ParseQuantity: throws QuantityError with upstream's message. */
  static parse(str: string): Quantity {
    if (str.length === 0) throw new QuantityError(errFormatWrong);
    if (str === '0') return new Quantity(0n, 'DecimalSI', str);
    const p = split(str);
    const { base, exponent, format } = interpret(p.suffix);
    // magnitude × 10^9 as a fraction, then rounded up to a whole nano as upstream does.
    let numerator = BigInt(p.num + p.denom) * (base === 2 ? 2n ** BigInt(exponent) : 1n);
    let denominator = pow10(p.denom.length);
    const shift = 9 + (base === 10 ? exponent : 0);
    if (shift >= 0) numerator *= pow10(shift);
    else denominator *= pow10(-shift);
    let nanos = divAway(numerator, denominator);
    let fmt = format;
    if (base === 2) {
      if (nanos > MAX_INT64 * NANO) nanos = MAX_INT64 * NANO;
      if (nanos > 0n && nanos < NANO) fmt = 'DecimalSI';
    }
    if (!p.positive) nanos = -nanos;
    return new Quantity(nanos, fmt, keepsText(p, base, exponent) ? str : undefined);
  }

  /** A quantity as it appears in decoded JSON or YAML: a string (surrounding spaces ignored) or a number. */
  static from(value: string | number): Quantity {
    return Quantity.parse(typeof value === 'number' ? String(value) : value.trim());
  }

  /** resource.NewMilliQuantity. */
  static fromMilli(milli: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(milli) * 1_000_000n, format);
  }

  /** resource.NewQuantity. */
  static fromValue(value: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(value) * NANO, format);
  }

  isZero(): boolean {
    return this.nanos === 0n;
  }

  sign(): -1 | 0 | 1 {
    return this.nanos < 0n ? -1 : this.nanos > 0n ? 1 : 0;
  }

  cmp(other: Quantity): -1 | 0 | 1 {
    return this.nanos < other.nanos ? -1 : this.nanos > other.nanos ? 1 : 0;
  }

  equals(other: Quantity): boolean {
    return this.nanos === other.nanos;
  }

  /** Quantity.Add: a zero receiver takes the other's format. */
  add(other: Quantity): Quantity {
    return new Quantity(this.nanos + other.nanos, this.nanos === 0n ? other.format : this.format);
  }

  sub(other: Quantity): Quantity {
    return new Quantity(this.nanos - other.nanos, this.nanos === 0n ? other.format : this.format);
  }

  neg(): Quantity {
    return new Quantity(-this.nanos, this.format);
  }

  /** The value in units of 10^scale, rounded away from zero (Quantity.ScaledValue). */
  scaledValue(scale: number): bigint {
    const shift = scale + 9;
    return shift >= 0 ? divAway(this.nanos, pow10(shift)) : this.nanos * pow10(-shift);
  }

  /** Quantity.Value: whole units rounded away from zero (bytes for memory, cores for cpu). */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** Quantity.MilliValue: milli-units rounded away from zero (millicores for cpu). */
  milliValue(): bigint {
    return this.scaledValue(-3);
  }

  /** Quantity.AsApproximateFloat64. */
  toNumber(): number {
    return Number(this.nanos) / 1e9;
  }

  /** Quantity.RoundUp to 10^scale; keeps the original text when nothing is rounded. */
  roundUp(scale: number): Quantity {
    const unit = pow10(Math.max(0, scale + 9));
    if (this.nanos % unit === 0n) return this;
    return new Quantity(divAway(this.nanos, unit) * unit, this.format);
  }

  toJSON(): string {
    return this.toString();
  }

  /** The canonical form upstream serializes. */
  toString(): string {
    if (this.text !== undefined) return this.text;
    if (this.nanos === 0n) return '0';
    if (this.format === 'BinarySI' && abs(this.nanos) >= 1024n * NANO && this.nanos % NANO === 0n) {
      let v = this.nanos / NANO;
      let e = 0;
      while (v % 1024n === 0n) {
        v /= 1024n;
        e++;
      }
      return `${v}${binaryByExponent[e]}`;
    }
    let m = this.nanos;
    let e = -9;
    while (m % 10n === 0n) {
      m /= 10n;
      e++;
    }
    const r = ((e % 3) + 3) % 3;
    m *= pow10(r);
    e -= r;
    if (this.format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`;
    // Above exa there is no SI suffix: the surplus stays in the number.
    if (e > 18) {
      m *= pow10(e - 18);
      e = 18;
    }
    return `${m}${decimalByExponent.get(e)}`;
  }
}

/** resource.ParseQuantity as a function. */
export const parseQuantity = (str: string): Quantity => Quantity.parse(str);

/** The error message for a value that is not a quantity, or undefined when it parses. */
export function quantityError(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return errFormatWrong;
  try {
    Quantity.from(value);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
