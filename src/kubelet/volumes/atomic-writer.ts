// Upstream's AtomicWriter (pkg/volume/util/atomic_writer.go): a volume's files live in a
// timestamped folder ..2026_01_01_00_00_00.XXXX, `..data` is a symlink to it, and every top-level
// name users see is a symlink through `..data`. An update writes a new folder and swaps `..data`
// with one rename, so a reader inside a container sees the old set of files or the new, never a mix.
import { chmod, chown, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';

export interface FileProjection {
  data: Uint8Array;
  mode: number;
}

/** Relative path → content; paths may contain folders. */
export type Payload = Map<string, FileProjection>;

const DATA_DIR = '..data';
const DATA_DIR_TMP = '..data_tmp';

/** validatePath: relative, no '..' element, not starting with '..', at most 4096 bytes, elements at most 255. */
export function validatePayloadPath(p: string): string | undefined {
  if (p.length === 0) return undefined;
  if (p.length > 4096) return `invalid path: must be less than or equal to 4096 characters`;
  if (posix.isAbsolute(p)) return `invalid path: must be relative path: ${p}`;
  const parts = p.split('/');
  if (parts.includes('..')) return `invalid path: must not contain '..': ${p}`;
  if (p.startsWith('..')) return `invalid path: must not start with '..': ${p}`;
  if (parts.some((s) => s.length > 255)) return `invalid path: must not contain elements over 255 characters: ${p}`;
  return undefined;
}

function tsDirPrefix(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `..${now.getUTCFullYear()}_${pad(now.getUTCMonth() + 1)}_${pad(now.getUTCDate())}_${pad(now.getUTCHours())}_${pad(now.getUTCMinutes())}_${pad(now.getUTCSeconds())}.`;
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Whether the folder holds exactly the payload (same files, bytes and modes). */
async function sameContent(dir: string, payload: Payload): Promise<boolean> {
  for (const [p, f] of payload) {
    try {
      const [data, st] = await Promise.all([readFile(join(dir, p)), stat(join(dir, p))]);
      if ((st.mode & 0o7777) !== f.mode || Buffer.compare(data, Buffer.from(f.data)) !== 0) return false;
    } catch {
      return false;
    }
  }
  const count = async (d: string): Promise<number> => {
    let n = 0;
    for (const e of await readdir(d, { withFileTypes: true })) n += e.isDirectory() ? await count(join(d, e.name)) : 1;
    return n;
  };
  return (await count(dir)) === payload.size;
}

export interface WriteOptions {
  /** fsGroup: files are group-owned by it and group-readable. */
  fsGroup?: number;
  now?: Date;
}

/** Writes the payload into targetDir atomically; returns whether anything changed. */
export async function writeAtomic(targetDir: string, payload: Payload, opts: WriteOptions = {}): Promise<boolean> {
  for (const p of payload.keys()) {
    const err = validatePayloadPath(p);
    if (err) throw new Error(err);
  }
  await mkdir(targetDir, { recursive: true });
  const dataLink = join(targetDir, DATA_DIR);
  let oldTsDir: string | undefined;
  try {
    oldTsDir = await readlink(dataLink);
  } catch {
    oldTsDir = undefined;
  }
  const visible = new Set([...payload.keys()].map((p) => p.split('/')[0]!));
  const stale = (await readdir(targetDir)).filter((n) => !n.startsWith('..') && !visible.has(n));

  const unchanged = oldTsDir !== undefined && (await sameContent(join(targetDir, oldTsDir), payload));
  if (!unchanged) {
    const tsDir = await mkdtemp(join(targetDir, tsDirPrefix(opts.now ?? new Date())));
    await chmod(tsDir, 0o755);
    for (const [p, f] of payload) {
      const file = join(tsDir, p);
      await mkdir(dirname(file), { recursive: true, mode: 0o755 });
      let mode = f.mode;
      if (opts.fsGroup !== undefined) mode |= 0o440;
      await writeFile(file, f.data, { mode });
      // writeFile's mode is filtered by the umask; the projection's mode is exact.
      await chmod(file, mode);
      if (opts.fsGroup !== undefined) await chown(file, -1, opts.fsGroup);
    }
    const tmpLink = join(targetDir, DATA_DIR_TMP);
    await rm(tmpLink, { force: true });
    await symlink(basename(tsDir), tmpLink);
    await rename(tmpLink, dataLink);
  }
  for (const name of visible) {
    const link = join(targetDir, name);
    if (!(await exists(link))) await symlink(join(DATA_DIR, name), link);
  }
  for (const name of stale) await rm(join(targetDir, name), { recursive: true, force: true });
  if (!unchanged && oldTsDir) await rm(join(targetDir, oldTsDir), { recursive: true, force: true });
  return !unchanged || stale.length > 0;
}
