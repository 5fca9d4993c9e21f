// A daemon kite starts but does not own the lifetime of: launched in its own session (setsid), so
// it outlives a kill -9 of the kite process (running pods need containerd while the kubelet
// restarts), with a pid file so the next kite adopts it instead of starting a second one.
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from './clock.js';
import { writeFileAtomic } from './file.js';

export interface DaemonSpec {
  command: string;
  args: string[];
  pidFile: string;
  /** stdout and stderr are appended here. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
}

/** True when pid is a live (not zombie) process whose command line has every one of `marks`. */
export async function processMatches(pid: number, marks: string[]): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The state follows the parenthesised command name, which may itself hold spaces or ')'.
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return false;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return marks.every((m) => argv.includes(m));
  } catch {
    return false;
  }
}

/** The pid recorded in the spec's pid file if that process is still this daemon (not a reused pid). */
export async function runningDaemonPid(spec: DaemonSpec): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number((await readFile(spec.pidFile, 'utf8')).trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return (await processMatches(pid, [spec.command, ...spec.args])) ? pid : undefined;
}

/** Launches the daemon detached (new session, no pipes to us) and records its pid. */
export async function spawnDaemon(spec: DaemonSpec): Promise<number> {
  await mkdir(dirname(spec.logFile), { recursive: true });
  const log = await open(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, spec.args, { detached: true, stdio: ['ignore', log.fd, log.fd], env: spec.env ?? process.env });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid!));
    });
    child.unref();
    await writeFileAtomic(spec.pidFile, `${pid}\n`);
    return pid;
  } finally {
    await log.close();
  }
}

/** Sends SIGTERM, waits up to graceMs for the process to go, then SIGKILLs it. Removes the pid file. */
export async function stopDaemon(spec: DaemonSpec, pid: number, clock: Clock, graceMs = 10_000): Promise<void> {
  const marks = [spec.command, ...spec.args];
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  };
  signal('SIGTERM');
  const deadline = clock.now() + graceMs;
  while (await processMatches(pid, marks)) {
    if (clock.now() >= deadline) {
      signal('SIGKILL');
      break;
    }
    await clock.sleep(50);
  }
  // After SIGKILL the process is gone once the kernel reaps it; wait briefly so callers can rely on it.
  for (let i = 0; i < 100 && (await processMatches(pid, marks)); i++) await clock.sleep(20);
  await rm(spec.pidFile, { force: true });
}

/** Polls `ready` every 50 ms until it is true, the process dies, or timeoutMs passes. */
export async function waitReady(what: string, ready: () => Promise<boolean>, alive: () => Promise<boolean>, clock: Clock, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (!(await alive())) throw new Error(`${what} exited during start-up; see ${logFile}:\n${await tail(logFile)}`);
    if (clock.now() >= deadline) throw new Error(`${what} not ready after ${timeoutMs} ms; see ${logFile}`);
    await clock.sleep(50);
  }
}

async function tail(file: string, lines = 10): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
