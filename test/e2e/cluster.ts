// A real single-node cluster for end-to-end tests: `kite up` (API server, controllers, scheduler,
// registry, containerd and the kubelet) in its own data directory, torn down with `kite reset`.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import type { Pod } from '../../src/api/types.js';
import { Client } from '../../src/client/client.js';
import { tmpdir } from 'node:os';
import { kiteBin, spawnKite, tempDir } from './harness.js';

export interface KiteCluster {
  url: string;
  dataDir: string;
  kubeconfig: string;
  nodeName: string;
  /** The local registry (host:port) the node pulls from; another agent can use it too. */
  registry: string;
  proc: ChildProcess;
  /** Output so far (stderr), for failure messages. */
  log(): string;
  /** SIGTERM and wait for exit: containers keep running, as with a kubelet. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface ClusterOptions {
  dataDir?: string;
  extraArgs?: string[];
  timeoutMs?: number;
}

/** Where built images are cached across test clusters, so each cluster only pushes them. */
export const imageCacheDir = join(tmpdir(), 'kite-test-image-cache');

/** Runs `kite up` and resolves once its node has joined. */
export async function startCluster(opts: ClusterOptions = {}): Promise<KiteCluster> {
  const dataDir = opts.dataDir ?? tempDir('cluster');
  const args = ['up', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--kubelet-port', '0', '--image-cache', imageCacheDir, ...(opts.extraArgs ?? [])];
  const kite = await spawnKite(args, {
    what: 'kite up',
    timeoutMs: opts.timeoutMs ?? 180_000,
    ready: (out) => {
      const url = /listening on (https:\/\/\S+)/.exec(out)?.[1];
      const kubeconfig = /kubeconfig: (\S+)/.exec(out)?.[1];
      const nodeName = /node (\S+) joined/.exec(out)?.[1];
      const registry = /registry: (\S+)/.exec(out)?.[1];
      return url && kubeconfig && nodeName && registry ? { url, kubeconfig, nodeName, registry } : undefined;
    },
  });
  return {
    ...kite.ready,
    dataDir,
    proc: kite.proc,
    log: kite.stderr,
    stop: () => kite.signal('SIGTERM'),
    kill: () => kite.signal('SIGKILL'),
  };
}

export interface KiteAgent {
  dataDir: string;
  proc: ChildProcess;
  stop(): Promise<void>;
  /** SIGKILL and wait for exit: containerd and the pods keep running. */
  kill(): Promise<void>;
}

export interface AgentOptions {
  nodeName: string;
  /** Its own pod bridge, subnet and cgroup root, so it runs beside the cluster's own node. */
  bridge: string;
  podCIDR: string;
  cgroupRoot: string;
  /** An earlier agent's data dir, to restart it. */
  dataDir?: string;
  /** More `kite agent` flags (e.g. --config). */
  extraArgs?: string[];
}

/** `kite agent` joining `cluster` with the server's join token, pulling from the cluster's registry. */
export async function startAgent(cluster: KiteCluster, opts: AgentOptions): Promise<KiteAgent> {
  const dataDir = opts.dataDir ?? tempDir('agent');
  const token = readFileSync(join(cluster.dataDir, 'join-token'), 'utf8').trim();
  const args = [
    'agent', '--server', cluster.url, '--token', token, '--data-dir', dataDir, '--node-name', opts.nodeName, '--kubelet-port', '0',
    '--registry', cluster.registry, '--bridge', opts.bridge, '--pod-cidr', opts.podCIDR, '--cgroup-root', opts.cgroupRoot,
    ...(opts.extraArgs ?? []),
  ];
  const kite = await spawnKite(args, { what: `kite agent ${opts.nodeName}`, timeoutMs: 120_000, ready: (out) => (/node \S+ joined/.test(out) ? true : undefined) });
  return { dataDir, proc: kite.proc, stop: () => kite.signal('SIGTERM'), kill: () => kite.signal('SIGKILL') };
}

/** `kite reset`: every pod, sandbox, cgroup, bridge and file the cluster made is removed. */
/** The end of an e2e file's cluster: stop `kite up`, then `kite reset` (pods, containerd, bridge, data dir). */
export async function stopAndReset(cluster: KiteCluster | undefined): Promise<void> {
  if (!cluster) return;
  await cluster.stop();
  resetCluster(cluster.dataDir);
}

export function resetCluster(dataDir: string): void {
  const r = spawnSync(process.execPath, [kiteBin, 'reset', '--data-dir', dataDir], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`kite reset failed (${r.status}):\n${r.stderr}${r.stdout}`);
}

/** Root is needed to run containers; without it the kubelet tests cannot run here. */
export const canRunContainers = process.getuid?.() === 0;

/** A real watch on the default namespace's pods (as `kubectl get -w` sees them), until stop(). */
export function watchPods(cluster: Pick<KiteCluster, 'kubeconfig'>, onEvent: (type: string, pod: Pod) => void, fieldSelector?: string): { stop(): void } {
  const abort = new AbortController();
  void (async () => {
    const client = await Client.fromKubeconfig(cluster.kubeconfig);
    try {
      for await (const ev of client.resource('pods').namespace('default').watch(fieldSelector ? { fieldSelector } : {}, abort.signal)) {
        onEvent(ev.type, ev.object as Pod);
      }
    } catch {
      // Aborted when the test ends.
    } finally {
      client.close();
    }
  })();
  return { stop: () => abort.abort() };
}

/**
 * A process of a pod running `sleep 3600` whose network namespace holds podIP: the host's own tools
 * (dig, curl) run in the pod's network with `nsenter -t <pid> -n`.
 */
export function podNetworkPid(podIP: string): string | undefined {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .find((d) => {
      try {
        if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').startsWith('sleep\u00003600')) return false;
      } catch {
        return false;
      }
      return spawnSync('nsenter', ['-t', d, '-n', 'ip', '-4', '-o', 'addr'], { encoding: 'utf8' }).stdout.includes(` ${podIP}/`);
    });
}
