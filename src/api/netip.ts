// IP addresses and prefixes as numbers, as Go's net/netip: what the service IP allocator, the
// ServiceCIDR and NetworkPolicy validation, the ServiceCIDR controller and the policy planner compute with. Both families; an address is a
// bigint with its bit length (32 or 128).
import { isIPv4, isIPv6 } from './validation/names.js';

export type IPFamily = 'IPv4' | 'IPv6';

export interface Addr {
  family: IPFamily;
  value: bigint;
}

export interface Prefix {
  addr: Addr;
  bits: number;
}

const width = (f: IPFamily) => (f === 'IPv4' ? 32 : 128);

/** netip.ParseAddr: dotted quad or IPv6 (a zone is refused); undefined when it is neither. */
export function parseAddr(s: string): Addr | undefined {
  if (isIPv4(s)) {
    // Go's netip refuses leading zeros, as the pattern already does.
    const v = s.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
    return { family: 'IPv4', value: v };
  }
  if (!isIPv6(s)) return undefined;
  let text = s;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseAddr(tail)!.value;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { family: 'IPv6', value: groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

/** The canonical text of an address (netip.Addr.String: RFC 5952 for IPv6). */
export function formatAddr(a: Addr): string {
  if (a.family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((a.value >> s) & 255n)).join('.');
  // An IPv4-mapped address keeps its dotted tail, as Go prints it.
  if (a.value >> 32n === 0xffffn) return `::ffff:${formatAddr({ family: 'IPv4', value: a.value & 0xffffffffn })}`;
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((s) => Number((a.value >> s) & 0xffffn));
  // The longest run of two or more zero groups becomes "::" (the first of equal runs).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** netip.ParsePrefix: ADDR/BITS with BITS in range (no leading zeros). */
export function parsePrefix(s: string): Prefix | undefined {
  const i = s.indexOf('/');
  if (i < 0) return undefined;
  const addr = parseAddr(s.slice(0, i));
  const bitsText = s.slice(i + 1);
  if (!addr || !/^(0|[1-9][0-9]{0,2})$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  return bits <= width(addr.family) ? { addr, bits } : undefined;
}

/**
 * netutils.ParseCIDRSloppy, Go's pre-1.17 parser that upstream keeps for legacy fields: IPv4 octets
 * and the prefix length may have leading zeros. The address keeps its host bits.
 */
export function parsePrefixSloppy(s: string): Prefix | undefined {
  const i = s.indexOf('/');
  if (i < 0 || !/^[0-9]+$/.test(s.slice(i + 1))) return undefined;
  const addr = parseAddrSloppy(s.slice(0, i));
  const bits = Number(s.slice(i + 1));
  return addr && bits <= width(addr.family) ? { addr, bits } : undefined;
}

/** An address as the sloppy parser reads it: leading zeros allowed in IPv4 octets. */
export function parseAddrSloppy(s: string): Addr | undefined {
  const parts = s.split('.');
  if (parts.length === 4 && parts.every((p) => /^[0-9]{1,7}$/.test(p) && Number(p) <= 255)) {
    return { family: 'IPv4', value: parts.reduce((n, p) => (n << 8n) | BigInt(Number(p)), 0n) };
  }
  return isIPv6(s) ? parseAddr(s) : undefined;
}

/** The prefix with the host bits cleared (netip.Prefix.Masked). */
export function masked(p: Prefix): Prefix {
  const host = width(p.addr.family) - p.bits;
  return { addr: { family: p.addr.family, value: (p.addr.value >> BigInt(host)) << BigInt(host) }, bits: p.bits };
}

export const formatPrefix = (p: Prefix): string => `${formatAddr(p.addr)}/${p.bits}`;

/** The number of addresses in the prefix. */
export const prefixSize = (p: Prefix): bigint => 1n << BigInt(width(p.addr.family) - p.bits);

export function prefixContains(p: Prefix, a: Addr): boolean {
  if (p.addr.family !== a.family) return false;
  const base = masked(p).addr.value;
  return a.value >= base && a.value < base + prefixSize(p);
}

/** Whether q lies within p (the same prefix included). */
export const prefixContainsPrefix = (p: Prefix, q: Prefix): boolean => q.bits >= p.bits && prefixContains(p, q.addr);

export const addrAt = (p: Prefix, offset: bigint): Addr => ({ family: p.addr.family, value: masked(p).addr.value + offset });

export const familyOf = (s: string): IPFamily | undefined => parseAddr(s)?.family;
