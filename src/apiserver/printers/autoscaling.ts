// HorizontalPodAutoscaler: upstream's columns, with TARGETS as its formatHPAMetrics; a v1 object
// is printed as its v2 form, as upstream prints the internal one.
import type { HorizontalPodAutoscaler } from '../../api/types.js';
import { hpaV2FromV1 } from '../../api/autoscaling.js';
import { age, ageColumn, column, nameColumn, printer } from './printer.js';

type Spec = NonNullable<HorizontalPodAutoscaler['spec']>;
type MetricSpec = NonNullable<Spec['metrics']>[number];
type MetricStatus = NonNullable<NonNullable<HorizontalPodAutoscaler['status']>['currentMetrics']>[number];

const maxShown = 2;
const unknown = '<unknown>';

/** One metric's "current/target" text. */
function formatMetric(spec: MetricSpec, status: MetricStatus | undefined): string {
  switch (spec.type) {
    case 'External': {
      const t = spec.external?.target;
      if (t?.averageValue != null) return `${status?.external?.current?.averageValue ?? unknown}/${t.averageValue} (avg)`;
      return `${status?.external ? (status.external.current?.value ?? '0') : unknown}/${t?.value ?? '0'}`;
    }
    case 'Pods':
      return `${status?.pods ? (status.pods.current?.averageValue ?? '0') : unknown}/${spec.pods?.target?.averageValue ?? '0'}`;
    case 'Object': {
      const t = spec.object?.target;
      if (t?.averageValue != null) return `${status?.object?.current?.averageValue ?? unknown}/${t.averageValue} (avg)`;
      return `${status?.object ? (status.object.current?.value ?? '0') : unknown}/${t?.value ?? '0'}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const src = spec.type === 'Resource' ? spec.resource : spec.containerResource;
      const cur = spec.type === 'Resource' ? status?.resource : status?.containerResource;
      const name = src?.name ?? '';
      if (src?.target?.averageValue != null) return `${name}: ${cur ? (cur.current?.averageValue ?? '0') : unknown}/${src.target.averageValue}`;
      const current = cur?.current?.averageUtilization != null ? `${cur.current.averageUtilization}%` : unknown;
      const target = src?.target?.averageUtilization != null ? `${src.target.averageUtilization}%` : '<auto>';
      return `${name}: ${current}/${target}`;
    }
    default:
      return '<unknown type>';
  }
}

/** formatHPAMetrics: the first two metrics, then "+ N more...". */
export function formatHPAMetrics(specs: MetricSpec[] | undefined, statuses: MetricStatus[] | undefined): string {
  if (!specs || specs.length === 0) return '<none>';
  const shown = specs.slice(0, maxShown).map((s, i) => formatMetric(s, statuses?.[i]));
  const text = shown.join(', ');
  return specs.length > maxShown ? `${text} + ${specs.length - maxShown} more...` : text;
}

export const horizontalPodAutoscalerPrinter = printer<HorizontalPodAutoscaler>(
  [
    nameColumn,
    column(
      'Reference',
      'string',
      'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
    ),
    column(
      'Targets',
      'string',
      'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.',
    ),
    column(
      'MinPods',
      'string',
      'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.',
    ),
    column('MaxPods', 'integer', 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.'),
    column('Replicas', 'integer', 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.'),
    ageColumn,
  ],
  (obj, now) => {
    const hpa = ((obj.apiVersion as string | undefined) === 'autoscaling/v1' ? hpaV2FromV1(obj) : obj) as HorizontalPodAutoscaler;
    const spec = hpa.spec;
    return {
      cells: [
        obj.metadata.name,
        `${spec?.scaleTargetRef?.kind ?? ''}/${spec?.scaleTargetRef?.name ?? ''}`,
        formatHPAMetrics(spec?.metrics, hpa.status?.currentMetrics),
        spec?.minReplicas != null ? String(spec.minReplicas) : '<unset>',
        spec?.maxReplicas ?? 0,
        hpa.status?.currentReplicas ?? 0,
        age(obj, now),
      ],
    };
  },
);
