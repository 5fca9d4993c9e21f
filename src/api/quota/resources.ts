// ResourceList arithmetic for quota (upstream's k8s.io/apiserver/pkg/quota/v1 helpers), on exact
// quantities so that usage prints as a real cluster's does ("requests.cpu=500m", "memory=1Gi").
import { Quantity } from '../quantity.js';

/** A ResourceList with parsed values. */
export type Usage = Map<string, Quantity>;

/** Parses a ResourceList from an object; values that are not quantities are skipped (validation refuses them). */
export function parseResourceList(list: Record<string, string | number> | undefined): Usage {
  const out: Usage = new Map();
  for (const [name, raw] of Object.entries(list ?? {})) {
    try {
      out.set(name, Quantity.from(raw));
    } catch {
      // Stored quotas were validated; a bad value here is never charged.
    }
  }
  return out;
}

export function toResourceList(u: Usage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...u.keys()].sort()) out[name] = u.get(name)!.toString();
  return out;
}

export function addUsage(a: Usage, b: Usage): Usage {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, out.get(k)?.add(v) ?? v);
  return out;
}

/** SubtractWithNonNegativeResult: a - b, with negatives clamped to zero. */
export function subtractNonNegative(a: Usage, b: Usage): Usage {
  const out: Usage = new Map();
  for (const [k, v] of a) {
    const d = b.has(k) ? v.sub(b.get(k)!) : v;
    out.set(k, d.sign() < 0 ? Quantity.fromValue(0, v.format) : d);
  }
  return out;
}

/** Only the named resources. */
export function maskUsage(u: Usage, names: Iterable<string>): Usage {
  const out: Usage = new Map();
  for (const n of names) if (u.has(n)) out.set(n, u.get(n)!);
  return out;
}

export function removeZeros(u: Usage): Usage {
  return new Map([...u].filter(([, v]) => !v.isZero()));
}

/** LessThanOrEqual: whether every value in a is within b (missing in b counts as unlimited), and the names that are not. */
export function exceeded(a: Usage, b: Usage): string[] {
  const out: string[] = [];
  for (const [k, v] of a) {
    const limit = b.get(k);
    if (limit && v.cmp(limit) > 0) out.push(k);
  }
  return out;
}

export function usageEquals(a: Usage, b: Usage): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (!b.get(k)?.equals(v)) return false;
  return true;
}

/** upstream's prettyPrint: "name=value" sorted by name, comma-joined. */
export function prettyPrint(u: Usage): string {
  return [...u.keys()]
    .sort()
    .map((k) => `${k}=${u.get(k)!.toString()}`)
    .join(',');
}
