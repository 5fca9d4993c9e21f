// The host mount operations volumes need (tmpfs for memory-backed emptyDirs), behind an interface so
// tests run without root and without touching the host's mount table.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Mounter {
  /** Mounts a tmpfs at target; sizeBytes caps it. */
  mountTmpfs(target: string, sizeBytes?: number): Promise<void>;
  unmount(target: string): Promise<void>;
  /** Mount points at dir or below it, deepest first (the order to unmount them in). */
  mountsUnder(dir: string): Promise<string[]>;
}

/** Mount points listed in a mountinfo text, unescaped (the kernel writes space, tab, newline and backslash as octal). */
export function parseMountPoints(mountinfo: string): string[] {
  const out: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const field = line.split(' ')[4];
    if (field) out.push(field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  }
  return out;
}

/** Mount points equal to dir or inside it, deepest first. */
export function mountsBelow(points: string[], dir: string): string[] {
  const root = dir.replace(/\/+$/, '');
  return [...new Set(points.filter((p) => p === root || p.startsWith(`${root}/`)))].sort((a, b) => b.length - a.length);
}

/** The host's mount(8) and umount(8). */
export const hostMounter: Mounter = {
  async mountTmpfs(target, sizeBytes) {
    const args = ['-t', 'tmpfs'];
    if (sizeBytes !== undefined && sizeBytes > 0) args.push('-o', `size=${sizeBytes}`);
    await run('mount', [...args, 'tmpfs', target]);
  },
  async unmount(target) {
    await run('umount', [target]);
  },
  async mountsUnder(dir) {
    return mountsBelow(parseMountPoints(await readFile('/proc/self/mountinfo', 'utf8')), dir);
  },
};
