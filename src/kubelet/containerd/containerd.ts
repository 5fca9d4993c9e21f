// containerd as kite starts it: config written under a data dir, launched in its own session so it
// survives a kill -9 of the kite process (running pods must outlive a kubelet crash), adopted by
// the next kite when its pid file names a live containerd whose socket answers.
import { connect } from 'node:net';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from '../../util/clock.js';
import { writeFileAtomic } from '../../util/file.js';
import { processMatches, runningDaemonPid, spawnDaemon, stopDaemon, waitReady, type DaemonSpec } from '../../util/daemon.js';
import { containerdConfigToml, containerdPaths, hostsToml, mirroredRegistryHosts, type ContainerdConfigOptions, type ContainerdPaths } from './config.js';

export interface ContainerdOptions extends ContainerdConfigOptions {
  binary?: string;
  clock?: Clock;
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL (containerd takes ~1 s here). */
  stopGraceMs?: number;
}

/** True when a unix socket accepts a connection. */
export function socketAccepts(path: string, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

export class Containerd {
  readonly paths: ContainerdPaths;
  private readonly clock: Clock;
  private readonly spec: DaemonSpec;
  private pid: number | undefined;

  constructor(private readonly opts: ContainerdOptions) {
    this.paths = containerdPaths(opts.dataDir);
    this.clock = opts.clock ?? realClock;
    this.spec = {
      command: opts.binary ?? '/usr/bin/containerd',
      args: ['--config', this.paths.configFile],
      pidFile: this.paths.pidFile,
      logFile: this.paths.logFile,
    };
  }

  /** The CRI endpoint: containerd's gRPC socket. */
  get socket(): string {
    return this.paths.socket;
  }

  /** The pid of the containerd this object started or adopted. */
  get processId(): number | undefined {
    return this.pid;
  }

  /** Writes the config and hosts.toml files (also when adopting, so the next start reads current ones). */
  async writeConfig(): Promise<void> {
    const p = this.paths;
    if (p.socket.length > 100) throw new Error(`containerd socket path too long for a unix socket (${p.socket.length} > 100): ${p.socket}`);
    await mkdir(p.cniConfDir, { recursive: true });
    await writeFileAtomic(p.configFile, containerdConfigToml(this.opts));
    for (const host of mirroredRegistryHosts) {
      await writeFileAtomic(join(p.registryConfigDir, host, 'hosts.toml'), hostsToml(this.opts.registryHost));
    }
  }

  /** Adopts a running containerd for this data dir, else starts one; resolves when its socket accepts. */
  async start(): Promise<'adopted' | 'started'> {
    await this.writeConfig();
    const running = await runningDaemonPid(this.spec);
    if (running !== undefined && (await socketAccepts(this.paths.socket))) {
      this.pid = running;
      return 'adopted';
    }
    // A containerd that runs but does not answer is wedged: replace it.
    if (running !== undefined) await stopDaemon(this.spec, running, this.clock, this.opts.stopGraceMs);
    await rm(this.paths.socket, { force: true });
    const pid = await spawnDaemon(this.spec);
    this.pid = pid;
    await waitReady('containerd', () => socketAccepts(this.paths.socket), () => processMatches(pid, [this.spec.command, ...this.spec.args]), this.clock, this.opts.readyTimeoutMs ?? 20_000, this.paths.logFile);
    return 'started';
  }

  /** True when the process is alive and its socket accepts connections. */
  async healthy(): Promise<boolean> {
    const pid = this.pid ?? (await runningDaemonPid(this.spec));
    if (pid === undefined || !(await processMatches(pid, [this.spec.command, ...this.spec.args]))) return false;
    return socketAccepts(this.paths.socket);
  }

  /** Stops the containerd this object runs (SIGTERM, then SIGKILL after the grace). Containers keep running in their shims. */
  async stop(): Promise<void> {
    const pid = this.pid ?? (await runningDaemonPid(this.spec));
    this.pid = undefined;
    if (pid !== undefined) await stopDaemon(this.spec, pid, this.clock, this.opts.stopGraceMs);
  }
}
