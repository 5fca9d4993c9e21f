// What the node status reports about the machine, read from the host as cAdvisor's MachineInfo and
// the kubelet's version info do: cores, memory, the root filesystem's size, and identities.
import { readFile, statfs } from 'node:fs/promises';
import { availableParallelism, release } from 'node:os';

export interface MachineInfo {
  numCores: number;
  /** Bytes (MemTotal of /proc/meminfo). */
  memoryCapacity: number;
  /** Bytes of the filesystem holding the kubelet's root directory. */
  filesystemCapacity: number;
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  operatingSystem: string;
  architecture: string;
}

/** Go's GOARCH for Node's process.arch. */
export function goArch(arch: string = process.arch): string {
  return ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[arch] ?? arch;
}

/** MemTotal of a /proc/meminfo text, in bytes. */
export function memTotalBytes(meminfo: string): number {
  const m = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo);
  if (!m) throw new Error('MemTotal not found in /proc/meminfo');
  return Number(m[1]) * 1024;
}

/** PRETTY_NAME of an os-release text; "Linux" when missing, as the kubelet falls back. */
export function prettyName(osRelease: string): string {
  const m = /^PRETTY_NAME=(.*)$/m.exec(osRelease);
  if (!m) return 'Linux';
  return m[1]!.trim().replace(/^(["'])(.*)\1$/, '$2');
}

const readTrimmed = (path: string) => readFile(path, 'utf8').then((s) => s.trim(), () => '');

export async function readMachineInfo(rootDir: string): Promise<MachineInfo> {
  const fs = await statfs(rootDir);
  return {
    numCores: availableParallelism(),
    memoryCapacity: memTotalBytes(await readFile('/proc/meminfo', 'utf8')),
    filesystemCapacity: Number(fs.blocks) * Number(fs.bsize),
    machineID: await readTrimmed('/etc/machine-id'),
    // Readable by root only; upstream leaves it empty otherwise too.
    systemUUID: (await readTrimmed('/sys/class/dmi/id/product_uuid')).toLowerCase(),
    bootID: await readTrimmed('/proc/sys/kernel/random/boot_id'),
    kernelVersion: release(),
    osImage: prettyName(await readFile('/etc/os-release', 'utf8').catch(() => '')),
    operatingSystem: process.platform,
    architecture: goArch(),
  };
}
