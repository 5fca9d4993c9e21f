// The kubelet: watches the pods bound to its node through the API server and drives them on the
// container runtime. This file only wires the parts together, as upstream's kubelet.go does:
//   pod informer (spec.nodeName=<node>) → admission → pod workers (one per UID) → runtime manager
//   relist (PLEG) → pokes the pod workers the moment a container changes
//   prober (one worker per container and probe) → pokes the pod worker on a liveness failure or a
//   readiness/startup change; lifecycle hooks run inside the runtime manager's start and kill
//   status manager → the only writer of pod.status; deletes a terminated pod being deleted
//   eviction manager → every 10 s, under node pressure, evicts one pod through the pod workers;
//   its pressure goes into the node status and its admit handler before the predicate admission
//   node status + Lease → the Node object; HTTPS API → logs, /metrics; log rotation; housekeeping of orphans
//   pod timeline → the steps each part performs for a pod, through the injected recorder, and the
//   pod start-up SLIs on /metrics computed from the same times
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import type { Node, Pod, Service as CoreService } from '../api/types.js';
import { podQOS } from '../api/pod/qos.js';
import { isPodPhaseTerminal } from '../api/pod/status.js';
import { Client } from '../client/client.js';
import { hasStatusCode } from '../api/errors.js';
import { RestClient, type RestConfig } from '../client/rest.js';
import { SharedInformer } from '../client/informer.js';
import { EventBroadcaster, clientEventSink, type EventRecorder } from '../client/record/recorder.js';
import type { Clock } from '../util/clock.js';
import { Periodic } from '../util/periodic.js';
import type { Logger } from '../util/log.js';
import type { KubeletConfig } from './config.js';
import type { Runtime } from './runtime/types.js';
import { admitPod, rejectedPodStatus } from './admission/predicate.js';
import { podCgroupParent, removeCgroup } from './cm/cgroups.js';
import type { EnvSources } from './kuberuntime/env.js';
import { TokenManager } from './token/manager.js';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { generateContainerConfig } from './kuberuntime/container.js';
import { checkLimitsForResolvConf, generatePodSandboxConfig } from './kuberuntime/sandbox.js';
import { KubeRuntimeManager } from './kuberuntime/manager.js';
import { MINIMUM_GRACE_PERIOD_SECONDS } from './kuberuntime/grace.js';
import { getPodRuntimeState, type RuntimeStateOptions } from './kuberuntime/runtime-state.js';
import { POD_UID_LABEL } from './kuberuntime/labels.js';
import { KubeletImageManager } from './images/manager.js';
import { ImageGCManager, imageFsStats } from './images/gc.js';
import { ContainerGC } from './kuberuntime/gc.js';
import { NodeShutdownManager } from './nodeshutdown/manager.js';
import { KubeletVolumeManager } from './volumes/manager.js';
import { StatusManager, podStatusClient } from './status/manager.js';
import { PodWorkers } from './podworkers/workers.js';
import { KubeletPodSyncer } from './podworkers/sync.js';
import { Pleg } from './podworkers/pleg.js';
import { NodeStatusManager, nodeClient, nodeRef } from './node/status.js';
import { NodeLeaseController, leaseClient } from './node/lease.js';
import { readMachineInfo, type MachineInfo } from './node/machine.js';
import { EvictionManager } from './eviction/manager.js';
import { HostEvictionStats } from './eviction/summary.js';
import { parseThresholdConfig } from './eviction/thresholds.js';
import { allocatableBytes } from './node/setters.js';
import { podDir } from './volumes/manager.js';
import { KubeletServer, type KubeletHost } from './server/server.js';
import { DelegatingKubeletAuthorizer } from './server/auth.js';
import { reviewResource } from '../api/resources.js';
import type { SubjectAccessReview } from 'kubernetes-types/authorization/v1.js';
import { CRIStatsProvider } from './stats/cri.js';
import { CgroupNodeStats } from './stats/node.js';
import { ContainerLogManager } from './logs/manager.js';
import { ProbeManager } from './prober/manager.js';
import { Prober } from './prober/prober.js';
import type { Disposable, Service } from '../util/lifecycle.js';
import { HandlerRunner, runtimePodIP } from './lifecycle/handlers.js';
import { podRef } from '../api/pod/reference.js';
import { noTimeline, type TimelineRecorder } from '../client/timeline/recorder.js';
import { KubeletTimeline } from './timeline/timeline.js';
import { KubeletMetrics } from './metrics/metrics.js';

export interface KubeletOptions {
  cfg: KubeletConfig;
  /** The node's own credentials (from the TLS bootstrap). */
  rest: RestConfig;
  caPem: string;
  serving: { certPem: string; keyPem: string };
  runtime: Runtime;
  clock: Clock;
  logger: Logger;
  /** Where the pod timeline's steps go (the agent's batching recorder); none: not recorded. */
  timeline?: TimelineRecorder;
}

/** Housekeeping (upstream HandlePodCleanups every 2 s): forget finished workers, stop orphans. */
const HOUSEKEEPING_PERIOD_MS = 2_000;

export class Kubelet implements KubeletHost, Service {
  readonly name = 'kubelet';
  readonly runtime: Runtime;
  private readonly client: Client;
  private readonly events: EventBroadcaster;
  private readonly recorder: EventRecorder;
  private readonly informer: SharedInformer<Pod>;
  /** Every Service, for the containers' service links (upstream's serviceLister). */
  private readonly services: SharedInformer<CoreService>;
  private readonly status: StatusManager;
  private readonly workers: PodWorkers;
  private readonly manager: KubeRuntimeManager;
  private readonly pleg: Pleg;
  private readonly probes: ProbeManager;
  private probeSyncs?: Disposable;
  private nodeStatus?: NodeStatusManager;
  private readonly lease: NodeLeaseController;
  private readonly server: KubeletServer;
  private readonly logs: ContainerLogManager;
  private readonly eviction: EvictionManager;
  private machineInfo?: Promise<MachineInfo>;
  private readonly stateOptions: RuntimeStateOptions = {
    readTerminationMessage: async (path) => {
      try {
        return await readFile(path, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
  private readonly housekeeping: Periodic;
  /** Image and dead-container garbage collection; the eviction manager reclaims through them too. */
  readonly imageGC: ImageGCManager;
  readonly containerGC: ContainerGC;
  private readonly nodeShutdown: NodeShutdownManager;
  private node?: Node;
  private stopped = false;
  private readonly timeline: KubeletTimeline;

  constructor(private readonly opts: KubeletOptions) {
    const { cfg, clock, logger } = opts;
    this.housekeeping = new Periodic({ clock, periodMs: HOUSEKEEPING_PERIOD_MS, run: () => this.housekeep(), onError: (err) => logger.warn({ err }, 'housekeeping') });
    this.runtime = opts.runtime;
    const metrics = new KubeletMetrics();
    const timeline = (this.timeline = new KubeletTimeline({ recorder: opts.timeline ?? noTimeline, nodeName: cfg.nodeName, clock, metrics }));
    this.client = new Client(new RestClient(opts.rest));
    this.events = new EventBroadcaster({ sink: clientEventSink(this.client), clock, logger });
    this.recorder = this.events.newRecorder({ component: 'kubelet', host: cfg.nodeName });
    this.services = new SharedInformer<CoreService>(this.client.resource('services'), { clock, onError: (err) => logger.warn({ err }, 'service informer') });
    const services = this.services;
    const sources: EnvSources = { ...apiSources(this.client), services: { hasSynced: () => services.hasSynced(), list: () => services.indexer.list() } };
    const images = new KubeletImageManager({ images: this.runtime, recorder: this.recorder, clock, cfg, secrets: sources, timeline });
    const client = this.client;
    const tokens = new TokenManager({
      clock,
      request: (ns, name, tr) => client.resource('', 'v1', 'serviceaccounts').namespace(ns).subresource<TokenRequest>('POST', name, 'token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', ...tr }),
    });
    const volumes = new KubeletVolumeManager({ cfg, sources, recorder: this.recorder, tokens });
    const log = (msg: string, err?: unknown) => logger.warn({ err }, msg);
    const hooks = new HandlerRunner({ runner: this.runtime, recorder: this.recorder, clock, podIP: runtimePodIP(this.runtime), log });
    this.manager = new KubeRuntimeManager({
      runtime: this.runtime,
      cfg,
      clock,
      recorder: this.recorder,
      images,
      sources,
      generatePodSandboxConfig,
      generateContainerConfig,
      postStart: (pod, c, id, signal) => hooks.runPostStart(pod, c, id, signal),
      // The hook's time counts against the grace period the container is stopped with.
      preStop: async (pod, c, id, grace, signal) => (await hooks.runPreStop(pod, c, id, grace, signal)).elapsedSeconds,
      timeline,
    });
    this.status = new StatusManager({ client: podStatusClient(this.client), clock, log, onWritten: (pod, status) => timeline.statusWritten(pod, status) });
    this.probes = new ProbeManager({ statusProvider: this.status, prober: new Prober({ runner: this.runtime, recorder: this.recorder, clock }), clock, log, timeline });
    const syncer = new KubeletPodSyncer({
      runtime: this.runtime,
      manager: this.manager,
      status: this.status,
      volumes,
      cfg,
      clock,
      stateOptions: this.stateOptions,
      cleanupPod: (pod) => this.removePodCgroup(pod),
      recorder: this.recorder,
      probes: this.probes,
      timeline,
    });
    this.workers = new PodWorkers({ syncer, clock, log });
    this.pleg = new Pleg({ runtime: this.runtime, clock, relistPeriodMs: cfg.relistPeriodMs, onPodChanged: (uid) => this.workers.poke(uid), log });
    this.informer = new SharedInformer<Pod>(this.client.resource('pods'), {
      clock,
      fieldSelector: `spec.nodeName=${cfg.nodeName}`,
      onError: (err) => logger.warn({ err }, 'pod informer'),
    });
    const nodeStats = new CgroupNodeStats({ clock });
    const stats = new CRIStatsProvider({ runtime: this.runtime, node: nodeStats, nodeName: cfg.nodeName });
    // The API server decides who may use this kubelet's API, asked with the kubelet's own credentials.
    const subjectAccessReviews = this.client.resource<SubjectAccessReview>(reviewResource('authorization.k8s.io', 'subjectaccessreviews'));
    const authorizer = new DelegatingKubeletAuthorizer((review) => subjectAccessReviews.create(review), clock);
    this.server = new KubeletServer({ config: cfg, serving: opts.serving, caPem: opts.caPem, host: this, stats, metrics, authorizer, clock, logger });
    this.lease = new NodeLeaseController({
      client: leaseClient(this.client),
      nodeName: cfg.nodeName,
      leaseDurationSeconds: cfg.nodeLeaseDurationSeconds,
      clock,
      nodeUID: () => this.node?.metadata?.uid,
      onError: (err) => logger.warn({ err }, 'node lease'),
    });
    const gcCommon = { clock, recorder: this.recorder, nodeRef: nodeRef(cfg.nodeName), log };
    this.imageGC = new ImageGCManager({ runtime: this.runtime, imageFsStats: () => imageFsStats(this.runtime), policy: cfg, pauseImage: cfg.podInfraContainerImage, ...gcCommon });
    this.containerGC = new ContainerGC({ runtime: this.runtime, pods: this.workers, allSourcesReady: () => this.informer.hasSynced(), cfg, ...gcCommon });
    this.nodeShutdown = new NodeShutdownManager({
      cfg,
      activePods: () => this.workers.activePods(),
      killPod: (pod, gracePeriodSeconds, podStatusFn) => new Promise((completed) => this.workers.updatePod({ type: 'kill', pod, gracePeriodSeconds, podStatusFn, completed })),
      syncNodeStatus: async () => this.nodeStatus?.syncNodeStatus(),
      ...gcCommon,
    });
    this.eviction = new EvictionManager({
      thresholds: parseThresholdConfig(cfg),
      pressureTransitionPeriodMs: cfg.evictionPressureTransitionPeriodMs,
      maxPodGracePeriodSeconds: cfg.evictionMaxPodGracePeriod,
      stats: new HostEvictionStats({
        clock,
        pods: stats,
        node: nodeStats,
        runtime: this.runtime,
        memoryCapacity: async () => (await this.machine()).memoryCapacity,
        allocatableMemory: async () => allocatableBytes(await this.machine(), cfg).memory,
        rootDir: cfg.rootDir,
        podLogsDir: cfg.podLogsDir,
        cgroupRoot: cfg.cgroupRoot,
      }),
      killer: {
        // As upstream's killPodNow: the kill with the eviction's grace period, the status function applied to every status written.
        evictPod: (pod, gracePeriodSeconds, podStatusFn) => this.workers.updatePod({ type: 'kill', pod, gracePeriodSeconds, podStatusFn }),
      },
      activePods: () => this.workers.activePods(),
      // Terminated, and its directory (volumes, memory-backed ones included) removed.
      podCleanedUp: async (pod) => this.workers.state(pod.metadata?.uid ?? '') === 'terminated' && !existsSync(podDir(cfg.rootDir, pod.metadata?.uid ?? '')),
      imageGC: this.imageGC,
      containerGC: this.containerGC,
      ...gcCommon,
    });
    this.logs = new ContainerLogManager({ runtime: this.runtime, clock, logger, maxSize: cfg.containerLogMaxSize, maxFiles: cfg.containerLogMaxFiles });
  }

  /** The port the HTTPS API listens on. */
  get port(): number {
    return this.server.port;
  }

  async start(): Promise<void> {
    const { logger } = this.opts;
    await mkdir(this.opts.cfg.rootDir, { recursive: true, mode: 0o700 });
    await mkdir(this.opts.cfg.podLogsDir, { recursive: true, mode: 0o755 });
    // Started first, as upstream's (in NewMainKubelet): containers wait for its first list.
    this.services.start();
    await this.server.start();
    const { cfg, clock } = this.opts;
    this.nodeStatus = new NodeStatusManager({
      client: nodeClient(this.client),
      runtime: this.runtime,
      cfg,
      clock,
      recorder: this.recorder,
      machine: () => this.machine(),
      pressure: () => this.eviction.pressure(),
      kubeletPort: this.server.port,
      shutdownStatus: () => this.nodeShutdown.shutdownStatus(),
      onError: (err) => logger.warn({ err }, 'node status'),
    });
    this.nodeStatus.start();
    this.lease.start();
    this.node = await this.nodeStatus.whenRegistered();
    logger.info({ node: this.opts.cfg.nodeName, port: this.server.port }, 'node registered');
    const resolvConfProblem = checkLimitsForResolvConf(cfg);
    if (resolvConfProblem) this.recorder.event(this.nodeStatus.nodeRef, 'Warning', 'CheckLimitsForResolvConf', resolvConfProblem);

    this.status.start();
    this.workers.start();
    this.probeSyncs = this.probes.onSyncNeeded((uid) => this.workers.poke(uid));
    this.informer.addEventHandler({
      onAdd: (pod) => this.handlePodAddition(pod),
      onUpdate: (_old, pod) => this.handlePodUpdate(pod),
      onDelete: (obj) => this.handlePodRemoval('obj' in obj ? obj.obj : obj),
    });
    this.informer.start();
    await this.informer.waitForSync();
    // Runtime pods the API no longer has (deleted while the kubelet was down) go before new work.
    await this.cleanupOrphans();
    this.pleg.start();
    this.logs.start();
    this.eviction.start();
    this.containerGC.start();
    this.imageGC.start();
    // A stop() during start-up wins: housekeeping must not begin after it.
    if (!this.stopped) this.housekeeping.start();
  }

  /**
   * Graceful node shutdown, before stop(): with shutdownGracePeriod set, the node turns not ready and
   * its pods are terminated (critical ones last) and reported Failed; otherwise nothing happens.
   */
  async shutdownNode(): Promise<void> {
    if (!this.nodeShutdown.enabled) return;
    await this.nodeShutdown.shutdown();
    // The pods' final statuses reach the API server before the kubelet stops writing.
    await this.status.idle();
  }

  /** Stops watching and reporting; containers keep running, as when upstream's kubelet stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.housekeeping.stop();
    await this.eviction.stop();
    await this.containerGC.stop();
    await this.imageGC.stop();
    await this.informer.stop();
    await this.services.stop();
    await this.pleg.stop();
    this.probeSyncs?.dispose();
    this.probes.stop();
    await this.workers.stop();
    await this.logs.stop();
    await this.status.stop();
    await this.lease.stop();
    await this.nodeStatus?.stop();
    await this.server.stop();
    await this.events.stop();
    this.client.close();
  }

  // KubeletHost, for the HTTPS API.
  getPodByName(namespace: string, name: string): Pod | undefined {
    return this.informer.indexer.getByKey(`${namespace}/${name}`);
  }

  getPods(): Pod[] {
    return this.informer.indexer.list();
  }

  getPodStatus(pod: Pod) {
    return this.status.getPodStatus(pod.metadata?.uid ?? '');
  }

  private handlePodAddition(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (this.workers.state(uid) !== undefined) return this.handlePodUpdate(pod);
    this.timeline.observedOnWatch(pod);
    // Pods already finished or being deleted are not admitted again; they only get cleaned up.
    if (!pod.metadata?.deletionTimestamp && !isPodPhaseTerminal(pod.status?.phase) && this.node) {
      // Upstream's admit handlers in the order it registers them: eviction, node shutdown, predicates.
      let result = this.eviction.admit(pod);
      if (result.admit) result = this.nodeShutdown.admit();
      if (result.admit) result = admitPod(pod, this.node, this.workers.activePods());
      if (!result.admit) {
        const status = rejectedPodStatus(pod, result);
        this.recorder.event(podRef(pod), 'Warning', result.reason, result.message);
        this.timeline.instant(pod, 'KubeletRejected', { detail: result.message, attributes: { reason: result.reason } });
        this.status.setPodStatus(pod, status);
        this.workers.updatePod({ type: 'create', pod: { ...pod, status } });
        return;
      }
      this.timeline.instant(pod, 'KubeletAdmitted');
    }
    this.workers.updatePod({ type: 'create', pod });
  }

  private handlePodUpdate(pod: Pod): void {
    this.timeline.observedOnWatch(pod);
    this.status.updatePod(pod);
    this.workers.updatePod({ type: 'update', pod });
  }

  private handlePodRemoval(pod: Pod): void {
    // The object is gone: its worker stops the containers at once and removes them.
    const gone: Pod = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: pod.metadata?.deletionTimestamp ?? new Date(this.opts.clock.now()).toISOString() } };
    this.workers.updatePod({ type: 'kill', pod: gone, gracePeriodSeconds: MINIMUM_GRACE_PERIOD_SECONDS });
  }

  private async housekeep(): Promise<void> {
    const inApi = new Set(this.informer.indexer.list().map((p) => p.metadata?.uid ?? ''));
    for (const uid of this.workers.knownPods()) {
      if (this.workers.state(uid) === 'terminated' && !inApi.has(uid)) {
        this.workers.forgetPod(uid);
        this.status.removePod(uid);
        this.timeline.forgetPod(uid);
      }
    }
    // Probe workers of pods that can no longer be running (HandlePodCleanups' CleanupPods).
    this.probes.cleanupPods(new Set(this.workers.activePods().map((p) => p.metadata?.uid ?? '')));
    // Restart back-offs idle past their reset period are forgotten (upstream's backOff.GC).
    this.manager.backoff.gc(this.opts.clock.now());
    await this.cleanupOrphans();
  }

  /** Stops and removes sandboxes and containers of pods that have no worker (their object is gone). */
  private async cleanupOrphans(): Promise<void> {
    const known = new Set(this.informer.indexer.list().map((p) => p.metadata?.uid ?? ''));
    for (const uid of this.workers.knownPods()) known.add(uid);
    // The two list calls find the pods the runtime has; only an orphan's objects are inspected further.
    const [sandboxes, containers] = await Promise.all([this.runtime.listPodSandbox(), this.runtime.listContainers()]);
    const orphans = new Set([...sandboxes, ...containers].map((o) => o.labels?.[POD_UID_LABEL]).filter((uid): uid is string => !!uid && !known.has(uid)));
    for (const uid of orphans) {
      const state = await getPodRuntimeState(this.runtime, uid, this.stateOptions);
      const stub: Pod = {
        metadata: { uid, name: state.name, namespace: state.namespace, deletionTimestamp: new Date(this.opts.clock.now()).toISOString() },
        spec: { containers: [], terminationGracePeriodSeconds: MINIMUM_GRACE_PERIOD_SECONDS },
      };
      this.opts.logger.info({ pod: `${state.namespace}/${state.name}`, uid }, 'stopping the containers of a pod that is gone');
      await this.manager.killPod(stub, state, MINIMUM_GRACE_PERIOD_SECONDS);
      await this.manager.removePod(state);
      this.manager.forgetPod(uid);
      await this.removePodCgroup(stub);
    }
  }

  /** The machine's facts, read once (node status and eviction both use them). */
  private machine(): Promise<MachineInfo> {
    this.machineInfo ??= readMachineInfo(this.opts.cfg.rootDir);
    return this.machineInfo;
  }

  private async removePodCgroup(pod: Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    // The QoS class of a stub is unknown: try each parent (removing a missing cgroup is a no-op).
    const classes = pod.spec?.containers.length ? [podQOS(pod)] : (['Guaranteed', 'Burstable', 'BestEffort'] as const);
    for (const qos of classes) await removeCgroup(podCgroupParent(qos, uid, this.opts.cfg.cgroupRoot));
  }
}

/** ConfigMaps and Secrets read straight from the API server (a missing one is undefined). */
function apiSources(client: Client): EnvSources {
  const get = async <T>(resource: string, ns: string, name: string): Promise<T | undefined> => {
    try {
      return (await client.resource('', 'v1', resource).namespace(ns).get(name)) as T;
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined;
      throw err;
    }
  };
  return {
    getConfigMap: (ns, name) => get('configmaps', ns, name),
    getSecret: (ns, name) => get('secrets', ns, name),
  };
}
