// The kubelet's Node: registration (create, or take over an existing Node and reconcile the labels
// the kubelet owns) and the status loop, as upstream's kubelet_node_status.go. The status is computed
// every nodeStatusUpdateFrequency; it is written (a merge patch of nodes/<name>/status) when it
// changed, ignoring heartbeats, or when nodeStatusReportFrequency has passed since the last write.
import type { Node, NodeStatus } from '../../api/types.js';
import type { Client } from '../../client/client.js';
import { hasStatusCode } from '../../api/errors.js';
import type { Clock } from '../../util/clock.js';
import type { KubeletConfig } from '../config.js';
import { STARTING_KUBELET } from '../events.js';
import { type EventRecorder, type InvolvedObject } from '../../client/record/recorder.js';
import type { Runtime } from '../runtime/types.js';
import type { MachineInfo } from './machine.js';
import type { NodePressure } from '../eviction/thresholds.js';
import { defaultNodeLabels, initialNode, machineResources, nodeConditions, nodeImages, nodeInfo, nodeStatusHasChanged, runtimeErrors } from './setters.js';

/** What the node status needs of the API: the Node and its status subresource. */
export interface NodeClient {
  create(node: Node): Promise<Node>;
  get(name: string): Promise<Node>;
  /** JSON merge patch of the Node. */
  patch(name: string, patch: object): Promise<Node>;
  /** JSON merge patch of nodes/<name>/status. */
  patchStatus(name: string, patch: object): Promise<Node>;
}

export function nodeClient(client: Client): NodeClient {
  const nodes = client.resource('nodes');
  return {
    create: (node) => nodes.create(node),
    // From the API server's watch cache, as upstream's kubelet reads its node before each status update.
    get: (name) => nodes.get(name, { resourceVersion: '0' }),
    patch: (name, patch) => nodes.patch(name, 'merge', patch),
    patchStatus: (name, patch) => nodes.patch(name, 'merge', patch, { subresource: 'status' }),
  };
}

/** The runtime calls the node status makes. */
export type NodeRuntime = Pick<Runtime, 'version' | 'status' | 'listImages'>;

export interface NodeStatusManagerOptions {
  client: NodeClient;
  runtime: NodeRuntime;
  cfg: KubeletConfig;
  clock: Clock;
  recorder: EventRecorder;
  /** The machine's facts (readMachineInfo(cfg.rootDir) in the kubelet). */
  machine: () => Promise<MachineInfo>;
  /** The pressure conditions the eviction manager reports; none when unset. */
  pressure?: () => ReadonlySet<NodePressure>;
  /** The port the kubelet's HTTPS API actually listens on (cfg.port may be 0). */
  kubeletPort?: number;
  /** Why the node is not ready besides the runtime (upstream's nodeShutdownManager.ShutdownStatus). */
  shutdownStatus?: () => string | undefined;
  onError?: (err: unknown) => void;
}

const REGISTER_BACKOFF_START_MS = 100;
const REGISTER_BACKOFF_MAX_MS = 7_000;

export const NODE_ALLOCATABLE_ENFORCED = 'NodeAllocatableEnforced';

/** The object reference events about the node use: upstream gives the node's name as its UID. */
export function nodeRef(nodeName: string): InvolvedObject {
  return { kind: 'Node', name: nodeName, uid: nodeName };
}

export class NodeStatusManager {
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private registered?: Node;
  private readonly registeredWaiters: ((node: Node) => void)[] = [];
  private lastReportTime = 0;
  private machineInfo?: MachineInfo;

  constructor(private readonly opts: NodeStatusManagerOptions) {}

  get nodeRef(): InvolvedObject {
    return nodeRef(this.opts.cfg.nodeName);
  }

  start(): void {
    this.opts.recorder.event(this.nodeRef, 'Normal', STARTING_KUBELET, 'Starting kubelet.');
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** Resolves with the Node once it is registered (the lease's owner). */
  whenRegistered(): Promise<Node> {
    if (this.registered) return Promise.resolve(this.registered);
    return new Promise((resolve) => this.registeredWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    try {
      await this.register(signal);
      for (;;) {
        try {
          await this.syncNodeStatus();
        } catch (err) {
          this.opts.onError?.(err);
        }
        await this.opts.clock.sleep(this.opts.cfg.nodeStatusUpdateFrequencyMs, signal);
      }
    } catch (err) {
      if (!signal.aborted) this.opts.onError?.(err);
    }
  }

  /** Creates the Node, retrying with backoff; an existing Node is taken over. */
  private async register(signal: AbortSignal): Promise<void> {
    let backoff = REGISTER_BACKOFF_START_MS;
    for (;;) {
      try {
        const node = await this.tryRegister();
        this.registered = node;
        for (const w of this.registeredWaiters.splice(0)) w(node);
        this.opts.recorder.event(this.nodeRef, 'Normal', NODE_ALLOCATABLE_ENFORCED, 'Updated Node Allocatable limit across pods');
        return;
      } catch (err) {
        this.opts.onError?.(err);
      }
      await this.opts.clock.sleep(backoff, signal);
      backoff = Math.min(backoff * 2, REGISTER_BACKOFF_MAX_MS);
    }
  }

  private async tryRegister(): Promise<Node> {
    const name = this.opts.cfg.nodeName;
    const machine = await this.machine();
    const labels = defaultNodeLabels(name, machine);
    const { status, events } = await this.computeStatus(undefined);
    try {
      const created = await this.opts.client.create(initialNode(name, labels, status));
      this.markReported(events);
      return created;
    } catch (err) {
      if (!hasStatusCode(err, 409)) throw err;
    }
    // A Node of this name exists (a restart, or registered before): keep it, put back the labels the
    // kubelet owns, and report at once, with transitions counted from the status it has.
    const existing = await this.opts.client.get(name);
    this.lastReportTime = -Infinity;
    const drifted = Object.entries(labels).filter(([k, v]) => existing.metadata?.labels?.[k] !== v);
    if (drifted.length === 0) return existing;
    return this.opts.client.patch(name, { metadata: { labels: Object.fromEntries(drifted) } });
  }

  private async machine(): Promise<MachineInfo> {
    this.machineInfo ??= await this.opts.machine();
    return this.machineInfo;
  }

  /**
   * One round of the status loop: compute, and write when changed or due. Compared with the Node as
   * the API has it, as upstream's tryUpdateNodeStatus: what others wrote (the node lifecycle
   * controller's Unknown conditions while this kubelet was slow or away) is corrected at once.
   */
  async syncNodeStatus(): Promise<void> {
    if (!this.registered) return;
    const previous = (await this.opts.client.get(this.opts.cfg.nodeName)).status;
    const { status, events } = await this.computeStatus(previous);
    const due = this.opts.clock.now() >= this.lastReportTime + this.opts.cfg.nodeStatusReportFrequencyMs;
    if (!due && previous && !nodeStatusHasChanged(previous, status)) return;
    await this.opts.client.patchStatus(this.opts.cfg.nodeName, { status });
    this.markReported(events);
  }

  /** Condition events are recorded only once the status they describe is written. */
  private markReported(events: string[]): void {
    this.lastReportTime = this.opts.clock.now();
    for (const e of events) this.opts.recorder.event(this.nodeRef, 'Normal', e, `Node ${this.opts.cfg.nodeName} status is now: ${e}`);
  }

  private async computeStatus(previous: NodeStatus | undefined): Promise<{ status: NodeStatus; events: string[] }> {
    const { cfg, runtime } = this.opts;
    const machine = await this.machine();
    const [version, images] = await Promise.all([runtime.version(), runtime.listImages().catch(() => [])]);
    let notReady: string[];
    try {
      notReady = runtimeErrors((await runtime.status()).status);
    } catch (err) {
      notReady = runtimeErrors(undefined, err as Error);
    }
    const shuttingDown = this.opts.shutdownStatus?.();
    if (shuttingDown) notReady.push(shuttingDown);
    const { conditions, events } = nodeConditions(previous?.conditions, notReady, this.opts.clock.now(), this.opts.pressure?.());
    const status: NodeStatus = {
      ...machineResources(machine, cfg),
      conditions,
      addresses: [
        { type: 'InternalIP', address: cfg.nodeIP },
        { type: 'Hostname', address: cfg.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: this.opts.kubeletPort ?? cfg.port } },
      nodeInfo: nodeInfo(machine, version),
      images: nodeImages(images),
    };
    return { status, events };
  }
}
