// The kubelet's configuration: the subset of upstream's KubeletConfiguration (kubelet.config.k8s.io)
// kite honours, with upstream's defaults. Every component of the kubelet takes what it needs from
// this one object.
import { DEFAULT_EVICTION_HARD } from './eviction/thresholds.js';

export interface KubeletConfig {
  nodeName: string;
  /** The node's address (InternalIP) and the one its kubelet API listens on. */
  nodeIP: string;
  /** The kubelet's HTTPS port (upstream 10250); 0 picks a free one, reported in the node status. */
  port: number;
  /** The kubelet's own state: pods/<uid>/volumes, pod logs, certificates. */
  rootDir: string;
  /** Container logs, as /var/log/pods: <namespace>_<name>_<uid>/<container>/<restartCount>.log. */
  podLogsDir: string;
  /** The cgroup every pod's cgroup goes under (cgroupfs layout: <root>/burstable/pod<uid>; upstream /kubepods). */
  cgroupRoot: string;
  /** The cluster's DNS domain (upstream clusterDomain; kite's default cluster.local). */
  clusterDomain: string;
  /** The nameservers of ClusterFirst pods (upstream clusterDNS; kite's default the kube-dns Service, 10.96.0.10). */
  clusterDNS: string[];
  /** The node's resolver file for dnsPolicy Default (upstream resolvConf); only its loopback servers reach pods. Default /etc/resolv.conf. */
  resolvConf?: string;
  maxPods: number;
  /** Node status is posted this often, and at once when it changes (upstream 10 s / 5 m). */
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  /** The node Lease is renewed this often (upstream: a quarter of its 40 s duration). */
  nodeLeaseDurationSeconds: number;
  /** CrashLoopBackOff: the first restart delay, doubling up to the cap (upstream 10 s, 300 s). */
  crashLoopBackOffInitialMs: number;
  crashLoopBackOffMaxMs: number;
  /** A container that ran this long cleanly resets its backoff (upstream 10 minutes). */
  crashLoopBackOffResetMs: number;
  /** ImagePullBackOff: 10 s doubling to 5 minutes, as upstream. */
  imagePullBackOffInitialMs: number;
  imagePullBackOffMaxMs: number;
  /** Rotate a container's log when it grows past this (upstream containerLogMaxSize 10Mi), keep this many files. */
  containerLogMaxSize: number;
  containerLogMaxFiles: number;
  /** How often the runtime is relisted to notice exits nobody waited for (upstream's PLEG: 1 s). */
  relistPeriodMs: number;
  /** The pause image every sandbox runs (containerd's sandbox_image). */
  podInfraContainerImage: string;
  /** Eviction thresholds as KubeletConfiguration writes them (signal → "100Mi" or "10%"); see eviction/thresholds.ts. */
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriod: Record<string, string>;
  evictionMinimumReclaim: Record<string, string>;
  /** The longest grace period a soft eviction gives a pod (upstream default 0). */
  evictionMaxPodGracePeriod: number;
  /** How long a pressure condition stays after its threshold was last met (upstream 5 minutes). */
  evictionPressureTransitionPeriodMs: number;
  /** Image GC: at this image filesystem usage, free down to the low threshold (upstream 85 / 80). */
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  /** Images detected more recently are not collected (upstream imageMinimumGCAge, 2m). */
  imageMinimumGCAgeMs: number;
  /** Images unused this long are collected whatever the usage; 0 = off (upstream imageMaximumGCAge). */
  imageMaximumGCAgeMs: number;
  /**
   * Dead-container GC (upstream's --minimum-container-ttl-duration, --maximum-dead-containers-per-container,
   * --maximum-dead-containers; not KubeletConfiguration fields): 0, 1 and -1 (no limit), as upstream.
   */
  minimumContainerTTLMs: number;
  maxPerPodContainer: number;
  maxContainers: number;
  /** Graceful node shutdown: pods are terminated when the agent stops; 0 = off (upstream shutdownGracePeriod). */
  shutdownGracePeriodMs: number;
  /** The part of shutdownGracePeriod kept for critical pods, terminated last (upstream shutdownGracePeriodCriticalPods). */
  shutdownGracePeriodCriticalPodsMs: number;
}

/** The kube-dns Service's ClusterIP in kite's service range 10.96.0.0/12. */
export const DEFAULT_CLUSTER_DNS = '10.96.0.10';

export function defaultKubeletConfig(overrides: Partial<KubeletConfig> & Pick<KubeletConfig, 'nodeName' | 'rootDir'>): KubeletConfig {
  return {
    nodeIP: '127.0.0.1',
    port: 10250,
    podLogsDir: `${overrides.rootDir}/pod-logs`,
    cgroupRoot: '/kubepods',
    clusterDomain: 'cluster.local',
    clusterDNS: [DEFAULT_CLUSTER_DNS],
    maxPods: 110,
    nodeStatusUpdateFrequencyMs: 10_000,
    nodeStatusReportFrequencyMs: 5 * 60_000,
    nodeLeaseDurationSeconds: 40,
    crashLoopBackOffInitialMs: 10_000,
    crashLoopBackOffMaxMs: 300_000,
    crashLoopBackOffResetMs: 10 * 60_000,
    imagePullBackOffInitialMs: 10_000,
    imagePullBackOffMaxMs: 300_000,
    containerLogMaxSize: 10 * 1024 * 1024,
    containerLogMaxFiles: 5,
    relistPeriodMs: 1_000,
    podInfraContainerImage: 'registry.k8s.io/pause:3.10',
    evictionHard: { ...DEFAULT_EVICTION_HARD },
    evictionSoft: {},
    evictionSoftGracePeriod: {},
    evictionMinimumReclaim: {},
    evictionMaxPodGracePeriod: 0,
    evictionPressureTransitionPeriodMs: 5 * 60_000,
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    imageMinimumGCAgeMs: 2 * 60_000,
    imageMaximumGCAgeMs: 0,
    minimumContainerTTLMs: 0,
    maxPerPodContainer: 1,
    maxContainers: -1,
    shutdownGracePeriodMs: 0,
    shutdownGracePeriodCriticalPodsMs: 0,
    ...overrides,
  };
}
