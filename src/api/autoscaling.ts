// autoscaling/v1 HorizontalPodAutoscaler as a view of the stored autoscaling/v2 object, as upstream's
// pkg/apis/autoscaling/v1 conversion: the CPU utilization target and current value are v1's own
// fields, everything else v1 cannot hold travels in annotations (the metrics in v1's old metric
// format, the behavior as Go marshals the internal type, the conditions).
import { checkObject } from './decode.js';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

export const metricSpecsAnnotation = 'autoscaling.alpha.kubernetes.io/metrics';
export const metricStatusesAnnotation = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const behaviorSpecsAnnotation = 'autoscaling.alpha.kubernetes.io/behavior';
export const conditionsAnnotation = 'autoscaling.alpha.kubernetes.io/conditions';
const roundTripAnnotations = [metricSpecsAnnotation, metricStatusesAnnotation, behaviorSpecsAnnotation, conditionsAnnotation];

/** The utilization target a v2 HPA without metrics gets (and v1's implicit one). */
export const defaultCPUUtilization = 80;

/** Drops undefined members so JSON and deep comparisons see only what is set. */
function compact(o: Obj): Obj {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/** A required Quantity of Go's v1 types: the zero value marshals as "0". */
const quantity = (v: unknown) => (v === undefined || v === null ? '0' : v);

function metricSpecToV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const t = m.object.target ?? {};
    out.object = compact({
      target: m.object.describedObject ?? { kind: '', name: '' },
      metricName: m.object.metric?.name ?? '',
      targetValue: quantity(t.value),
      selector: m.object.metric?.selector,
      averageValue: t.averageValue,
    });
  }
  if (isObj(m.pods)) {
    out.pods = compact({ metricName: m.pods.metric?.name ?? '', targetAverageValue: quantity(m.pods.target?.averageValue), selector: m.pods.metric?.selector });
  }
  if (isObj(m.resource)) {
    out.resource = compact({ name: m.resource.name ?? '', targetAverageUtilization: m.resource.target?.averageUtilization, targetAverageValue: m.resource.target?.averageValue });
  }
  if (isObj(m.containerResource)) {
    const c = m.containerResource;
    out.containerResource = compact({
      name: c.name ?? '',
      targetAverageUtilization: c.target?.averageUtilization,
      targetAverageValue: c.target?.averageValue,
      container: c.container ?? '',
    });
  }
  if (isObj(m.external)) {
    out.external = compact({
      metricName: m.external.metric?.name ?? '',
      metricSelector: m.external.metric?.selector,
      targetValue: m.external.target?.value,
      targetAverageValue: m.external.target?.averageValue,
    });
  }
  return out;
}

const metric = (name: unknown, selector: unknown) => compact({ name: name ?? '', selector });
/** A v1 resource target: utilization when a percentage is given, else an average value. */
const resourceTarget = (utilization: unknown, averageValue: unknown) =>
  utilization != null ? compact({ type: 'Utilization', averageUtilization: utilization, averageValue }) : compact({ type: 'AverageValue', averageValue });

function metricSpecFromV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = {
      describedObject: o.target ?? { kind: '', name: '' },
      metric: metric(o.metricName, o.selector),
      target: o.averageValue != null ? { type: 'AverageValue', averageValue: o.averageValue } : { type: 'Value', value: quantity(o.targetValue) },
    };
  }
  if (isObj(m.pods)) out.pods = { metric: metric(m.pods.metricName, m.pods.selector), target: { type: 'AverageValue', averageValue: quantity(m.pods.targetAverageValue) } };
  if (isObj(m.resource)) out.resource = { name: m.resource.name ?? '', target: resourceTarget(m.resource.targetAverageUtilization, m.resource.targetAverageValue) };
  if (isObj(m.containerResource)) {
    const c = m.containerResource;
    out.containerResource = { name: c.name ?? '', container: c.container ?? '', target: resourceTarget(c.targetAverageUtilization, c.targetAverageValue) };
  }
  if (isObj(m.external)) {
    const e = m.external;
    out.external = {
      metric: metric(e.metricName, e.metricSelector),
      target: e.targetValue != null ? compact({ type: 'Value', value: e.targetValue, averageValue: e.targetAverageValue }) : compact({ type: 'AverageValue', averageValue: e.targetAverageValue }),
    };
  }
  return out;
}

function metricStatusToV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const c = m.object.current ?? {};
    out.object = compact({
      target: m.object.describedObject ?? { kind: '', name: '' },
      metricName: m.object.metric?.name ?? '',
      currentValue: quantity(c.value),
      selector: m.object.metric?.selector,
      averageValue: c.averageValue,
    });
  }
  if (isObj(m.pods)) {
    out.pods = compact({ metricName: m.pods.metric?.name ?? '', currentAverageValue: quantity(m.pods.current?.averageValue), selector: m.pods.metric?.selector });
  }
  if (isObj(m.resource)) {
    const c = m.resource.current ?? {};
    out.resource = compact({ name: m.resource.name ?? '', currentAverageUtilization: c.averageUtilization, currentAverageValue: quantity(c.averageValue) });
  }
  if (isObj(m.containerResource)) {
    const r = m.containerResource;
    out.containerResource = compact({
      name: r.name ?? '',
      currentAverageUtilization: r.current?.averageUtilization,
      currentAverageValue: quantity(r.current?.averageValue),
      container: r.container ?? '',
    });
  }
  if (isObj(m.external)) {
    out.external = compact({
      metricName: m.external.metric?.name ?? '',
      metricSelector: m.external.metric?.selector,
      currentValue: quantity(m.external.current?.value),
      currentAverageValue: m.external.current?.averageValue,
    });
  }
  return out;
}

function metricStatusFromV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = { describedObject: o.target ?? { kind: '', name: '' }, metric: metric(o.metricName, o.selector), current: compact({ value: quantity(o.currentValue), averageValue: o.averageValue }) };
  }
  if (isObj(m.pods)) out.pods = { metric: metric(m.pods.metricName, m.pods.selector), current: { averageValue: quantity(m.pods.currentAverageValue) } };
  if (isObj(m.resource)) {
    out.resource = { name: m.resource.name ?? '', current: compact({ averageValue: quantity(m.resource.currentAverageValue), averageUtilization: m.resource.currentAverageUtilization }) };
  }
  if (isObj(m.containerResource)) {
    const c = m.containerResource;
    out.containerResource = {
      name: c.name ?? '',
      container: c.container ?? '',
      current: compact({ averageValue: quantity(c.currentAverageValue), averageUtilization: c.currentAverageUtilization }),
    };
  }
  if (isObj(m.external)) {
    const e = m.external;
    out.external = { metric: metric(e.metricName, e.metricSelector), current: compact({ value: quantity(e.currentValue), averageValue: e.currentAverageValue }) };
  }
  return out;
}

/** The internal behavior type has no JSON tags: Go marshals its field names as they are. */
function goScalingRules(r: unknown): Obj | null {
  if (!isObj(r)) return null;
  return {
    StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null,
    SelectPolicy: r.selectPolicy ?? null,
    Policies: Array.isArray(r.policies) ? list(r.policies).map((p) => ({ Type: p.type ?? '', Value: p.value ?? 0, PeriodSeconds: p.periodSeconds ?? 0 })) : null,
    Tolerance: r.tolerance ?? null,
  };
}

function scalingRulesFromGo(r: unknown): Obj | undefined {
  if (!isObj(r)) return undefined;
  return compact({
    stabilizationWindowSeconds: r.StabilizationWindowSeconds ?? undefined,
    selectPolicy: r.SelectPolicy ?? undefined,
    policies: Array.isArray(r.Policies) ? list(r.Policies).map((p) => ({ type: p.Type, value: p.Value, periodSeconds: p.PeriodSeconds })) : undefined,
    tolerance: r.Tolerance ?? undefined,
  });
}

const isCPU = (r: unknown): r is Obj => isObj(r) && r.name === 'cpu';

/** v2 (stored) → v1 (served). */
export function hpaV1FromV2(hpa: Obj): Obj {
  const spec = isObj(hpa.spec) ? hpa.spec : {};
  const status = isObj(hpa.status) ? hpa.status : undefined;
  const annotations: Record<string, string> = { ...(isObj(hpa.metadata?.annotations) ? hpa.metadata.annotations : {}) };
  let cpu: number | undefined;
  const others: Obj[] = [];
  for (const m of list(spec.metrics)) {
    if (m.type === 'Resource' && isCPU(m.resource) && m.resource.target?.averageUtilization != null) cpu = m.resource.target.averageUtilization;
    else others.push(metricSpecToV1(m));
  }
  if (others.length > 0) annotations[metricSpecsAnnotation] = JSON.stringify(others);
  if (spec.behavior != null) annotations[behaviorSpecsAnnotation] = JSON.stringify({ ScaleUp: goScalingRules(spec.behavior.scaleUp), ScaleDown: goScalingRules(spec.behavior.scaleDown) });
  let currentCPU: number | undefined;
  if (status) {
    const current = list(status.currentMetrics);
    for (const m of current) if (m.type === 'Resource' && isCPU(m.resource) && m.resource.current?.averageUtilization != null) currentCPU = m.resource.current.averageUtilization;
    if (current.length > 0) annotations[metricStatusesAnnotation] = JSON.stringify(current.map(metricStatusToV1));
    const conditions = list(status.conditions);
    if (conditions.length > 0) {
      annotations[conditionsAnnotation] = JSON.stringify(
        conditions.map((c) => compact({ type: c.type, status: c.status, lastTransitionTime: c.lastTransitionTime ?? null, reason: c.reason || undefined, message: c.message || undefined })),
      );
    }
  }
  const metadata = { ...(hpa.metadata ?? {}) };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const out: Obj = {
    ...hpa,
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: compact({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, targetCPUUtilizationPercentage: cpu }),
  };
  // v1's replica counts are not omitempty: a new HPA shows them as 0.
  out.status = compact({
    observedGeneration: status?.observedGeneration,
    lastScaleTime: status?.lastScaleTime,
    currentReplicas: status?.currentReplicas ?? 0,
    desiredReplicas: status?.desiredReplicas ?? 0,
    currentCPUUtilizationPercentage: currentCPU,
  });
  return out;
}

function parseAnnotation(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/**
 * The v2 status as Go encodes it: desiredReplicas and currentMetrics are not omitempty (a new HPA
 * shows `currentMetrics: null` and `desiredReplicas: 0`), currentReplicas is.
 */
export function hpaV2Served(hpa: Obj): Obj {
  const status: Obj = isObj(hpa.status) ? { ...hpa.status } : {};
  if (!status.currentReplicas) delete status.currentReplicas;
  status.desiredReplicas ??= 0;
  if (!Array.isArray(status.currentMetrics)) status.currentMetrics = null;
  return { ...hpa, status };
}

/** A list annotation: every item an object, or undefined (as Go's Unmarshal into a typed slice fails). */
const objects = (v: unknown): Obj[] | undefined => (Array.isArray(v) && v.every(isObj) ? v : undefined);

/** Whether part (a piece of a v2 HPA) has the v2 types, as Go's Unmarshal of the annotation would need. */
function typed(part: Obj): boolean {
  try {
    checkObject('autoscaling', 'v2', 'HorizontalPodAutoscaler', structuredClone(part), 'Ignore');
    return true;
  } catch {
    return false;
  }
}

/** v1 (a client's) → v2 (stored). Annotations that do not unmarshal are ignored, as upstream ignores them. */
export function hpaV2FromV1(hpa: Obj): Obj {
  const spec = isObj(hpa.spec) ? hpa.spec : {};
  const annotations: Record<string, string> = { ...(isObj(hpa.metadata?.annotations) ? hpa.metadata.annotations : {}) };
  const metrics: Obj[] = [];
  const others = objects(parseAnnotation(annotations[metricSpecsAnnotation]))?.map(metricSpecFromV1);
  if (others && typed({ spec: { metrics: others } })) metrics.push(...others);
  if (spec.targetCPUUtilizationPercentage != null) {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  // v1's implicit CPU target, made explicit here where every metric is known.
  if (metrics.length === 0) metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: defaultCPUUtilization } } });
  const outSpec: Obj = compact({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, metrics });
  const behavior = parseAnnotation(annotations[behaviorSpecsAnnotation]);
  if (isObj(behavior)) {
    const b = compact({ scaleUp: scalingRulesFromGo(behavior.ScaleUp), scaleDown: scalingRulesFromGo(behavior.ScaleDown) });
    if (Object.keys(b).length > 0 && typed({ spec: { behavior: b } })) outSpec.behavior = b;
  }
  const out: Obj = { ...hpa, apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', spec: outSpec };
  if (isObj(hpa.status)) {
    const s = hpa.status;
    const st: Obj = compact({ observedGeneration: s.observedGeneration, lastScaleTime: s.lastScaleTime, currentReplicas: s.currentReplicas ?? 0, desiredReplicas: s.desiredReplicas ?? 0 });
    const current = objects(parseAnnotation(annotations[metricStatusesAnnotation]))?.map(metricStatusFromV1);
    if (current && typed({ status: { currentMetrics: current } })) st.currentMetrics = current;
    else if (s.currentCPUUtilizationPercentage != null) {
      st.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: s.currentCPUUtilizationPercentage } } }];
    }
    const conditions = objects(parseAnnotation(annotations[conditionsAnnotation]));
    if (conditions && typed({ status: { conditions } })) st.conditions = conditions;
    out.status = st;
  }
  for (const a of roundTripAnnotations) delete annotations[a];
  const metadata = { ...(hpa.metadata ?? {}) };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  out.metadata = metadata;
  return out;
}
