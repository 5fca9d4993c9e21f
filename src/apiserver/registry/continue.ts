// Continue tokens as upstream encodes them: base64 of {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"},
// where start is the key relative to the resource's prefix and the NUL makes it exclusive.
// A token is client input: decoding follows k8s.io/apiserver storage.DecodeContinue (unpadded
// base64url, Go's JSON decoding into {v string, rv int64, start string}) and every refusal is a 400.
import { badRequest } from '../../api/errors.js';

export function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

export interface ContinueToken {
  /** The revision to continue at; undefined when the token asks for the latest (upstream's rv < 0). */
  rv: number | undefined;
  /** The last key served, relative to the resource's prefix. */
  start: string;
}

const notValid = 'continue key is not valid';

/** Decodes a client's continue token; anything upstream refuses is its 400 "invalid continue token: …". */
export function decodeContinue(token: string): ContinueToken {
  try {
    return decodeToken(token);
  } catch (err) {
    if (err instanceof InvalidToken) throw badRequest(`invalid continue token: ${err.message}`);
    throw err;
  }
}

class InvalidToken extends Error {}

function decodeToken(token: string): ContinueToken {
  const bad = base64UrlError(token);
  if (bad !== undefined) throw new InvalidToken(`${notValid}: illegal base64 data at input byte ${bad}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token.replace(/[\r\n]/g, ''), 'base64url').toString('utf8'));
  } catch (err) {
    throw new InvalidToken(`${notValid}: ${(err as Error).message}`);
  }
  const { v, rv, start } = tokenFields(parsed);
  if (v !== 'meta.k8s.io/v1') throw new InvalidToken(`${notValid}: server does not recognize this encoded version ${v}`);
  if (rv === 0) throw new InvalidToken(`${notValid}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`);
  if (start === '') throw new InvalidToken(`${notValid}: encoded start key empty (version meta.k8s.io/v1)`);
  // Upstream's defence against traversal: the key must already be in path.Clean's form.
  const key = start.startsWith('/') ? start : `/${start}`;
  if (cleanPath(key) !== key) throw new InvalidToken(`${notValid}: ${start}`);
  // The trailing NUL only marks "after this key"; the store's startAfter already excludes it.
  const relative = key.slice(1);
  return { rv: rv > 0 ? rv : undefined, start: relative.endsWith('\u0000') ? relative.slice(0, -1) : relative };
}

/** The index of the first byte Go's base64.RawURLEncoding refuses (it skips CR and LF), or undefined. */
function base64UrlError(token: string): number | undefined {
  let count = 0;
  let last = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token[i]!;
    if (c === '\r' || c === '\n') continue;
    if (!/[A-Za-z0-9_-]/.test(c)) return i;
    count++;
    last = i;
  }
  // A lone character in the last quantum carries no whole byte.
  return count % 4 === 1 ? last : undefined;
}

/** What Go's json.Unmarshal leaves in the token struct: field names match case-insensitively, null leaves the zero value. */
function tokenFields(parsed: unknown): { v: string; rv: number; start: string } {
  const out = { v: '', rv: 0, start: '' };
  if (parsed === null) return out;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidToken(`${notValid}: json: cannot unmarshal ${goJsonType(parsed)} into Go value of type storage.continueToken`);
  }
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    const field = name.toLowerCase();
    if ((field !== 'v' && field !== 'rv' && field !== 'start') || value === null) continue;
    const mismatch = (type: string, what = goJsonType(value)) =>
      new InvalidToken(`${notValid}: json: cannot unmarshal ${what} into Go struct field continueToken.${field} of type ${type}`);
    if (field === 'rv') {
      if (typeof value !== 'number') throw mismatch('int64');
      if (!Number.isInteger(value) || Math.abs(value) > 2 ** 63) throw mismatch('int64', `number ${value}`);
      out.rv = value;
    } else {
      if (typeof value !== 'string') throw mismatch('string');
      out[field] = value;
    }
  }
  return out;
}

function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/** Go's path.Clean for a rooted path: no empty, `.` or `..` elements, no trailing slash. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}
