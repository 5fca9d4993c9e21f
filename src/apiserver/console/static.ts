// The console's files, served from its build (dist/console): only regular files under that folder,
// named by a path of plain segments, so no request reaches anything else on disk.
import { lstat, readFile } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

export interface StaticFile {
  body: Buffer;
  contentType: string;
  cacheControl: string;
}

const segment = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * The file at rel (the request path after /ui/, still percent-encoded), or undefined. The build
 * names its assets by content hash, so they may be cached for good; index.html is revalidated.
 */
export async function staticFile(root: string, rel: string): Promise<StaticFile | undefined> {
  const name = rel === '' ? 'index.html' : rel;
  // No decoding, no dot segments, no hidden files: a name is what the build wrote, nothing else.
  const parts = name.split('/');
  if (!parts.every((p) => segment.test(p))) return undefined;
  const base = resolve(root);
  const file = join(base, ...parts);
  if (!file.startsWith(base + sep)) return undefined;
  try {
    // lstat: a symbolic link planted in the build is not followed.
    if (!(await lstat(file)).isFile()) return undefined;
    const body = await readFile(file);
    const hashed = parts[0] === 'assets';
    return {
      body,
      contentType: contentTypes[extname(file)] ?? 'application/octet-stream',
      cacheControl: hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
    };
  } catch {
    return undefined;
  }
}
