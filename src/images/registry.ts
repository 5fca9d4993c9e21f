// The node's local image registry: Debian's docker-registry (distribution 2.8) serving filesystem
// storage on loopback. Pods pull busybox, nginx and pause from it through containerd's hosts.toml,
// so image pulls are real registry pulls without the internet. Like containerd, it runs detached
// with a pid file and is adopted by the next start.
import { createServer } from 'node:net';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock, type Clock } from '../util/clock.js';
import { writeFileAtomic } from '../util/file.js';
import { processMatches, runningDaemonPid, spawnDaemon, stopDaemon, waitReady, type DaemonSpec } from '../util/daemon.js';

export interface RegistryConfig {
  /** Storage, config, pid file and log live here. */
  dataDir: string;
  /** 0 picks a free port (or the port of the registry already running for this data dir). */
  port?: number;
  binary?: string;
  clock?: Clock;
  readyTimeoutMs?: number;
}

/** Asks the kernel for a free loopback port. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** distribution's configuration (YAML is a superset of JSON, so JSON it is). */
export function registryConfigFile(dataDir: string, port: number): string {
  return JSON.stringify(
    {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: join(dataDir, 'storage') }, delete: { enabled: true } },
      http: { addr: `127.0.0.1:${port}` },
      health: { storagedriver: { enabled: false } },
    },
    null,
    2,
  );
}

async function configuredPort(configFile: string): Promise<number | undefined> {
  try {
    const addr = (JSON.parse(await readFile(configFile, 'utf8')) as { http?: { addr?: string } }).http?.addr ?? '';
    const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

export class Registry {
  private readonly binary: string;
  private readonly clock: Clock;
  private pid: number | undefined;
  private _port: number;

  constructor(private readonly config: RegistryConfig) {
    this.binary = config.binary ?? '/usr/bin/docker-registry';
    this.clock = config.clock ?? realClock;
    this._port = config.port ?? 0;
  }

  /** host:port, what image references and hosts.toml use. */
  get host(): string {
    return `127.0.0.1:${this._port}`;
  }

  get port(): number {
    return this._port;
  }

  get url(): string {
    return `http://${this.host}`;
  }

  private spec(): DaemonSpec {
    const dir = this.config.dataDir;
    return { command: this.binary, args: ['serve', join(dir, 'config.yml')], pidFile: join(dir, 'registry.pid'), logFile: join(dir, 'registry.log') };
  }

  /**
   * Adopts the registry already serving this data dir (on the requested port, when one is given),
   * else starts one; resolves once /v2/ answers.
   */
  async start(): Promise<void> {
    const spec = this.spec();
    await mkdir(join(this.config.dataDir, 'storage'), { recursive: true });
    const running = await runningDaemonPid(spec);
    if (running !== undefined) {
      const port = await configuredPort(spec.args[1]!);
      const wanted = this.config.port ?? 0;
      if (port !== undefined && (wanted === 0 || wanted === port)) {
        this._port = port;
        this.pid = running;
        if (await this.ping()) return;
      }
      // A registry on another port, or one that does not answer: replace it.
      await stopDaemon(spec, running, this.clock);
      this._port = wanted;
    }
    if (this._port === 0) this._port = await freeLoopbackPort();
    await writeFileAtomic(spec.args[1]!, registryConfigFile(this.config.dataDir, this._port));
    const pid = await spawnDaemon(spec);
    this.pid = pid;
    await waitReady('docker-registry', () => this.ping(), () => processMatches(pid, [spec.command, ...spec.args]), this.clock, this.config.readyTimeoutMs ?? 15_000, spec.logFile);
  }

  /** True when the registry answers its API version check. */
  async ping(): Promise<boolean> {
    try {
      const res = await fetch(`${this.url}/v2/`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** The digest the registry serves for repository:tag, or undefined when it has no such tag. */
  async manifestDigest(repository: string, tag: string): Promise<string | undefined> {
    const res = await fetch(`${this.url}/v2/${repository}/manifests/${tag}`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' },
      signal: AbortSignal.timeout(5_000),
    });
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`registry HEAD ${repository}:${tag}: HTTP ${res.status}`);
    return res.headers.get('docker-content-digest') ?? undefined;
  }

  /** Stops the registry of this data dir, whether this object started it or not. */
  async stop(): Promise<void> {
    const pid = this.pid ?? (await runningDaemonPid(this.spec()));
    this.pid = undefined;
    if (pid !== undefined) await stopDaemon(this.spec(), pid, this.clock);
  }
}
