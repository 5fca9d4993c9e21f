// Continue tokens as upstream encodes them: base64 of {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"},
// where start is the key relative to the resource's prefix and the NUL makes it exclusive.
import { badRequest } from '../../api/errors.js';

export function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

export function decodeContinue(token: string): { rv: number; start: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or malformed JSON');
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (t.v !== 'meta.k8s.io/v1') throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.rv !== 'number' || t.rv <= 0) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.start !== 'string' || t.start === '' || t.start.includes('..')) throw badRequest('continue key is not valid: encoded start key is not valid');
  // The trailing NUL only marks "after this key"; the store's startAfter already excludes it.
  return { rv: t.rv, start: t.start.endsWith('\u0000') ? t.start.slice(0, -1) : t.start };
}
