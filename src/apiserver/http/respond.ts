// Writing responses: JSON or YAML bodies, metav1.Status errors, and warning headers. A JSON body
// ends in a newline, as Go's json.Encoder writes it upstream.
import type { ServerResponse } from 'node:http';
import YAML from 'yaml';
import { StatusError, internalError, isStatusError } from '../../api/errors.js';

export function writeObject(res: ServerResponse, code: number, body: unknown, yaml = false, warnings: string[] = []): void {
  if (res.headersSent) return;
  if (yaml) writeBody(res, code, YAML.stringify(body), 'application/yaml', warnings);
  else writeBody(res, code, `${JSON.stringify(body)}\n`, 'application/json', warnings);
}

/** An object already serialized as JSON (shared with watch events, so without the newline). */
export function writeJson(res: ServerResponse, code: number, json: string, warnings: string[] = []): void {
  if (res.headersSent) return;
  writeBody(res, code, `${json}\n`, 'application/json', warnings);
}

function writeBody(res: ServerResponse, code: number, text: string, contentType: string, warnings: string[]): void {
  const headers: Record<string, string | string[]> = {
    'Content-Type': contentType,
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-cache, private',
  };
  // Warnings the request's resource set up front (addResponseWarning) come first, as upstream's recorder orders them.
  const warning = [...headerValues(res.getHeader('Warning')), ...warningHeaders(warnings)];
  if (warning.length) headers.Warning = warning;
  res.writeHead(code, headers);
  // With warnings, a Buffer body makes Node write the head on its own, as latin1 (with a string body
  // it would write head and body together as UTF-8, and a warning's bytes would be encoded twice).
  // Without them the head is ASCII, and the string saves a copy of every response.
  res.end(warning.length ? Buffer.from(text, 'utf8') : text);
}

const headerValues = (v: number | string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [String(v)]);

/** A warning every response to the request carries, whatever writes it (objects, errors, watches). */
export function addResponseWarning(res: ServerResponse, text: string): void {
  res.setHeader('Warning', [...headerValues(res.getHeader('Warning')), ...warningHeaders([text])]);
}

export function writeText(res: ServerResponse, code: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  if (res.headersSent) return;
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

// Upstream's warning recorder (k8s.io/apiserver endpoints/filters/warning.go): past this many runes
// in all, every warning is cut to truncateItemRunes.
const truncateAtTotalRunes = 4 * 1024;
const truncateItemRunes = 256;

/**
 * The Warning header values for these texts, as upstream's recorder and NewWarningHeader make them:
 * code 299, agent "-", the text quoted with only `"` and `\` escaped; duplicates once; a text that
 * holds a control character is dropped. Go writes the UTF-8 bytes as they are; Node writes each
 * header character as one byte (latin1), so the text goes as its UTF-8 bytes spelled in latin1:
 * the same bytes on the wire, and never a character Node refuses.
 */
export function warningHeaders(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  const ordered: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  for (const text of texts) {
    if (text === '' || seen.has(text)) continue;
    if (truncating && written >= truncateAtTotalRunes) break;
    seen.add(text);
    ordered.push(text);
    const item = truncating ? truncateRunes(text) : text;
    const header = warningHeader(item);
    if (header === undefined) continue;
    const runes = runeCount(item);
    if (written + runes <= truncateAtTotalRunes || truncating) {
      written += runes;
      out.push(header);
      continue;
    }
    truncating = true;
    written = 0;
    out = [];
    for (const w of ordered) {
      const cut = truncateRunes(w);
      const h = warningHeader(cut);
      if (h === undefined) continue;
      written += runeCount(cut);
      out.push(h);
    }
  }
  return out;
}

/** One RFC 7234 warning value, or undefined for a text upstream refuses to send. */
function warningHeader(text: string): string | undefined {
  // Unicode's Cc category (C0, DEL, C1) is what Go's unicode.IsControl reports.
  if (/\p{Cc}/u.test(text)) return undefined;
  // A lone surrogate (JSON's "\ud800") is U+FFFD after Go's decoder, so it is here too.
  const quoted = `"${text.replace(/\p{Cs}/gu, '\ufffd').replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return `299 - ${Buffer.from(quoted, 'utf8').toString('latin1')}`;
}

const runeCount = (s: string) => [...s].length;
const truncateRunes = (s: string) => (runeCount(s) > truncateItemRunes ? [...s].slice(0, truncateItemRunes).join('') : s);

/** Turns anything thrown into a Status; unexpected errors become 500s (and are reported). */
export function toStatusError(err: unknown, onUnexpected: (err: unknown) => void): StatusError {
  if (isStatusError(err)) return err;
  onUnexpected(err);
  return internalError(err instanceof Error ? err.message : String(err));
}

export function writeError(res: ServerResponse, err: StatusError): void {
  const headers: Record<string, string> = {};
  if (err.details?.retryAfterSeconds) headers['Retry-After'] = String(err.details.retryAfterSeconds);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  writeObject(res, err.code, err.toStatus());
}
