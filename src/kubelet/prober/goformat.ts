// The Go spellings upstream's probe and hook messages are made of: %q quoting, host:port joining
// and the texts of Go's net errors, so events read exactly as a Go kubelet's would.
import { goDuration } from '../../api/duration.js';

/** strconv.Quote: Go's %q of a string, or of raw bytes (invalid UTF-8 shows as \xNN). */
export function goQuote(input: string | Uint8Array): string {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
  let out = '"';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const len = b < 0x80 ? 1 : b >= 0xf0 && b < 0xf8 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
    const chunk = len > 0 ? bytes.subarray(i, i + len) : undefined;
    const ch = chunk && chunk.length === len ? chunk.toString('utf8') : undefined;
    if (!ch || [...ch].length !== 1 || !Buffer.from(ch, 'utf8').equals(chunk!)) {
      out += `\\x${b.toString(16).padStart(2, '0')}`;
      i++;
      continue;
    }
    out += quoteRune(ch);
    i += len;
  }
  return out + '"';
}

const simpleEscapes: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '\\': '\\\\', '"': '\\"' };

function quoteRune(ch: string): string {
  const esc = simpleEscapes[ch];
  if (esc) return esc;
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  // Go prints other non-graphic runes (controls, format characters, separators) escaped.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u.test(ch) || (cp >= 0x80 && /\p{Zs}/u.test(ch) && cp !== 0x20)) {
    return cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  }
  return ch;
}

/** net.JoinHostPort: IPv6 literals in brackets. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The syscall error texts Go prints for the errno values a probe meets. */
const errnoTexts: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  ETIMEDOUT: 'connection timed out',
  EADDRNOTAVAIL: 'cannot assign requested address',
  EPIPE: 'broken pipe',
  EACCES: 'permission denied',
};

export function errnoText(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code ? errnoTexts[code] : undefined;
}

/** A failed connect as Go's net.OpError: "dial tcp 10.1.2.3:80: connect: connection refused". */
export function dialErrorText(addr: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return `dial tcp: lookup ${addr.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')}: no such host`;
  const text = errnoText(err);
  return text ? `dial tcp ${addr}: connect: ${text}` : `dial tcp ${addr}: ${e?.message ?? String(err)}`;
}

/** Go's Duration text of whole seconds ("1s", "1m0s"), as timeouts are quoted. */
export function goSeconds(seconds: number): string {
  return seconds === 0 ? '0s' : goDuration(seconds * 1000);
}
