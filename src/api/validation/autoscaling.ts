// HorizontalPodAutoscaler validation as upstream 1.33's pkg/apis/autoscaling/validation, on the
// autoscaling/v2 form (a v1 object is validated as its conversion, as upstream validates internal).
import { forbidden, invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { Quantity } from '../quantity.js';
import { arr, isObj, str, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';
import { validateContainerResourceName, validateDNS1123Label } from './podspec.js';

const maxPeriodSeconds = 1800;
const maxStabilizationWindowSeconds = 3600;
const metricSourceTypes = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const selectPolicies = ['Disabled', 'Max', 'Min'];
const policyTypes = ['Percent', 'Pods'];
const specPath = Path.root('spec');

/** path.IsValidPathSegmentName. */
function pathSegmentErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

function validateCrossVersionObjectReference(ref: unknown, p: Path): FieldError[] {
  const r = isObj(ref) ? ref : {};
  const errs: FieldError[] = [];
  for (const k of ['kind', 'name']) {
    const v = str(r[k]);
    if (v === '') errs.push(required(p.child(k), ''));
    else errs.push(...pathSegmentErrors(v).map((m) => invalid(p.child(k), v, m)));
  }
  return errs;
}

/** A quantity as upstream's Quantity String(), or undefined when it does not parse. */
function parsed(v: unknown): Quantity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  try {
    return Quantity.parse(String(v));
  } catch {
    return undefined;
  }
}

function validateMetricTarget(t: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(t.type);
  if (type === '') errs.push(required(p.child('type'), 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue') errs.push(invalid(p.child('type'), type, 'must be either Utilization, Value, or AverageValue'));
  for (const k of ['value', 'averageValue']) {
    if (t[k] == null) continue;
    const q = parsed(t[k]);
    if (q && q.sign() !== 1) errs.push(invalid(p.child(k), rawValue(q.toString()), 'must be positive'));
  }
  if (typeof t.averageUtilization === 'number' && t.averageUtilization < 1) errs.push(invalid(p.child('averageUtilization'), t.averageUtilization, 'must be greater than 0'));
  return errs;
}

function validateMetricIdentifier(id: unknown, p: Path): FieldError[] {
  const name = str(isObj(id) ? id.name : undefined);
  if (name === '') return [required(p.child('name'), 'must specify a metric name')];
  return pathSegmentErrors(name).map((m) => invalid(p.child('name'), name, m));
}

const target = (src: Obj): Obj => (isObj(src.target) ? src.target : {});

function validateSource(kind: string, src: Obj, p: Path): FieldError[] {
  const t = target(src);
  const tp = p.child('target');
  const errs: FieldError[] = [];
  switch (kind) {
    case 'object':
      errs.push(...validateCrossVersionObjectReference(src.describedObject, p.child('describedObject')), ...validateMetricIdentifier(src.metric, p.child('metric')), ...validateMetricTarget(t, tp));
      if (t.value == null && t.averageValue == null) errs.push(required(tp.child('averageValue'), 'must set either a target value or averageValue'));
      break;
    case 'external':
      errs.push(...validateMetricIdentifier(src.metric, p.child('metric')), ...validateMetricTarget(t, tp));
      if (t.value == null && t.averageValue == null) errs.push(required(tp.child('averageValue'), 'must set either a target value for metric or a per-pod target'));
      if (t.value != null && t.averageValue != null) errs.push(forbidden(tp.child('value'), 'may not set both a target value for metric and a per-pod target'));
      break;
    case 'pods':
      errs.push(...validateMetricIdentifier(src.metric, p.child('metric')), ...validateMetricTarget(t, tp));
      if (t.averageValue == null) errs.push(required(tp.child('averageValue'), 'must specify a positive target averageValue'));
      break;
    case 'resource':
    case 'containerResource': {
      const name = str(src.name);
      if (name === '') errs.push(required(p.child('name'), 'must specify a resource name'));
      else if (kind === 'containerResource') errs.push(...validateContainerResourceName(name, p.child('name')));
      if (kind === 'containerResource') {
        const container = str(src.container);
        if (container === '') errs.push(required(p.child('container'), 'must specify a container'));
        else errs.push(...validateDNS1123Label(container, p.child('container')));
      }
      errs.push(...validateMetricTarget(t, tp));
      if (t.averageUtilization == null && t.averageValue == null) errs.push(required(tp.child('averageUtilization'), 'must set either a target raw value or a target utilization'));
      if (t.averageUtilization != null && t.averageValue != null) errs.push(forbidden(tp.child('averageValue'), 'may not set both a target raw value and a target utilization'));
      break;
    }
  }
  return errs;
}

/** The member each source type fills. */
const sourceField: Record<string, string> = { Object: 'object', Pods: 'pods', Resource: 'resource', ContainerResource: 'containerResource', External: 'external' };

function validateMetricSpec(m: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(m.type);
  if (type === '') errs.push(required(p.child('type'), 'must specify a metric source type'));
  if (!metricSourceTypes.includes(type)) errs.push(notSupported(p.child('type'), type, metricSourceTypes));
  // Only the first source present (in upstream's order) is validated further.
  const present = ['object', 'external', 'pods', 'resource', 'containerResource'].filter((k) => isObj(m[k]));
  if (present.length > 0) errs.push(...validateSource(present[0]!, m[present[0]!], p.child(present[0]!)));
  const expected = sourceField[type];
  if (expected) {
    if (!isObj(m[expected])) errs.push(required(p.child(expected), 'must populate information for the given metric source'));
  } else errs.push(notSupported(p.child('type'), type, metricSourceTypes));
  if (present.length !== 1) for (const k of present.filter((k) => k !== expected)) errs.push(forbidden(p.child(k), 'must populate the given metric source only'));
  return errs;
}

function validateScalingRules(rules: unknown, p: Path): FieldError[] {
  if (!isObj(rules)) return [];
  const errs: FieldError[] = [];
  const w = rules.stabilizationWindowSeconds;
  if (typeof w === 'number' && w < 0) errs.push(invalid(p.child('stabilizationWindowSeconds'), w, 'must be greater than or equal to zero'));
  if (typeof w === 'number' && w > maxStabilizationWindowSeconds) {
    errs.push(invalid(p.child('stabilizationWindowSeconds'), w, `must be less than or equal to ${maxStabilizationWindowSeconds}`));
  }
  if (rules.selectPolicy != null && !selectPolicies.includes(str(rules.selectPolicy))) errs.push(notSupported(p.child('selectPolicy'), str(rules.selectPolicy), selectPolicies));
  const pp = p.child('policies');
  const policies = arr(rules.policies);
  if (policies.length === 0) errs.push(required(pp, 'must specify at least one Policy'));
  policies.forEach((policy, i) => {
    const ip = pp.index(i);
    const pol = isObj(policy) ? policy : {};
    if (!policyTypes.includes(str(pol.type))) errs.push(notSupported(ip.child('type'), str(pol.type), policyTypes));
    const value = typeof pol.value === 'number' ? pol.value : 0;
    if (value <= 0) errs.push(invalid(ip.child('value'), value, 'must be greater than zero'));
    const period = typeof pol.periodSeconds === 'number' ? pol.periodSeconds : 0;
    if (period <= 0) errs.push(invalid(ip.child('periodSeconds'), period, 'must be greater than zero'));
    if (period > maxPeriodSeconds) errs.push(invalid(ip.child('periodSeconds'), period, `must be less than or equal to ${maxPeriodSeconds}`));
  });
  return errs;
}

/** minReplicasLowerBound is 1 (HPAScaleToZero is alpha, off), 0 for an update of an HPA that already has 0. */
function validateSpec(s: Obj, minReplicasLowerBound: number): FieldError[] {
  const errs: FieldError[] = [];
  const min = typeof s.minReplicas === 'number' ? s.minReplicas : undefined;
  const max = typeof s.maxReplicas === 'number' ? s.maxReplicas : 0;
  if (min !== undefined && min < minReplicasLowerBound) errs.push(invalid(specPath.child('minReplicas'), min, `must be greater than or equal to ${minReplicasLowerBound}`));
  if (max < 1) errs.push(invalid(specPath.child('maxReplicas'), max, 'must be greater than 0'));
  if (min !== undefined && max < min) errs.push(invalid(specPath.child('maxReplicas'), max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateCrossVersionObjectReference(s.scaleTargetRef, specPath.child('scaleTargetRef')));
  const mp = specPath.child('metrics');
  const metrics = arr(s.metrics);
  metrics.forEach((m, i) => errs.push(...validateMetricSpec(isObj(m) ? m : {}, mp.index(i))));
  if (min === 0 && !metrics.some((m) => m?.type === 'Object' || m?.type === 'External')) {
    errs.push(forbidden(mp, 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  if (isObj(s.behavior)) {
    errs.push(...validateScalingRules(s.behavior.scaleUp, specPath.child('behavior', 'scaleUp')), ...validateScalingRules(s.behavior.scaleDown, specPath.child('behavior', 'scaleDown')));
  }
  return errs;
}

const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});

export const validateHorizontalPodAutoscaler = (hpa: Obj): FieldError[] => [...validateObjectMeta(hpa.metadata, true, nameIsDNSSubdomain), ...validateSpec(spec(hpa), 1)];

export function validateHorizontalPodAutoscalerUpdate(hpa: Obj, old: Obj): FieldError[] {
  const bound = spec(old).minReplicas === 0 ? 0 : 1;
  return [...validateObjectMetaUpdate(hpa.metadata, old.metadata), ...validateSpec(spec(hpa), bound)];
}

export function validateHorizontalPodAutoscalerStatusUpdate(hpa: Obj, old: Obj): FieldError[] {
  const st = isObj(hpa.status) ? hpa.status : {};
  const sp = Path.root('status');
  return [
    ...validateObjectMetaUpdate(hpa.metadata, old.metadata),
    ...validateNonnegative(st.currentReplicas, sp.child('currentReplicas')),
    ...validateNonnegative(st.desiredReplicas, sp.child('desiredReplicas')),
  ];
}
