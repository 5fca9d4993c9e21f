// HorizontalPodAutoscaler defaults as upstream's autoscaling/v2 and v1 defaulters: minReplicas 1;
// v2 also an 80 % CPU target without metrics and the behavior's unset rules filled in.
import { defaultCPUUtilization } from '../autoscaling.js';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy: string;
  policies: { type: string; value: number; periodSeconds: number }[];
}

/** Scale-up: no window, the larger of 4 pods or 100 % every 15 s. */
const scaleUpDefaults = (): ScalingRules => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
/** Scale-down: 100 % every 15 s; the window stays unset (the controller's --horizontal-pod-autoscaler-downscale-stabilization). */
const scaleDownDefaults = (): ScalingRules => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** copyHPAScalingRules: what the user set over the defaults. */
function fillRules(rules: unknown, defaults: ScalingRules): Obj {
  const out: Obj = { ...defaults };
  if (!isObj(rules)) return out;
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) if (rules[k] != null) out[k] = rules[k];
  return out;
}

export function defaultHorizontalPodAutoscaler(hpa: Obj): void {
  if (!isObj(hpa.spec)) hpa.spec = {};
  const spec = hpa.spec;
  if (spec.minReplicas == null) spec.minReplicas = 1;
  // v1 gets its CPU target in the conversion, which knows the metrics kept in annotations.
  if (hpa.apiVersion === 'autoscaling/v1') return;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: defaultCPUUtilization } } }];
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = fillRules(spec.behavior.scaleUp, scaleUpDefaults());
    spec.behavior.scaleDown = fillRules(spec.behavior.scaleDown, scaleDownDefaults());
  }
}
