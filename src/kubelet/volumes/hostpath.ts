// hostPath volumes: the type check upstream's hostpath plugin runs before use, creating the path for
// the *OrCreate types.
import { mkdir, open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';

async function statOf(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch {
    return undefined;
  }
}

/** checkType: resolves when the path fits the type, else rejects with upstream's message. */
export async function checkHostPathType(path: string, type: string | undefined): Promise<void> {
  if (!type) return;
  const st = await statOf(path);
  const fail = (what: string) => new Error(`hostPath type check failed: ${path} is not ${what}`);
  switch (type) {
    case 'DirectoryOrCreate':
    case 'Directory':
      if (!st && type === 'DirectoryOrCreate') {
        await mkdir(path, { recursive: true, mode: 0o755 });
        return;
      }
      if (!st?.isDirectory()) throw fail('a directory');
      return;
    case 'FileOrCreate':
    case 'File':
      if (!st && type === 'FileOrCreate') {
        await (await open(path, 'a', 0o644)).close();
        return;
      }
      if (!st?.isFile()) throw fail('a file');
      return;
    case 'Socket':
      if (!st?.isSocket()) throw fail('a socket file');
      return;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) throw fail('a character device');
      return;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) throw fail('a block device');
      return;
    default:
      throw new Error(`${type} is an invalid volume type`);
  }
}
