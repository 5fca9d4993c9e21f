import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { HorizontalPodAutoscaler } from 'kubernetes-types/autoscaling/v2.js';
import { FakeClock } from '../../util/clock.js';
import { HorizontalController } from './horizontal.js';
import type { ResourceMetrics, ResourceMetricsClient } from './metrics.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const SYNC = 15_000;
const controllerUser = { name: 'system:serviceaccount:kube-system:horizontal-pod-autoscaler', groups: ['system:authenticated'] };
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Metrics as metrics.k8s.io would give them: per pod name, millicores; or an error. */
class FakeMetrics implements ResourceMetricsClient {
  usage = new Map<string, number>();
  error?: string;
  constructor(private readonly clock: FakeClock) {}
  getResourceMetric(): Promise<ResourceMetrics> {
    if (this.error) return Promise.reject(new Error(this.error));
    const timestamp = this.clock.now() - 5_000;
    return Promise.resolve({ metrics: new Map([...this.usage].map(([name, value]) => [name, { timestamp, windowMs: 15_000, value }])), timestamp });
  }
}

class Cluster extends ControllerHarness<HorizontalController> {
  readonly metrics = new FakeMetrics(this.clock);

  constructor() {
    super({ user: controllerUser, now: NOW, steps: 20, startSteps: 10 });
  }

  protected newController(deps: ControllerDeps): HorizontalController {
    return new HorizontalController({ ...deps, metrics: this.metrics, recorder: this.recorder });
  }

  /** One sync period and the writes after it. */
  async period(): Promise<void> {
    await this.clock.advance(SYNC - 1000);
    await this.settle();
  }

  deployment = () => this.admin.resource<Deployment>('apps', 'v1', 'deployments').namespace('ns');
  hpa = () => this.admin.resource<HorizontalPodAutoscaler>('autoscaling', 'v2', 'horizontalpodautoscalers').namespace('ns');

  async web(replicas: number, pods: number): Promise<void> {
    await this.deployment().create({
      metadata: { name: 'web' },
      spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    for (let i = 0; i < pods; i++) {
      const name = `web-${i}`;
      const pod = await this.admin.resource('pods').namespace('ns').create({
        metadata: { name, labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' } } }] },
      } as Pod);
      const started = iso(NOW - 10 * 60_000);
      await this.admin.resource('pods').namespace('ns').updateStatus({
        ...pod,
        status: { ...pod.status, phase: 'Running', startTime: started, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }] },
      });
    }
  }

  async autoscale(extra: Partial<HorizontalPodAutoscaler['spec']> = {}): Promise<void> {
    await this.hpa().create({
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        ...extra,
      },
    });
  }

  async replicas(): Promise<number> {
    return (await this.deployment().get('web')).spec?.replicas ?? 0;
  }

  condition = (hpa: HorizontalPodAutoscaler, type: string) => {
    const c = hpa.status?.conditions?.find((x) => x.type === type);
    return c && [c.status, c.reason, c.message];
  };
}

describe('HorizontalPodAutoscaler controller', () => {
  it('scales up on high CPU, holds a scale-down for the 300 s window, then scales down', async () => {
    const c = await new Cluster().start();
    try {
      await c.web(2, 2);
      c.metrics.usage = new Map([['web-0', 90], ['web-1', 90]]);
      await c.autoscale();
      await c.period();
      assert.equal(await c.replicas(), 4, '90 % of requests against a 50 % target: ceil(1.8 × 2)');
      let hpa = await c.hpa().get('web');
      assert.equal(hpa.status?.currentReplicas, 2);
      assert.equal(hpa.status?.desiredReplicas, 4);
      assert.deepEqual(hpa.status?.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '90m' } } }]);
      assert.ok(hpa.status?.lastScaleTime);
      assert.deepEqual(c.condition(hpa, 'AbleToScale'), ['True', 'SucceededRescale', 'the HPA controller was able to update the target scale to 4']);
      assert.deepEqual(c.condition(hpa, 'ScalingActive'), ['True', 'ValidMetricFound', 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)']);
      assert.deepEqual(c.condition(hpa, 'ScalingLimited'), ['False', 'DesiredWithinRange', 'the desired count is within the acceptable range']);
      assert.deepEqual(
        c.recorder.events.filter((e) => e.reason === 'SuccessfulRescale').map((e) => e.message),
        ['New size: 4; reason: cpu resource utilization (percentage of request) above target'],
      );

      // Load drops: the recommendation of 1 waits out the scale-down stabilization window.
      c.metrics.usage = new Map([['web-0', 10], ['web-1', 10]]);
      await c.period();
      assert.equal(await c.replicas(), 4);
      hpa = await c.hpa().get('web');
      assert.deepEqual(c.condition(hpa, 'AbleToScale'), ['True', 'ScaleDownStabilized', 'recent recommendations were higher than current one, applying the highest recent recommendation']);
      for (let i = 0; i < 20 && (await c.replicas()) === 4; i++) await c.period();
      assert.equal(await c.replicas(), 1);
      assert.ok(c.clock.now() - NOW >= 300_000, 'not before the window has passed');
      assert.equal(c.recorder.events.filter((e) => e.reason === 'SuccessfulRescale').at(-1)?.message, 'New size: 1; reason: All metrics below target');
    } finally {
      await c.stop();
    }
  });

  it('without metrics: ScalingActive False with upstream reason and message, the target left alone', async () => {
    const c = await new Cluster().start();
    try {
      await c.web(2, 2);
      c.metrics.error = 'no metrics returned from resource metrics API';
      await c.autoscale();
      await c.period();
      assert.equal(await c.replicas(), 2);
      const hpa = await c.hpa().get('web');
      assert.deepEqual(c.condition(hpa, 'AbleToScale'), ['True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale"]);
      assert.deepEqual(c.condition(hpa, 'ScalingActive'), [
        'False',
        'FailedGetResourceMetric',
        'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
      ]);
      assert.deepEqual(hpa.status?.currentMetrics, [{ type: '' }]);
      assert.equal(hpa.status?.currentReplicas, 2);
      assert.deepEqual(
        c.recorder.events.filter((e) => e.reason === 'FailedComputeMetricsReplicas').map((e) => e.message)[0],
        'invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
      );
    } finally {
      await c.stop();
    }
  });

  it('bounds: a target above maxReplicas is brought down, a missing target is FailedGetScale', async () => {
    const c = await new Cluster().start();
    try {
      await c.web(8, 0);
      await c.autoscale();
      await c.period();
      assert.equal(await c.replicas(), 5);
      assert.equal(c.recorder.events.find((e) => e.reason === 'SuccessfulRescale')?.message, 'New size: 5; reason: Current number of replicas above Spec.MaxReplicas');
      await c.hpa().create({ metadata: { name: 'ghost' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'ghost' }, maxReplicas: 3 } });
      await c.period();
      const ghost = await c.hpa().get('ghost');
      assert.deepEqual(c.condition(ghost, 'AbleToScale'), ['False', 'FailedGetScale', 'the HPA controller was unable to get the target\'s current scale: deployments.apps "ghost" not found']);
    } finally {
      await c.stop();
    }
  });
});

describe('HorizontalPodAutoscaler controller: two HPAs on the same pods', () => {
  it('reports AmbiguousSelector and scales neither', async () => {
    const c = await new Cluster().start();
    try {
      await c.web(2, 2);
      c.metrics.usage = new Map([['web-0', 90], ['web-1', 90]]);
      await c.autoscale();
      await c.period();
      assert.equal(await c.replicas(), 4);
      await c.hpa().create({ metadata: { name: 'web2' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 10 } });
      await c.period();
      await c.period();
      const web2 = await c.hpa().get('web2');
      assert.deepEqual(c.condition(web2, 'ScalingActive'), ['False', 'AmbiguousSelector', 'pods by selector app=web are controlled by multiple HPAs: [{web ns} {web2 ns}]']);
      assert.deepEqual(c.condition(await c.hpa().get('web'), 'ScalingActive')?.slice(0, 2), ['False', 'AmbiguousSelector']);
      c.metrics.usage = new Map([['web-0', 200], ['web-1', 200]]);
      await c.period();
      assert.equal(await c.replicas(), 4, 'neither scales the target');
    } finally {
      await c.stop();
    }
  });
});
