// Crash-safe file writes: readers see the old content or the new, never a torn file.
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes to a temporary file beside path, syncs it, then renames it over path (creating the directory if needed). */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fh = await open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
    await fh.close();
    // open() applies the umask; secrets must end with exactly the requested mode.
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}
