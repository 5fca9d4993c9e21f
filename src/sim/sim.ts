// `kite sim`: thousands of simulated kubelets in one process. Nodes are registered from a template
// and keep their Leases (nodes.ts); one node informer and one pod informer (bound pods only) feed
// two stage engines that play the node and pod stages (engine.ts, stages/*.json). Every request
// goes through one limiter, so the fleet's load on the API server is bounded.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { CoreEvent, Node, Pod } from '../api/types.js';
import { Client } from '../client/client.js';
import { schemaForKind } from '../api/schema.js';
import type { JsonObject } from '../api/patch/json.js';
import { applyStrategicMergePatch } from '../api/patch/strategic.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc } from '../client/indexer.js';
import { SharedInformer, type ListerWatcher } from '../client/informer.js';
import { checkFlags, parseArgs } from '../util/args.js';
import { realClock, type Clock } from '../util/clock.js';
import { newLogger, type Logger } from '../util/log.js';
import { StageEngine, type StageActions } from './engine.js';
import { EventBroadcaster, type EventRecorder, type EventType, type InvolvedObject } from '../client/record/recorder.js';
import { podRef } from '../api/pod/reference.js';
import { Limiter } from './limiter.js';
import { NODE_LEASE_NAMESPACE, NodeFleet, type NodeApi } from './nodes.js';
import { MAX_NODES, PodIPAM, podFunctions } from './runtime.js';
import { compileStages, defaultStageSpecs, loadStageSpecs, type SimResource, type Stage } from './stage.js';
import { compileTemplate } from './template.js';
import defaultNodeTemplate from './node-template.json' with { type: 'json' };
import { BatchingTimelineRecorder, type TimelineRecorder } from '../client/timeline/recorder.js';
import { kubeletSteps } from './timeline.js';

/** Everything the simulator asks of the API server; clientApi() maps it onto the typed client. */
export interface SimApi extends NodeApi {
  nodes: ListerWatcher<Node>;
  /** Pods of every namespace, with the list/watch options given (a field selector on spec.nodeName). */
  pods: ListerWatcher<Pod>;
  patchNodeStatus(name: string, patch: object): Promise<Node>;
  deleteNode(name: string): Promise<void>;
  patchPodStatus(namespace: string, name: string, patch: object): Promise<Pod>;
  deletePod(namespace: string, name: string, uid: string | undefined): Promise<void>;
  createEvent(event: CoreEvent): Promise<CoreEvent>;
  /** A strategic merge patch of an event (a repeat bumps its count). */
  patchEvent(event: CoreEvent, patch: object): Promise<CoreEvent>;
}

const fieldManager = 'kite-sim';

/** A node annotation: "stopped" makes the node's kubelet play dead (no Lease renewals, node or pod stages) until it is removed. */
export const HEARTBEAT_ANNOTATION = 'sim.kite.dev/heartbeat';

/** Whether the node's heartbeat annotation stops it; a value other than "stopped" is an error, and the node runs on. */
export function heartbeatStopped(node: Node): { stopped: boolean; error?: string } {
  const value = node.metadata?.annotations?.[HEARTBEAT_ANNOTATION];
  if (value === undefined || value === 'stopped') return { stopped: value === 'stopped' };
  return { stopped: false, error: `annotation ${HEARTBEAT_ANNOTATION} must be "stopped" (or absent), got ${JSON.stringify(value)}` };
}
const nodeSchema = schemaForKind('', 'v1', 'Node');

export function clientApi(client: Client): SimApi {
  const nodes = client.resource('nodes');
  const pods = client.resource('pods');
  const leases = client.resource('leases.coordination.k8s.io').namespace(NODE_LEASE_NAMESPACE);
  const events = client.resource('events');
  return {
    nodes,
    pods,
    createNode: (node) => nodes.create(node, { fieldManager }),
    getNode: (name) => nodes.get(name),
    patchNodeStatus: (name, patch) => nodes.patch(name, 'strategic', patch, { subresource: 'status', fieldManager }),
    deleteNode: async (name) => void (await nodes.delete(name)),
    createLease: (lease) => leases.create(lease, { fieldManager }),
    getLease: (name) => leases.get(name),
    updateLease: (lease) => leases.update(lease, { fieldManager }),
    patchPodStatus: (ns, name, patch) => pods.namespace(ns).patch(name, 'strategic', patch, { subresource: 'status', fieldManager }),
    deletePod: async (ns, name, uid) => void (await pods.namespace(ns).delete(name, { gracePeriodSeconds: 0, preconditions: uid ? { uid } : undefined })),
    createEvent: (event) => events.namespace(event.metadata?.namespace ?? 'default').create(event, { fieldManager }),
    patchEvent: (event, patch) => events.namespace(event.metadata?.namespace ?? 'default').patch(event.metadata?.name ?? '', 'strategic', patch, { fieldManager }),
  };
}

export interface SimOptions {
  kubeconfig: string;
  nodes: number;
  /** The first node's index (default 0): nodes sim-<firstNode>..sim-<firstNode+nodes-1>. */
  firstNode?: number;
  /** A Node manifest (YAML or JSON) with "{{ .name }}", "{{ .index }}" and nodeIP(.index), its name sim-<index> if unset; default node-template.json. */
  nodeTemplate?: string;
  /** Comma-separated stage files or directories; "default" is the built-in set (see stage.ts). */
  stages?: string;
  /** Record the simulated kubelets' pod timeline steps (default true). */
  podTimeline?: boolean;
  clock?: Clock;
  logger: Logger;
}

export interface StartSimOptions extends Omit<SimOptions, 'kubeconfig'> {
  api: SimApi;
  random?: () => number;
  /** Requests in flight at once, over everything the simulator sends. */
  maxInFlight?: number;
  /** Where the simulated kubelets' pod steps go (default none). */
  timeline?: TimelineRecorder;
}

export interface SimHandle {
  /** The simulated node names. */
  readonly nodeNames: readonly string[];
  /** Resolves when every node is registered. */
  readonly registered: Promise<void>;
  /** Stops renewing, playing and watching; waits for writes in flight. */
  stop(): Promise<void>;
}

function readManifest(file: string): unknown {
  return parseYaml(readFileSync(file, 'utf8'));
}

function stagesFor(stages: readonly Stage[], resource: SimResource): Stage[] {
  return stages.filter((s) => s.resource === resource);
}

/** Starts the simulator against an API (the real client or a test fake). */
export function startSim(opts: StartSimOptions): SimHandle {
  if (!Number.isInteger(opts.nodes) || opts.nodes < 0 || opts.nodes > MAX_NODES) throw new Error(`--nodes must be an integer from 0 to ${MAX_NODES}`);
  const firstNode = opts.firstNode ?? 0;
  if (!Number.isInteger(firstNode) || firstNode < 0 || firstNode + opts.nodes > MAX_NODES) throw new Error(`--first-node must be an integer from 0 to ${MAX_NODES - opts.nodes}`);
  const clock = opts.clock ?? realClock;
  const { api, logger } = opts;
  const { timeline } = opts;
  const stages = compileStages(opts.stages ? loadStageSpecs(opts.stages) : defaultStageSpecs);
  const limiter = new Limiter(opts.maxInFlight ?? 64);
  const limited =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      limiter.run(() => fn(...args));

  const fleet = new NodeFleet({
    count: opts.nodes,
    first: firstNode,
    template: compileTemplate(opts.nodeTemplate ? readManifest(opts.nodeTemplate) : defaultNodeTemplate),
    // A kubelet registers its node with the status setters already run (conditions included), which
    // spares a status write per node: the node stages due at once are applied before the create.
    prepare: (node) => nodeEngine.settle(node, (n, status) => applyStrategicMergePatch(n as JsonObject, { status }, nodeSchema) as Node),
    api,
    limiter,
    clock,
    logger,
    random: opts.random,
  });
  // One broadcaster for the whole fleet, a recorder per node (source kubelet on that node), as each kubelet has.
  const events = new EventBroadcaster({
    sink: { create: (e) => limiter.run(() => api.createEvent(e), 'event'), patch: (e, p) => limiter.run(() => api.patchEvent(e, p), 'event') },
    clock,
    logger,
    concurrency: 4,
  });
  const recorders = new Map<string, EventRecorder>();
  const kubeletOn = (node: string) => recorders.get(node) ?? recorders.set(node, events.newRecorder({ component: 'kubelet', host: node })).get(node)!;
  const record = (recorder: EventRecorder, object: InvolvedObject, ev: Record<string, unknown>) =>
    recorder.event(ev.fieldPath ? { ...object, fieldPath: String(ev.fieldPath) } : object, String(ev.type ?? 'Normal') as EventType, String(ev.reason ?? ''), String(ev.message ?? ''));
  const ipam = new PodIPAM();

  const nodeInformer = new SharedInformer<Node>(api.nodes, { clock, onError: (err) => logger.warn({ err }, 'node informer') });
  const podInformer = new SharedInformer<Pod>(api.pods, {
    clock,
    fieldSelector: 'spec.nodeName!=',
    onError: (err) => logger.warn({ err }, 'pod informer'),
  });

  const nodeActions: StageActions<Node> = {
    patchStatus: limited((node: Node, status: unknown) => api.patchNodeStatus(node.metadata!.name!, { status })),
    delete: limited((node: Node) => api.deleteNode(node.metadata!.name!)),
    // Node events name the node by its name as UID, as upstream's kubelet does.
    event: (node, ev) => record(kubeletOn(node.metadata?.name ?? ''), { kind: 'Node', name: node.metadata?.name, uid: node.metadata?.name }, ev),
  };
  const podActions: StageActions<Pod> = {
    // The UID makes the patch a precondition: a pod recreated under the same name is not touched.
    patchStatus: limited(async (pod: Pod, status: unknown) => {
      const written = await api.patchPodStatus(pod.metadata!.namespace!, pod.metadata!.name!, { metadata: { uid: pod.metadata?.uid }, status });
      // Off, the steps are not even worked out.
      if (timeline) {
        const { namespace = '', name = '', uid = '' } = written.metadata ?? {};
        for (const step of kubeletSteps(pod.spec?.nodeName ?? '', pod, written, clock.now())) timeline.record({ namespace, name, uid }, step);
      }
      return written;
    }),
    delete: limited((pod: Pod) => api.deletePod(pod.metadata!.namespace!, pod.metadata!.name!, pod.metadata?.uid)),
    event: (pod, ev) => record(kubeletOn(pod.spec?.nodeName ?? ''), podRef(pod), ev),
  };

  // Nodes whose heartbeat annotation stops them: neither their node nor their pods' stages play.
  const stopped = new Set<string>();
  const nodeEngine = new StageEngine<Node>({
    stages: stagesFor(stages, 'nodes'),
    actions: nodeActions,
    get: (key) => nodeInformer.indexer.getByKey(key),
    clock,
    logger,
    random: opts.random,
    paused: (node) => stopped.has(node.metadata?.name ?? ''),
  });
  const podEngine = new StageEngine<Pod>({
    stages: stagesFor(stages, 'pods'),
    actions: podActions,
    get: (key) => podInformer.indexer.getByKey(key),
    clock,
    logger,
    random: opts.random,
    functions: podFunctions({ ipam, nodeIndex: (name) => fleet.nodeIndex(name) }),
    workers: 32,
    paused: (pod) => stopped.has(pod.spec?.nodeName ?? ''),
  });

  const ours = (nodeName: string | undefined) => nodeName !== undefined && fleet.nodeIndex(nodeName) !== undefined;
  // Nodes whose bad heartbeat annotation was already reported: one warning per bad value.
  const heartbeatErrors = new Set<string>();
  const observeNode = (node: Node) => {
    const name = node.metadata?.name ?? '';
    if (!ours(name)) return;
    const heartbeat = heartbeatStopped(node);
    if (heartbeat.error && !heartbeatErrors.has(name)) logger.warn({ node: name }, heartbeat.error);
    if (heartbeat.error) heartbeatErrors.add(name);
    else heartbeatErrors.delete(name);
    if (heartbeat.stopped && !stopped.has(name)) {
      logger.info({ node: name }, 'heartbeat stopped: the node plays dead');
      stopped.add(name);
      fleet.setHeartbeat(name, false);
    } else if (!heartbeat.stopped && stopped.delete(name)) {
      logger.info({ node: name }, 'heartbeat resumed');
      fleet.setHeartbeat(name, true);
      // Pods whose stages waited (a deletion, a start) play from their current state.
      for (const pod of podInformer.indexer.list()) if (pod.spec?.nodeName === name) podEngine.observe(pod);
    }
    nodeEngine.observe(node);
  };
  nodeInformer.addEventHandler({
    onAdd: observeNode,
    onUpdate: (_old, node) => observeNode(node),
    onDelete: (node) => nodeEngine.forget(metaNamespaceKeyFunc(node)),
  });
  const observePod = (pod: Pod) => {
    const node = fleet.nodeIndex(pod.spec?.nodeName ?? '');
    if (node === undefined) return;
    // After a restart, IPs already handed out stay taken.
    if (pod.status?.podIP && !pod.spec?.hostNetwork) ipam.reserve(pod.metadata?.uid ?? '', node, pod.status.podIP);
    podEngine.observe(pod);
  };
  podInformer.addEventHandler({
    onAdd: observePod,
    onUpdate: (_old, pod) => observePod(pod),
    onDelete: (obj) => {
      const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
      podEngine.forget(metaNamespaceKeyFunc(obj));
      ipam.release(pod.metadata?.uid ?? '');
    },
  });

  nodeEngine.start();
  podEngine.start();
  nodeInformer.start();
  podInformer.start();
  const registered = fleet.register();

  return {
    nodeNames: fleet.names,
    registered,
    async stop() {
      fleet.stop();
      await Promise.all([nodeInformer.stop(), podInformer.stop()]);
      await Promise.all([nodeEngine.stop(), podEngine.stop()]);
      await registered;
      await events.flush();
    },
  };
}

/** Runs the simulator against the cluster of a kubeconfig (e.g. DATA/admin.kubeconfig). */
export async function runSim(opts: SimOptions): Promise<SimHandle> {
  const client = await Client.fromKubeconfig(opts.kubeconfig);
  const timeline = opts.podTimeline === false ? undefined : new BatchingTimelineRecorder({ rest: client.rest, clock: opts.clock ?? realClock, logger: opts.logger });
  const handle = startSim({ ...opts, api: clientApi(client), timeline });
  return {
    nodeNames: handle.nodeNames,
    registered: handle.registered,
    async stop() {
      await handle.stop();
      await timeline?.stop();
      client.close();
    },
  };
}

export const simUsage = `  sim      Simulate nodes (kwok-like): register them, keep their leases, play pod lifecycles.
           --kubeconfig FILE           the cluster to join (required)
           --nodes N                   nodes sim-0..sim-N-1 (required)
           --first-node I              number the nodes from I: sim-I..sim-(I+N-1), e.g. to add nodes beside a running sim
           --node-template FILE        a Node manifest (YAML/JSON) with {{ .name }}, {{ .index }}, {{ nodeIP(.index) }};
                                       without metadata.name, node i is named sim-<i>
           --stages LIST               stage files or directories, comma-separated; "default" = built-in set
           --pod-timeline true|false   record the simulated kubelets' pod timeline steps (default true)
`;

/** `kite sim ...`: runs until SIGINT or SIGTERM, then stops cleanly and resolves. */
export async function simCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, ['kubeconfig', 'nodes', 'first-node', 'node-template', 'stages', 'pod-timeline']);
  const kubeconfig = args.flags.get('kubeconfig');
  if (!kubeconfig) throw new Error('--kubeconfig is required');
  if (!args.flags.has('nodes')) throw new Error('--nodes is required');
  const nodes = Number(args.flags.get('nodes'));
  const logger = newLogger('sim');
  const signalled = new Promise<string>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
  const started = Date.now();
  const firstNode = args.flags.has('first-node') ? Number(args.flags.get('first-node')) : undefined;
  const podTimeline = args.flags.get('pod-timeline');
  if (podTimeline !== undefined && podTimeline !== 'true' && podTimeline !== 'false') throw new Error(`--pod-timeline must be true or false, got "${podTimeline}"`);
  const handle = await runSim({ kubeconfig, nodes, firstNode, nodeTemplate: args.flags.get('node-template'), stages: args.flags.get('stages'), podTimeline: podTimeline !== 'false', logger });
  void handle.registered.then(() => process.stdout.write(`kite sim: ${nodes} nodes registered in ${((Date.now() - started) / 1000).toFixed(1)}s\n`));
  logger.info({ signal: await signalled }, 'stopping');
  await handle.stop();
}
