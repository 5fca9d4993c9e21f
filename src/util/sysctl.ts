// Host-wide kernel switches (/proc/sys) that kite turns on, recorded in a node's data dir first so
// that `kite reset` can put back what the machine had.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './file.js';

/**
 * Records a sysctl's value in dataDir (as recordName) before kite changes it. Only the first record
 * counts: a restarted kite must not record its own change.
 */
export async function recordSysctl(dataDir: string, procFile: string, recordName: string): Promise<void> {
  const record = join(dataDir, recordName);
  try {
    await readFile(record, 'utf8');
    return;
  } catch {
    // not recorded yet
  }
  await writeFileAtomic(record, (await readFile(procFile, 'utf8')).trim() + '\n');
}

/** Writes the recorded value back and forgets it; returns the value restored, if any. */
export async function restoreSysctl(dataDir: string, procFile: string, recordName: string): Promise<string | undefined> {
  const record = join(dataDir, recordName);
  let value: string;
  try {
    value = (await readFile(record, 'utf8')).trim();
  } catch {
    return undefined;
  }
  if (value !== '0' && value !== '1') throw new Error(`unexpected ${recordName} record ${JSON.stringify(value)} in ${record}`);
  if ((await readFile(procFile, 'utf8')).trim() !== value) await writeFile(procFile, `${value}\n`);
  await rm(record, { force: true });
  return value;
}

