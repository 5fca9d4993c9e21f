// The Prometheus text exposition format (version 0.0.4) as client_golang's expfmt writes it, so a
// scrape of this kubelet reads byte for byte like a Go kubelet's: families sorted by name, HELP
// prefixed with component-base's stability level, label pairs sorted by name, samples sorted by
// label values, numbers as Go's strconv 'g' shortest form, timestamps in milliseconds.

export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge';
/** component-base's stability levels; the HELP text starts with "[STABLE] " or "[ALPHA] ". */
export type StabilityLevel = 'STABLE' | 'ALPHA';

export interface MetricDesc {
  name: string;
  help: string;
  type: MetricType;
  stability: StabilityLevel;
  /** Label names in declaration order (the values of a sample follow this order). */
  labels?: readonly string[];
}

export interface Sample {
  desc: MetricDesc;
  /** Values for desc.labels, in the same order. */
  labelValues?: readonly string[];
  value: number;
  /** Milliseconds since the epoch, when the value was measured (metrics.NewLazyMetricWithTimestamp). */
  timestampMs?: number;
}

/** strconv.FormatFloat(f, 'g', -1, 64): the shortest digits that round-trip; %e from exponent 6 up or below -4. */
export function goFormatFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const neg = f < 0;
  // toExponential() without an argument also yields the shortest round-tripping digits.
  const [mant, expText] = Math.abs(f).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  let out: string;
  // strconv picks %e over %f with precision 6 when asked for the shortest form.
  if (exp < -4 || exp >= 6) {
    out = eForm(digits, exp);
  } else if (exp < 0) {
    out = `0.${'0'.repeat(-exp - 1)}${digits}`;
  } else {
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    out = frac ? `${intPart}.${frac}` : intPart;
  }
  return neg ? `-${out}` : out;
}

function eForm(digits: string, exp: number): string {
  const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp).toString().padStart(2, '0');
  return `${mant}e${exp < 0 ? '-' : '+'}${e}`;
}

/** expfmt's writeFloat: 1, 0 and -1 are written directly; the rest as Go's %g. */
function formatValue(f: number): string {
  if (f === 1 || f === 0 || f === -1) return String(f);
  return goFormatFloat(f);
}

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** The samples as one exposition; families without samples are left out, as Gather does. */
export function renderText(samples: readonly Sample[]): string {
  const families = new Map<string, { desc: MetricDesc; lines: { key: string[]; text: string }[] }>();
  for (const s of samples) {
    const names = s.desc.labels ?? [];
    const pairs = names.map((n, i) => [n, s.labelValues?.[i] ?? ''] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const labels = pairs.length ? `{${pairs.map(([n, v]) => `${n}="${escapeLabelValue(v)}"`).join(',')}}` : '';
    const ts = s.timestampMs !== undefined ? ` ${Math.trunc(s.timestampMs)}` : '';
    const family = families.get(s.desc.name) ?? { desc: s.desc, lines: [] };
    family.lines.push({ key: pairs.map(([, v]) => v), text: `${s.desc.name}${labels} ${formatValue(s.value)}${ts}\n` });
    families.set(s.desc.name, family);
  }
  let out = '';
  for (const name of [...families.keys()].sort()) {
    const { desc, lines } = families.get(name)!;
    out += `# HELP ${name} [${desc.stability}] ${escapeHelp(desc.help)}\n# TYPE ${name} ${desc.type}\n`;
    lines.sort((a, b) => compareKeys(a.key, b.key));
    for (const l of lines) out += l.text;
  }
  return out;
}

function compareKeys(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}
