// containerd's configuration for a kite node: everything containerd keeps (root, state, sockets,
// CNI config, registry hosts) under one data dir, the CRI settings these machines need (see the
// containerd notes: no CAP_SYS_RESOURCE, hybrid cgroups, no systemd), and every registry host
// resolved to the node's local registry so pulls never leave loopback.
import { join } from 'node:path';

export interface ContainerdConfigOptions {
  dataDir: string;
  /** The local registry, host:port on loopback. */
  registryHost: string;
  /** containerd's sandbox_image, the kubelet's podInfraContainerImage. */
  sandboxImage: string;
  /** Where the CNI plugin binaries are (Debian's containernetworking-plugins). */
  cniBinDir?: string;
  /** containerd log level. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

/** The paths a kite containerd uses, all under its data dir. */
export interface ContainerdPaths {
  configFile: string;
  root: string;
  state: string;
  /** The CRI/containerd gRPC unix socket. */
  socket: string;
  /** runc's state (per instance, so two containerds never share it). */
  runcRoot: string;
  cniConfDir: string;
  /** config_path: one folder per registry host, each with a hosts.toml. */
  registryConfigDir: string;
  pidFile: string;
  logFile: string;
}

export const defaultCniBinDir = '/usr/lib/cni';

/** Registry hosts configured explicitly; `_default` covers every other one. */
export const mirroredRegistryHosts = ['docker.io', 'registry.k8s.io', '_default'];

export function containerdPaths(dataDir: string): ContainerdPaths {
  return {
    configFile: join(dataDir, 'config.toml'),
    root: join(dataDir, 'root'),
    state: join(dataDir, 'state'),
    socket: join(dataDir, 'containerd.sock'),
    runcRoot: join(dataDir, 'state', 'runc'),
    cniConfDir: join(dataDir, 'cni', 'net.d'),
    registryConfigDir: join(dataDir, 'certs.d'),
    pidFile: join(dataDir, 'containerd.pid'),
    logFile: join(dataDir, 'containerd.log'),
  };
}

// A TOML basic string: JSON's escaping is valid TOML for the paths and references used here.
const str = (s: string) => JSON.stringify(s);

/** config.toml (version 2). */
export function containerdConfigToml(opts: ContainerdConfigOptions): string {
  const p = containerdPaths(opts.dataDir);
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `# Written by kite; rewritten on every start.
version = 2
root = ${str(p.root)}
state = ${str(p.state)}
# Snapshotters this machine cannot use only slow the start down.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = ${str(p.socket)}

[ttrpc]
  address = ${str(p.socket + '.ttrpc')}

[debug]
  level = ${str(opts.logLevel ?? 'info')}

[plugins."io.containerd.internal.v1.opt"]
  path = ${str(join(p.root, 'opt'))}

[${cri}]
  sandbox_image = ${str(opts.sandboxImage)}
  # No CAP_SYS_RESOURCE here: the pause container's oom_score_adj of -998 would make runc fail.
  restrict_oom_score_adj = true
  # Hybrid cgroups with hugetlb only on the v2 mount.
  tolerate_missing_hugetlb_controller = true
  disable_hugetlb_controller = true
  netns_mounts_under_state_dir = true
  # Streaming (exec, attach, port-forward) stays on loopback.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_tls_streaming = false

  [${cri}.cni]
    bin_dir = ${str(opts.cniBinDir ?? defaultCniBinDir)}
    conf_dir = ${str(p.cniConfDir)}
    max_conf_num = 1

  [${cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [${cri}.containerd.runtimes.runc.options]
        # cgroupfs driver: there is no systemd.
        SystemdCgroup = false
        Root = ${str(p.runcRoot)}

  [${cri}.registry]
    config_path = ${str(p.registryConfigDir)}
`;
}

/**
 * hosts.toml for one registry host: the local registry is both its mirror and its server, so a tag
 * it lacks is a 404 and the pull fails NOT_FOUND as against the real registry, instead of falling
 * back to the internet. (containerd 1.6 rejects a hosts.toml without a [host] table.)
 */
export function hostsToml(registryHost: string): string {
  const url = str(`http://${registryHost}`);
  return `# Written by kite: pulls resolve to the node's local registry.
server = ${url}

[host.${url}]
  capabilities = ["pull", "resolve"]
`;
}
