// Jobs and HorizontalPodAutoscalers through `kite server` and the real kubectl: Job validation's
// refusals and `kubectl get jobs`; `kubectl autoscale`, `kubectl get hpa` in v2 and the v1 view, and
// the HPA controller's conditions. No `kite sim`: the simulated pods report no metrics, so the
// controller is seen here without metrics (as a cluster without metrics-server); its scaling is
// tested against FakeApi in src/controllers/podautoscaler/horizontal.test.ts and on real containers
// in hpa-containerd.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

/**
 * A Job with the fields the Job defaults and selector generation would set written out, so it does
 * not depend on them.
 */
const job = (name: string, extraSpec = '', restartPolicy = 'Never') => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  namespace: default
spec:
  manualSelector: true
  selector:
    matchLabels:
      app: ${name}
  parallelism: 1
  completions: 1
  backoffLimit: 6
${extraSpec}  template:
    metadata:
      labels:
        app: ${name}
    spec:
      restartPolicy: ${restartPolicy}
      terminationGracePeriodSeconds: 30
      dnsPolicy: ClusterFirst
      schedulerName: default-scheduler
      securityContext: {}
      containers:
      - name: pi
        image: perl:5.34
        command: ['perl', '-Mbignum=bpi', '-wle', 'print bpi(20)']
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
`;

interface HpaCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

describe('Jobs and HorizontalPodAutoscalers (kite server + kubectl)', () => {
  let server: KiteServer;
  const k = (args: string[], input?: string) => kubectlOk(server, args, input);
  const header = (args: string[]) => k(args).split('\n')[0]!.trim().split(/\s{2,}/);

  before(async () => {
    server = await startServer({ extraArgs: ['--horizontal-pod-autoscaler-sync-period', '1s'] });
  });

  after(async () => {
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });

  it('refuses invalid Jobs with upstream messages and lists a valid one with upstream columns', () => {
    const refused = kubectl(server, ['create', '-f', '-'], job('always', '', 'Always'));
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim(), 'The Job "always" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
    const indexed = kubectl(server, ['create', '-f', '-'], job('indexed', '  completionMode: Indexed\n  backoffLimitPerIndex: -1\n').replace('  completions: 1\n', ''));
    assert.equal(indexed.code, 1);
    assert.equal(
      indexed.stderr.trim(),
      'The Job "indexed" is invalid: \n* spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0\n* spec.completions: Required value: when completion mode is Indexed',
    );

    assert.equal(k(['create', '-f', '-'], job('pi')).trim(), 'job.batch/pi created');
    assert.deepEqual(header(['get', 'jobs']), ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
    assert.deepEqual(header(['get', 'jobs', '-o', 'wide']), ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    // DURATION stays blank until the Job controller has recorded status.startTime.
    assert.match(k(['get', 'jobs', 'pi', '--no-headers', '-o', 'wide']).trim(), /^pi\s+Running\s+0\/1\s+(\d+s\s+)?\d+s\s+pi\s+perl:5\.34\s+app=pi$/);

    // Immutable once created: the template and completions.
    const patched = kubectl(server, ['patch', 'job', 'pi', '--type=merge', '-p', '{"spec":{"completions":3}}']);
    assert.equal(patched.code, 1);
    assert.equal(patched.stderr.trim(), 'The Job "pi" is invalid: spec.completions: Invalid value: 3: field is immutable');
  });

  it('kubectl autoscale: a v2 HPA, its v1 view, and the controller without metrics', async () => {
    k(['create', 'deployment', 'web', '--image=nginx:1.25']);
    assert.equal(k(['autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=5']).trim(), 'horizontalpodautoscaler.autoscaling/web autoscaled');
    assert.deepEqual(header(['get', 'hpa']), ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
    const row = await eventually(() => {
      const line = k(['get', 'hpa', 'web', '--no-headers']).trim();
      return /\s1\s+\S+$/.test(line) ? line : undefined;
    }, 'the controller to report the current replicas', 30_000);
    assert.match(row, /^web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+1\s+5\s+1\s+\S+$/);

    const v2 = JSON.parse(k(['get', 'hpa.v2.autoscaling', 'web', '-o', 'json'])) as {
      apiVersion: string;
      spec: { metrics: unknown[] };
      status: { conditions: HpaCondition[]; currentMetrics: unknown[] };
    };
    assert.equal(v2.apiVersion, 'autoscaling/v2');
    assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    const conditions = await eventually(() => {
      const hpa = JSON.parse(k(['get', 'hpa', 'web', '-o', 'json'])) as typeof v2;
      return hpa.status.conditions?.some((c) => c.type === 'ScalingActive') ? hpa.status.conditions : undefined;
    }, 'the ScalingActive condition', 30_000);
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['AbleToScale', 'True', 'SucceededGetScale'],
        ['ScalingActive', 'False', 'FailedGetResourceMetric'],
      ],
    );
    assert.equal(
      conditions[1]!.message,
      'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    );

    // The v1 view of the same object: the CPU target is v1's own field, the conditions in annotations.
    // (kubectl drops the version of a short name: hpa.v1.autoscaling would read v2.)
    const v1 = k(['get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'yaml']);
    assert.match(v1, /^apiVersion: autoscaling\/v1$/m);
    assert.match(v1, /^ {2}targetCPUUtilizationPercentage: 50$/m);
    assert.match(v1, /^ {4}autoscaling\.alpha\.kubernetes\.io\/conditions: '\[\{"type":"AbleToScale","status":"True"/m);
    assert.match(v1, /^ {2}currentReplicas: 1$/m);
    assert.match(v1, /^ {4}autoscaling\.alpha\.kubernetes\.io\/current-metrics: '\[\{"type":""\}\]'$/m);
    assert.doesNotMatch(v1, /^ {2}metrics:/m);

    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=web', '-o', 'custom-columns=REASON:.reason', '--no-headers']);
    assert.match(events, /^FailedGetResourceMetric$/m);
    assert.match(events, /^FailedComputeMetricsReplicas$/m);
  });

  it('refuses invalid HPAs with upstream paths and messages, in v2 and in v1', () => {
    const v2 = kubectl(
      server,
      ['create', '-f', '-'],
      `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bad
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 2
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}
`,
    );
    assert.equal(v2.code, 1);
    assert.equal(
      v2.stderr.trim(),
      'The HorizontalPodAutoscaler "bad" is invalid: \n* spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`\n* spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
    );
    const v1 = kubectl(
      server,
      ['create', '-f', '-'],
      `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: bad1
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 0
`,
    );
    assert.equal(v1.code, 1);
    // minReplicas defaulted to 1 is above it too.
    assert.equal(
      v1.stderr.trim(),
      'The HorizontalPodAutoscaler "bad1" is invalid: \n* spec.maxReplicas: Invalid value: 0: must be greater than 0\n* spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`',
    );
    const zero = kubectl(server, ['patch', 'hpa', 'web', '--type=merge', '-p', '{"spec":{"minReplicas":0}}']);
    assert.equal(zero.code, 1);
    assert.equal(
      zero.stderr.trim(),
      'The HorizontalPodAutoscaler "web" is invalid: \n* spec.minReplicas: Invalid value: 0: must be greater than or equal to 1\n* spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas',
    );
  });
});
