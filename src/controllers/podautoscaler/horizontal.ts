// The HorizontalPodAutoscaler controller, as upstream's pkg/controller/podautoscaler/horizontal.go:
// every sync period each HPA reads its target's scale subresource and the resource metrics of the
// pods the scale selects, proposes a replica count per metric (the largest wins), stabilizes and
// bounds it, writes the scale when it changes (event SuccessfulRescale "New size: N; reason: ...")
// and reports conditions AbleToScale, ScalingActive and ScalingLimited with upstream's reasons.
// Metrics other than Resource and ContainerResource need the custom and external metrics APIs,
// which kite does not serve: they fail as they do upstream without those APIs.
import { isDeepStrictEqual } from 'node:util';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type {
  HorizontalPodAutoscaler,
  HorizontalPodAutoscalerCondition,
  HorizontalPodAutoscalerStatus,
  MetricSpec,
  MetricStatus,
  MetricTarget,
  MetricValueStatus,
} from 'kubernetes-types/autoscaling/v2.js';
import { Quantity } from '../../api/quantity.js';
import { resources, findResource, type ResourceInfo } from '../../api/resources.js';
import { parseLabelSelector, type Selector } from '../../api/labels.js';
import { rfc3339 } from '../../api/time.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, type Indexer } from '../../client/indexer.js';
import { type EventBroadcaster, type EventRecorder, type EventType } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { RestResourceMetricsClient, type ResourceMetricsClient } from './metrics.js';
import { newHistory, normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors, storeScaleEvent, type AutoscalerHistory, DEFAULT_DOWNSCALE_STABILIZATION_MS } from './normalize.js';
import { plainMetricReplicas, resourceReplicas, type ReplicaCalculatorOptions } from './replicas.js';

/** Upstream's --horizontal-pod-autoscaler-sync-period. */
export const DEFAULT_SYNC_PERIOD_MS = 15_000;

const hpaResource = findResource('autoscaling', 'v2', 'horizontalpodautoscalers')!;
const podsResource = findResource('', 'v1', 'pods')!;

export interface HorizontalControllerOptions extends ControllerOptions {
  /** --horizontal-pod-autoscaler-sync-period (ms). */
  syncPeriodMs?: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization (ms). */
  downscaleStabilizationMs?: number;
  tolerance?: number;
  metrics?: ResourceMetricsClient;
  /** --concurrent-horizontal-pod-autoscaler-syncs (default 5). */
  workers?: number;
}

interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown>;
  spec: { replicas?: number };
  status: { replicas?: number; selector?: string };
}

type ConditionType = 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';
type Status = 'True' | 'False';

/** A metric's proposal, or the ScalingActive=False condition its failure sets. */
type MetricResult =
  | { ok: true; replicas: number; metric: string; timestamp: number; status: MetricStatus }
  | { ok: false; error: string; condition: { type: ConditionType; status: Status; reason: string; message: string } };

/** The API resource of a scale target (upstream's RESTMapper over the served kinds with a scale subresource). */
function scaleTargetResource(apiVersion: string, kind: string): ResourceInfo | string {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const candidates = resources.filter((r) => r.group === group && r.kind === kind && r.subresources.some((s) => s.name === 'scale'));
  if (candidates.length === 0) return `no matches for kind ${JSON.stringify(kind)} in group ${JSON.stringify(group)}`;
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return candidates.find((r) => r.version === version) ?? candidates[0]!;
}

/** Go's %v of a quantity in milli-units, as resource.NewMilliQuantity(v, DecimalSI).String(). */
const milliQuantity = (v: number) => Quantity.fromMilli(Math.trunc(v)).toString();

export class HorizontalController {
  private readonly hpas: Indexer<HorizontalPodAutoscaler>;
  private readonly pods: Indexer<Pod>;
  private readonly controller: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly recorder: EventRecorder;
  private readonly metrics: ResourceMetricsClient;
  private readonly history = new Map<string, AutoscalerHistory>();
  /** The last selector of each HPA's target (upstream's hpaSelectors), to find pods two HPAs control. */
  private readonly selectors = new Map<string, { namespace: string; name: string; selector: Selector }>();
  private readonly syncPeriodMs: number;

  constructor(private readonly opts: HorizontalControllerOptions) {
    const hpaInformer = opts.informers.informerFor<HorizontalPodAutoscaler>(hpaResource);
    const podInformer = opts.informers.informerFor<Pod>(podsResource);
    this.hpas = hpaInformer.indexer;
    this.pods = podInformer.indexer;
    this.syncPeriodMs = opts.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
    this.metrics = opts.metrics ?? new RestResourceMetricsClient(opts.client);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'horizontal-pod-autoscaler'));
    this.controller = new QueueController({
      name: 'horizontalpodautoscaling',
      clock: opts.clock,
      logger: opts.logger,
      sources: [hpaInformer, podInformer],
      workers: opts.workers ?? 5,
      sync: (key) => this.sync(key),
    });
    // As upstream, every request waits out the sync period, so each HPA is reconciled once per period.
    const enqueue = (hpa: HorizontalPodAutoscaler) => this.controller.enqueueAfter(metaNamespaceKeyFunc(hpa), this.syncPeriodMs);
    hpaInformer.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_old, cur) => enqueue(cur),
      onDelete: (obj) => {
        const hpa = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        this.forget(metaNamespaceKeyFunc(hpa as HorizontalPodAutoscaler));
      },
    });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  /** Reconciles one HPA; asks to be back after the sync period while it exists. */
  async sync(key: string): Promise<number | void> {
    const cached = this.hpas.getByKey(key);
    if (!cached) {
      this.forget(key);
      return;
    }
    await this.reconcile(key, structuredClone(cached));
    return this.syncPeriodMs;
  }

  private forget(key: string): void {
    this.history.delete(key);
    this.selectors.delete(key);
  }

  private event(hpa: HorizontalPodAutoscaler, type: EventType, reason: string, message: string): void {
    this.recorder.event({ kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v2', namespace: hpa.metadata?.namespace, name: hpa.metadata?.name, uid: hpa.metadata?.uid }, type, reason, message);
  }

  /** setCondition: the transition time moves only when the status changes. */
  private setCondition(hpa: HorizontalPodAutoscaler, type: ConditionType, status: Status, reason: string, message: string): void {
    const conditions = ((hpa.status ??= { desiredReplicas: 0 }).conditions ??= []);
    let c = conditions.find((x) => x.type === type);
    if (!c) {
      c = { type, status: '' } as HorizontalPodAutoscalerCondition;
      conditions.push(c);
    }
    if (c.status !== status) c.lastTransitionTime = rfc3339(this.opts.clock.now());
    Object.assign(c, { status, reason, message });
  }

  private async reconcile(key: string, hpa: HorizontalPodAutoscaler): Promise<void> {
    const original = structuredClone(hpa.status);
    const spec = hpa.spec!;
    const ns = hpa.metadata?.namespace ?? '';
    const ref = spec.scaleTargetRef;
    const now = this.opts.clock.now();

    const target = scaleTargetResource(ref.apiVersion ?? '', ref.kind);
    let scale: Scale;
    try {
      if (typeof target === 'string') throw new Error(target);
      scale = await this.opts.client.resource(target).namespace(ns).subresource<Scale>('GET', ref.name, 'scale');
    } catch (err) {
      const message = (err as Error).message;
      this.event(hpa, 'Warning', 'FailedGetScale', message);
      this.setCondition(hpa, 'AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${message}`);
      await this.updateStatusIfNeeded(original, hpa);
      return;
    }
    this.setCondition(hpa, 'AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const currentReplicas = scale.spec.replicas ?? 0;
    let history = this.history.get(key);
    if (!history) this.history.set(key, (history = newHistory(currentReplicas, now)));

    const minReplicas = spec.minReplicas ?? 1;
    let desiredReplicas = 0;
    let rescaleReason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] = [];
    if (currentReplicas === 0 && minReplicas !== 0) {
      rescale = false;
      this.setCondition(hpa, 'ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (currentReplicas > spec.maxReplicas) {
      rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
      desiredReplicas = spec.maxReplicas;
    } else if (currentReplicas < minReplicas) {
      rescaleReason = 'Current number of replicas below Spec.MinReplicas';
      desiredReplicas = minReplicas;
    } else {
      const computed = await this.computeReplicasForMetrics(hpa, scale, spec.metrics ?? []);
      metricStatuses = computed.statuses;
      if (computed.replicas === -1) {
        this.setStatus(hpa, currentReplicas, hpa.status?.desiredReplicas ?? 0, metricStatuses, false);
        await this.updateStatusIfNeeded(original, hpa);
        this.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', computed.error!);
        return;
      }
      if (computed.replicas > desiredReplicas) desiredReplicas = computed.replicas;
      if (desiredReplicas > currentReplicas) rescaleReason = `${computed.metric} above target`;
      if (desiredReplicas < currentReplicas) rescaleReason = 'All metrics below target';
      const downscale = this.opts.downscaleStabilizationMs ?? DEFAULT_DOWNSCALE_STABILIZATION_MS;
      const normalized = spec.behavior
        ? normalizeDesiredReplicasWithBehaviors(history, now, spec.behavior, currentReplicas, desiredReplicas, minReplicas, spec.maxReplicas, downscale)
        : normalizeDesiredReplicas(history, now, currentReplicas, desiredReplicas, minReplicas, spec.maxReplicas, downscale);
      this.setCondition(hpa, 'AbleToScale', 'True', normalized.ableToScale.reason, normalized.ableToScale.message);
      const l = normalized.scalingLimited;
      this.setCondition(hpa, 'ScalingLimited', l.limited ? 'True' : 'False', l.reason, l.message);
      desiredReplicas = normalized.replicas;
      rescale = desiredReplicas !== currentReplicas;
    }

    if (rescale) {
      try {
        await this.opts.client
          .resource(target as ResourceInfo)
          .namespace(ns)
          .subresource<Scale>('PUT', ref.name, 'scale', { ...scale, spec: { ...scale.spec, replicas: desiredReplicas } });
      } catch (err) {
        const message = (err as Error).message;
        this.event(hpa, 'Warning', 'FailedRescale', `New size: ${desiredReplicas}; reason: ${rescaleReason}; error: ${message}`);
        this.setCondition(hpa, 'AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${message}`);
        this.setStatus(hpa, currentReplicas, hpa.status?.desiredReplicas ?? 0, metricStatuses, false);
        await this.updateStatusIfNeeded(original, hpa);
        return;
      }
      this.setCondition(hpa, 'AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desiredReplicas}`);
      this.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desiredReplicas}; reason: ${rescaleReason}`);
      storeScaleEvent(history, spec.behavior, now, currentReplicas, desiredReplicas);
      this.opts.logger.info({ controller: 'horizontalpodautoscaling', hpa: key, currentReplicas, desiredReplicas, reason: rescaleReason }, 'Successfully rescaled');
    } else desiredReplicas = currentReplicas;

    this.setStatus(hpa, currentReplicas, desiredReplicas, metricStatuses, rescale);
    await this.updateStatusIfNeeded(original, hpa);
  }

  private setStatus(hpa: HorizontalPodAutoscaler, currentReplicas: number, desiredReplicas: number, metrics: MetricStatus[], rescale: boolean): void {
    const previous = hpa.status;
    // As the API serves it: currentReplicas omitted when 0, currentMetrics null when there are none.
    const status = { desiredReplicas, currentMetrics: metrics.length > 0 ? metrics : null } as unknown as HorizontalPodAutoscalerStatus;
    if (currentReplicas) status.currentReplicas = currentReplicas;
    const lastScaleTime = rescale ? rfc3339(this.opts.clock.now()) : previous?.lastScaleTime;
    if (lastScaleTime) status.lastScaleTime = lastScaleTime;
    if (previous?.conditions?.length) status.conditions = previous.conditions;
    hpa.status = status;
  }

  private async updateStatusIfNeeded(original: HorizontalPodAutoscalerStatus | undefined, hpa: HorizontalPodAutoscaler): Promise<void> {
    if (isDeepStrictEqual(original, hpa.status)) return;
    try {
      await this.opts.client.resource(hpaResource).namespace(hpa.metadata?.namespace).updateStatus(hpa as never);
    } catch (err) {
      this.event(hpa, 'Warning', 'FailedUpdateStatus', (err as Error).message);
      throw new Error(`failed to update status for ${hpa.metadata?.name}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** computeReplicasForMetrics: the largest proposal; -1 when every metric failed, or some did and the rest would scale down. */
  private async computeReplicasForMetrics(hpa: HorizontalPodAutoscaler, scale: Scale, specs: MetricSpec[]): Promise<{ replicas: number; metric: string; statuses: MetricStatus[]; error?: string }> {
    const selector = this.validateAndParseSelector(hpa, scale.status.selector ?? '');
    if (typeof selector === 'string') return { replicas: -1, metric: '', statuses: [], error: selector };
    const specReplicas = scale.spec.replicas ?? 0;
    // A metric that fails leaves its slot empty, as upstream's zero MetricStatus.
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' }) as MetricStatus);
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let firstFailure: Extract<MetricResult, { ok: false }> | undefined;
    for (const [i, spec] of specs.entries()) {
      const r = await this.computeReplicasForMetric(hpa, spec, specReplicas, selector);
      if (!r.ok) {
        if (invalid === 0) firstFailure = r;
        invalid++;
        continue;
      }
      statuses[i] = r.status;
      if (replicas === 0 || r.replicas > replicas) [replicas, metric] = [r.replicas, r.metric];
    }
    const error = firstFailure ? `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstFailure.error}` : undefined;
    if (firstFailure && (invalid >= specs.length || replicas < specReplicas)) {
      const c = firstFailure.condition;
      this.setCondition(hpa, c.type, c.status, c.reason, c.message);
      return { replicas: -1, metric: '', statuses, error };
    }
    this.setCondition(hpa, 'ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metric}`);
    return { replicas, metric, statuses, error };
  }

  private validateAndParseSelector(hpa: HorizontalPodAutoscaler, selector: string): Selector | string {
    if (selector === '') {
      this.event(hpa, 'Warning', 'SelectorRequired', 'selector is required');
      this.setCondition(hpa, 'ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector");
      return 'selector is required';
    }
    let parsed: Selector;
    try {
      parsed = parseLabelSelector(selector);
    } catch (err) {
      const message = `couldn't convert selector into a corresponding internal selector object: ${(err as Error).message}`;
      this.event(hpa, 'Warning', 'InvalidSelector', message);
      this.setCondition(hpa, 'ScalingActive', 'False', 'InvalidSelector', message);
      return message;
    }
    const namespace = hpa.metadata?.namespace ?? '';
    const name = hpa.metadata?.name ?? '';
    this.selectors.set(metaNamespaceKeyFunc(hpa), { namespace, name, selector: parsed });
    // Two HPAs whose targets select the same pods would fight over them.
    const controlling = new Set<string>();
    for (const pod of this.pods.byIndex(namespaceIndex, namespace)) {
      const labels = pod.metadata?.labels ?? {};
      if (!parsed.matches(labels)) continue;
      for (const other of this.selectors.values()) if (other.namespace === namespace && other.selector.matches(labels)) controlling.add(`{${other.name} ${other.namespace}}`);
    }
    if (controlling.size > 1) {
      const message = `pods by selector ${selector} are controlled by multiple HPAs: [${[...controlling].sort().join(' ')}]`;
      this.event(hpa, 'Warning', 'AmbiguousSelector', message);
      this.setCondition(hpa, 'ScalingActive', 'False', 'AmbiguousSelector', message);
      return message;
    }
    return parsed;
  }

  /** getUnableComputeReplicaCountCondition, with its event. */
  private unable(hpa: HorizontalPodAutoscaler, reason: string, error: string, wrapped: string): MetricResult {
    this.event(hpa, 'Warning', reason, error);
    return { ok: false, error: wrapped, condition: { type: 'ScalingActive', status: 'False', reason, message: `the HPA was unable to compute the replica count: ${error}` } };
  }

  private async computeReplicasForMetric(hpa: HorizontalPodAutoscaler, spec: MetricSpec, specReplicas: number, selector: Selector): Promise<MetricResult> {
    const ns = hpa.metadata?.namespace ?? '';
    switch (spec.type) {
      case 'Resource':
      case 'ContainerResource': {
        const src = spec.type === 'Resource' ? spec.resource! : spec.containerResource!;
        const container = spec.type === 'ContainerResource' ? (spec.containerResource?.container ?? '') : '';
        const r = await this.resourceMetric(specReplicas, src.target, src.name, ns, container, selector, spec.type);
        const reason = spec.type === 'Resource' ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
        const what = spec.type === 'Resource' ? `${src.name} resource metric value` : `${src.name} container resource metric value`;
        if (!r.ok) return this.unable(hpa, reason, r.error, `failed to get ${what}: ${r.error}`);
        const status: MetricStatus =
          spec.type === 'Resource' ? { type: 'Resource', resource: { name: src.name, current: r.current } } : { type: 'ContainerResource', containerResource: { name: src.name, container, current: r.current } };
        return { ok: true, replicas: r.replicas, metric: r.metric, timestamp: r.timestamp, status };
      }
      case 'Pods': {
        const name = spec.pods?.metric.name ?? '';
        const error = `unable to get metric ${name}: unable to fetch metrics from custom metrics API: the server could not find the requested resource (get pods.custom.metrics.k8s.io *)`;
        return this.unable(hpa, 'FailedGetPodsMetric', error, `failed to get pods metric value: ${error}`);
      }
      case 'Object': {
        const name = spec.object?.metric.name ?? '';
        const kind = spec.object?.describedObject.kind ?? '';
        const error = `unable to get metric ${name}: ${kind} on ${ns} ${spec.object?.describedObject.name ?? ''}/unable to fetch metrics from custom metrics API: the server could not find the requested resource`;
        return this.unable(hpa, 'FailedGetObjectMetric', error, `failed to get object metric value: ${error}`);
      }
      case 'External': {
        const name = spec.external?.metric.name ?? '';
        const error = `unable to get external metric ${ns}/${name}/nil: unable to fetch metrics from external metrics API: the server could not find the requested resource (get ${name}.external.metrics.k8s.io)`;
        return this.unable(hpa, 'FailedGetExternalMetric', error, `failed to get external metric value: ${error}`);
      }
      default: {
        const error = `unknown metric source type "${spec.type}"`;
        return this.unable(hpa, 'InvalidMetricSourceType', error, error);
      }
    }
  }

  /** computeStatusForResourceMetricGeneric with the replica calculator. */
  private async resourceMetric(
    currentReplicas: number,
    target: MetricTarget,
    resource: string,
    namespace: string,
    container: string,
    selector: Selector,
    sourceType: 'Resource' | 'ContainerResource',
  ): Promise<{ ok: true; replicas: number; current: MetricValueStatus; metric: string; timestamp: number } | { ok: false; error: string }> {
    const calc: ReplicaCalculatorOptions = { now: this.opts.clock.now(), tolerance: this.opts.tolerance };
    const pods = this.pods.byIndex(namespaceIndex, namespace).filter((p) => selector.matches(p.metadata?.labels ?? {}));
    if (target.averageValue != null) {
      const fetched = await this.fetch(resource, namespace, selector, container);
      if (typeof fetched === 'string') return { ok: false, error: `failed to get ${resource} usage: ${fetched}` };
      const r = plainMetricReplicas(currentReplicas, Number(Quantity.parse(String(target.averageValue)).milliValue()), resource, pods, fetched.metrics, calc);
      if (!r.ok) return { ok: false, error: `failed to get ${resource} usage: ${r.error}` };
      return { ok: true, replicas: r.replicas, current: { averageValue: milliQuantity(r.usage) }, metric: `${resource} resource`, timestamp: fetched.timestamp };
    }
    if (target.averageUtilization == null) {
      return { ok: false, error: 'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set' };
    }
    const fetched = await this.fetch(resource, namespace, selector, container);
    if (typeof fetched === 'string') return { ok: false, error: `failed to get ${resource} utilization: ${fetched}` };
    const r = resourceReplicas(currentReplicas, target.averageUtilization, resource, container, pods, fetched.metrics, calc);
    if (!r.ok) return { ok: false, error: `failed to get ${resource} utilization: ${r.error}` };
    const metric = sourceType === 'ContainerResource' ? `${resource} container resource utilization (percentage of request)` : `${resource} resource utilization (percentage of request)`;
    return {
      ok: true,
      replicas: r.replicas,
      current: { averageUtilization: r.utilization, averageValue: milliQuantity(r.rawUtilization) },
      metric,
      timestamp: fetched.timestamp,
    };
  }

  private async fetch(resource: string, namespace: string, selector: Selector, container: string) {
    try {
      return await this.metrics.getResourceMetric(resource, namespace, selector.toString(), container);
    } catch (err) {
      return `unable to get metrics for resource ${resource}: ${(err as Error).message}`;
    }
  }
}

