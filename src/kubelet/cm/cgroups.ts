// Pod-level cgroups, laid out as upstream's cgroupfs driver names them: Guaranteed pods directly
// under the root (/kubepods/pod<uid>), the other classes under a folder per class
// (/kubepods/burstable/pod<uid>, /kubepods/besteffort/pod<uid>). The sandbox's cgroup_parent is
// this path; runc creates it in every hierarchy but removes only the container's own cgroup below
// it, so the kubelet removes pod folders itself.
import { readFile, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { QOSClass } from '../../api/pod/qos.js';

export const defaultCgroupRoot = '/kubepods';

/** The cgroupfs path of the QoS class's folder ('/kubepods' for Guaranteed). */
export function qosCgroupParent(qosClass: QOSClass, root = defaultCgroupRoot): string {
  const base = root.replace(/\/+$/, '') || '';
  if (qosClass === 'Guaranteed') return base || '/';
  return `${base}/${qosClass.toLowerCase()}`;
}

/** The pod's cgroup_parent, e.g. '/kubepods/burstable/pod<uid>'. */
export function podCgroupParent(qosClass: QOSClass, podUID: string, root = defaultCgroupRoot): string {
  if (!podUID || podUID.includes('/')) throw new Error(`invalid pod UID ${JSON.stringify(podUID)}`);
  const parent = qosCgroupParent(qosClass, root);
  return `${parent === '/' ? '' : parent}/pod${podUID}`;
}

/** A mounted cgroup hierarchy: a v1 controller set (or named hierarchy) or the v2 unified mount. */
export interface CgroupMount {
  mountPoint: string;
  version: 1 | 2;
}

/** Every cgroup mount of this mount namespace, from /proc/self/mountinfo (or the given text). */
export async function cgroupMounts(mountinfo?: string): Promise<CgroupMount[]> {
  const text = mountinfo ?? (await readFile('/proc/self/mountinfo', 'utf8'));
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    // "<id> <parent> <maj:min> <root> <mount point> <options> [optional...] - <fstype> <source> <super options>"
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const fields = line.slice(0, sep).split(' ');
    const fsType = line.slice(sep + 3).split(' ')[0];
    const mountPoint = unescapeMountPath(fields[4] ?? '');
    if (fsType === 'cgroup') mounts.push({ mountPoint, version: 1 });
    else if (fsType === 'cgroup2') mounts.push({ mountPoint, version: 2 });
  }
  return mounts;
}

// mountinfo escapes space, tab, newline and backslash as octal.
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/**
 * Removes the cgroup at `path` (cgroupfs style, absolute) and every cgroup below it, in every
 * hierarchy. A cgroup folder goes with rmdir once it has no children and no tasks; one that still
 * holds processes (EBUSY) is left and reported. Missing folders are fine.
 */
export async function removeCgroup(path: string, mounts?: CgroupMount[]): Promise<{ busy: string[] }> {
  const busy: string[] = [];
  for (const m of mounts ?? (await cgroupMounts())) await removeTree(join(m.mountPoint, path), busy);
  return { busy };
}

/** The kubelet's cgroup root must be a folder of its own: removing below '/' would take the host's cgroups. */
export function isOwnCgroupRoot(path: string): boolean {
  return /^\/[^/]/.test(path) && !path.split('/').includes('..');
}

/**
 * Removes every pod cgroup (folders named pod<uid>) under the kubelet's cgroup root in every
 * hierarchy, then the QoS folders and the root itself when they are empty: what `kite reset` needs
 * after runc left the pod-level folders behind.
 */
export async function removePodCgroups(cgroupParentRoot = defaultCgroupRoot, mounts?: CgroupMount[]): Promise<{ busy: string[] }> {
  if (!isOwnCgroupRoot(cgroupParentRoot)) {
    throw new Error(`refusing to remove cgroups under ${JSON.stringify(cgroupParentRoot)}`);
  }
  return removeCgroup(cgroupParentRoot, mounts);
}

async function removeTree(dir: string, busy: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  // Only sub-folders are cgroups; the files are the kernel's interface and go with the folder.
  for (const e of entries) if (e.isDirectory()) await removeTree(join(dir, e.name), busy);
  try {
    await rmdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'EBUSY' || code === 'ENOTEMPTY') busy.push(dir);
    else throw err;
  }
}
