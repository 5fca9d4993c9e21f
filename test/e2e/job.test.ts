// The Job and TTL-after-finished controllers inside `kite server`, with pods run by `kite sim`,
// checked with the real kubectl: completions and parallelism, `kubectl wait --for=condition=complete`,
// a Job whose pods fail exhausting its backoffLimit, an Indexed Job's indexes, and a finished Job
// deleted after its ttlSecondsAfterFinished.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, simCluster } from './harness.js';

const job = (name: string, spec: string, command: string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  namespace: default
spec:
${spec}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.35
        command: ['sh', '-c', '${command}']
`;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface JobObject {
  metadata: { labels?: Record<string, string> };
  spec: { selector: { matchLabels: Record<string, string> } };
  status: { succeeded?: number; failed?: number; active?: number; completedIndexes?: string; conditions?: Condition[] };
}

interface PodList {
  items: {
    metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string>; finalizers?: string[] };
    spec: { hostname?: string; containers: { env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[] }[] };
    status: { phase?: string };
  }[];
}

describe('Job controller (kite server + kite sim)', () => {
  const cluster = simCluster(3);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const getJob = (name: string) => JSON.parse(k(['get', 'job', name, '-o', 'json'])) as JobObject;
  const jobPods = (name: string) => (JSON.parse(k(['get', 'pods', '-l', `batch.kubernetes.io/job-name=${name}`, '-o', 'json'])) as PodList).items;

  it('completions 5, parallelism 2: completes, and kubectl wait --for=condition=complete exits 0', () => {
    k(['apply', '-f', '-'], job('pi', '  completions: 5\n  parallelism: 2', 'exit 0'));
    const waited = kubectl(cluster.server, ['wait', '--for=condition=complete', 'job/pi', '--timeout=55s']);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(waited.stdout.trim(), 'job.batch/pi condition met');
    const done = getJob('pi');
    assert.equal(done.status.succeeded, 5);
    assert.deepEqual(
      done.status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
        ['Complete', 'True', 'CompletionsReached'],
      ],
    );
    assert.equal(done.metadata.labels?.['batch.kubernetes.io/job-name'], 'pi');
    assert.ok(done.spec.selector.matchLabels['batch.kubernetes.io/controller-uid']);
    const pods = jobPods('pi');
    assert.equal(pods.length, 5, 'one pod per completion');
    for (const pod of pods) {
      assert.equal(pod.status.phase, 'Succeeded');
      assert.ok(!(pod.metadata.finalizers ?? []).includes('batch.kubernetes.io/job-tracking'), 'tracking finalizer removed');
    }
    const list = k(['get', 'jobs']).split('\n');
    assert.equal(list[0]!.trim().split(/\s+/)[0], 'NAME');
    assert.ok(list.some((l) => l.startsWith('pi ')), list.join('\n'));
    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=Job,involvedObject.name=pi', '-o', 'custom-columns=REASON:.reason,MESSAGE:.message', '--no-headers']);
    assert.equal(events.split('\n').filter((l) => /^SuccessfulCreate\s+Created pod: pi-/.test(l)).length, 5, events);
    assert.match(events, /^Completed\s+Job completed$/m);
  });

  it('a Job whose pods fail exhausts backoffLimit and fails with BackoffLimitExceeded', () => {
    // backoffLimit 1: one replacement, 10 s after the first failure.
    k(['apply', '-f', '-'], job('bad', '  backoffLimit: 1', 'exit 1'));
    const waited = kubectl(cluster.server, ['wait', '--for=condition=failed', 'job/bad', '--timeout=55s']);
    assert.equal(waited.code, 0, waited.stderr);
    const failed = getJob('bad');
    assert.equal(failed.status.failed, 2);
    const cond = failed.status.conditions?.find((c) => c.type === 'Failed');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit']);
    assert.equal(failed.status.conditions?.find((c) => c.type === 'FailureTarget')?.reason, 'BackoffLimitExceeded');
    assert.deepEqual(
      jobPods('bad').map((p) => p.status.phase),
      ['Failed', 'Failed'],
    );
    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=Job,involvedObject.name=bad', '-o', 'custom-columns=TYPE:.type,REASON:.reason', '--no-headers']);
    assert.match(events, /^Warning\s+BackoffLimitExceeded$/m);
  });

  it('an Indexed Job gives each pod its index', () => {
    k(['apply', '-f', '-'], job('idx', '  completions: 3\n  parallelism: 3\n  completionMode: Indexed', 'exit 0'));
    const waited = kubectl(cluster.server, ['wait', '--for=condition=complete', 'job/idx', '--timeout=55s']);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(getJob('idx').status.completedIndexes, '0-2');
    const pods = jobPods('idx');
    assert.deepEqual(pods.map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort(), ['0', '1', '2']);
    for (const pod of pods) {
      const ix = pod.metadata.annotations!['batch.kubernetes.io/job-completion-index']!;
      assert.equal(pod.metadata.labels?.['batch.kubernetes.io/job-completion-index'], ix);
      assert.equal(pod.spec.hostname, `idx-${ix}`);
      assert.match(pod.metadata.name, new RegExp(`^idx-${ix}-[a-z0-9]{5}$`));
      assert.equal(
        pod.spec.containers[0]!.env?.find((e) => e.name === 'JOB_COMPLETION_INDEX')?.valueFrom?.fieldRef?.fieldPath,
        "metadata.labels['batch.kubernetes.io/job-completion-index']",
      );
    }
  });

  it('a finished Job with ttlSecondsAfterFinished is deleted, its pods with it', async () => {
    k(['apply', '-f', '-'], job('short', '  ttlSecondsAfterFinished: 2', 'exit 0'));
    await eventually(
      () => {
        const r = kubectl(cluster.server, ['get', 'job', 'short']);
        return r.code !== 0 && /jobs.batch "short" not found/.test(r.stderr) ? true : undefined;
      },
      'the TTL controller to delete job/short',
      90_000,
    );
    await eventually(() => (jobPods('short').length === 0 ? true : undefined), 'the pods of job/short to go', 60_000);
  });
});
