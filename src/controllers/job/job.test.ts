import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Job, JobCondition } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { RealPodControl } from '../kit/podcontrol.js';
import { activePodsForRemoval, ensureJobConditionStatus, JobController, pastBackoffLimitOnFailure } from './job.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:job-controller', groups: ['system:authenticated'] };
const FINALIZER = 'batch.kubernetes.io/job-tracking';

type Spec = NonNullable<Job['spec']>;

/** A Job as the API stores it after defaulting (the defaults are written out: the test does not lean on them). */
const job = (name: string, spec: Partial<Spec> = {}): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: {
    completions: 1,
    parallelism: 1,
    backoffLimit: 6,
    completionMode: 'NonIndexed',
    suspend: false,
    manualSelector: false,
    podReplacementPolicy: 'TerminatingOrFailed',
    template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
    ...spec,
  },
});

/** The real API in process with a Job controller on it. */
class Cluster extends ControllerHarness<JobController> {
  constructor() {
    super({ user: controllerUser, now: NOW, steps: 20, stepMs: 250 });
  }

  protected newController(deps: ControllerDeps): JobController {
    return new JobController({ ...deps, podControl: new RealPodControl(deps.client, this.recorder), recorder: this.recorder });
  }

  jobs() {
    return this.admin.resource<Job>('batch', 'v1', 'jobs').namespace('ns');
  }

  async get(name: string): Promise<Job> {
    return this.jobs().get(name);
  }

  async activePods(): Promise<Pod[]> {
    return (await this.listPods()).filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  }

  /** Finishes a pod as the kubelet would: its container terminated with exitCode. */
  async finish(pod: Pod, exitCode: number, extra: Partial<NonNullable<Pod['status']>> = {}): Promise<void> {
    const fresh = await this.pods().get(pod.metadata!.name!);
    const t = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    await this.pods().updateStatus({
      ...fresh,
      status: {
        ...fresh.status,
        phase: exitCode === 0 ? 'Succeeded' : 'Failed',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: t }],
        containerStatuses: [
          { name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: t } } },
        ],
        ...extra,
      },
    });
  }

  async finishActive(exitCode: number): Promise<void> {
    for (const pod of await this.activePods()) await this.finish(pod, exitCode);
  }

  podCreates(): number {
    return this.api.actions.filter((a) => a.verb === 'create' && a.resource === 'pods' && a.user === controllerUser.name).length;
  }

  events(reason: string) {
    return this.recorder.events.filter((e) => e.reason === reason);
  }
}

const cond = (j: Job, type: string): JobCondition | undefined => j.status?.conditions?.find((c) => c.type === type);
const hasCond = (c: Cluster, name: string, type: string) => async () => cond(await c.get(name), type)?.status === 'True';

describe('Job controller', () => {
  it('completions 5, parallelism 2: never more than 2 at once, 5 pods in all, SuccessCriteriaMet then Complete', async () => {
    const c = await new Cluster().start();
    try {
      const created = await c.jobs().create(job('pi', { completions: 5, parallelism: 2 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 2));
      const first = await c.activePods();
      for (const pod of first) {
        assert.equal(pod.metadata?.generateName, 'pi-');
        assert.deepEqual(pod.metadata?.finalizers, [FINALIZER]);
        assert.deepEqual(pod.metadata?.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: created.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
        assert.equal(pod.metadata?.labels?.['batch.kubernetes.io/job-name'], 'pi');
      }
      const running = await c.get('pi');
      assert.equal(running.status?.active, 2);
      assert.ok(running.status?.startTime);
      assert.equal(running.status?.ready, 0);
      for (let round = 0; round < 5 && !cond(await c.get('pi'), 'Complete'); round++) {
        assert.ok((await c.activePods()).length <= 2);
        await c.finishActive(0);
        await c.settle(async () => (await c.activePods()).length > 0 || cond(await c.get('pi'), 'Complete') !== undefined);
      }
      const done = await c.get('pi');
      assert.equal(done.status?.succeeded, 5);
      assert.equal(done.status?.active ?? 0, 0);
      assert.deepEqual(done.status?.uncountedTerminatedPods, {});
      assert.deepEqual(
        done.status?.conditions?.map((x) => [x.type, x.status, x.reason, x.message]),
        [
          ['SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
          ['Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
        ],
      );
      assert.ok(done.status?.completionTime);
      assert.equal(c.podCreates(), 5, 'each completion once');
      const pods = await c.listPods();
      assert.ok(pods.every((p) => !(p.metadata?.finalizers ?? []).includes(FINALIZER)), 'finalizers removed once counted');
      assert.equal(c.events('Completed').length, 1);
      assert.equal(c.events('Completed')[0]?.message, 'Job completed');
      assert.equal(c.events('SuccessfulCreate').length, 5);
    } finally {
      await c.stop();
    }
  });

  it('backoffLimit: failures are replaced after the back-off, then FailureTarget and Failed with BackoffLimitExceeded', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('bad', { backoffLimit: 1 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 1));
      await c.finishActive(1);
      // The first replacement waits 10 s after the failure.
      await c.settle(() => false, 20);
      assert.equal((await c.activePods()).length, 0, 'no replacement within the back-off');
      assert.ok(await c.settle(async () => (await c.activePods()).length === 1, 40));
      assert.equal((await c.get('bad')).status?.failed, 1);
      await c.finishActive(1);
      assert.ok(await c.settle(hasCond(c, 'bad', 'Failed'), 40));
      const failed = await c.get('bad');
      assert.equal(failed.status?.failed, 2);
      assert.deepEqual(
        failed.status?.conditions?.map((x) => [x.type, x.reason, x.message]),
        [
          ['FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
          ['Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
        ],
      );
      assert.equal(failed.status?.completionTime, undefined);
      assert.equal(c.podCreates(), 2);
      const ev = c.events('BackoffLimitExceeded');
      assert.deepEqual([ev.length, ev[0]?.type], [1, 'Warning']);
    } finally {
      await c.stop();
    }
  });

  it('Indexed: each pod its index (annotation, label, hostname, JOB_COMPLETION_INDEX), completedIndexes', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('idx', { completionMode: 'Indexed', completions: 3, parallelism: 3 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 3));
      const pods = await c.activePods();
      const byIndex = new Map(pods.map((p) => [p.metadata!.annotations!['batch.kubernetes.io/job-completion-index']!, p]));
      assert.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
      for (const [ix, pod] of byIndex) {
        assert.equal(pod.metadata?.labels?.['batch.kubernetes.io/job-completion-index'], ix);
        assert.equal(pod.spec?.hostname, `idx-${ix}`);
        assert.equal(pod.metadata?.generateName, `idx-${ix}-`);
        assert.deepEqual(pod.spec?.containers[0]?.env, [
          { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']" } } },
        ]);
      }
      await c.finish(byIndex.get('0')!, 0);
      await c.finish(byIndex.get('2')!, 0);
      assert.ok(await c.settle(async () => (await c.get('idx')).status?.completedIndexes === '0,2'));
      assert.equal((await c.get('idx')).status?.succeeded, 2);
      // A failed index is run again under the same index.
      await c.finish(byIndex.get('1')!, 1);
      assert.ok(await c.settle(async () => (await c.activePods()).length === 1, 60));
      assert.equal((await c.activePods())[0]?.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'], '1');
      await c.finishActive(0);
      assert.ok(await c.settle(hasCond(c, 'idx', 'Complete')));
      assert.equal((await c.get('idx')).status?.completedIndexes, '0-2');
    } finally {
      await c.stop();
    }
  });

  it('activeDeadlineSeconds: DeadlineExceeded, the running pods deleted', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('slow', { parallelism: 2, completions: 2, activeDeadlineSeconds: 5 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 2));
      assert.ok(await c.settle(hasCond(c, 'slow', 'Failed'), 40));
      const j = await c.get('slow');
      assert.equal(cond(j, 'Failed')?.reason, 'DeadlineExceeded');
      assert.equal(cond(j, 'Failed')?.message, 'Job was active longer than specified deadline');
      assert.equal(cond(j, 'FailureTarget')?.reason, 'DeadlineExceeded');
      assert.equal(j.status?.failed, 2, 'the deleted pods count as failed');
      assert.equal((await c.listPods()).length, 0);
    } finally {
      await c.stop();
    }
  });

  it('suspend deletes the active pods and sets Suspended; resuming sets it False and starts again', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('s', { parallelism: 2, completions: 4 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 2));
      await c.jobs().patch('s', 'merge', { spec: { suspend: true } });
      assert.ok(await c.settle(async () => (await c.listPods()).length === 0 && cond(await c.get('s'), 'Suspended')?.status === 'True'));
      const suspended = await c.get('s');
      assert.deepEqual([cond(suspended, 'Suspended')?.reason, cond(suspended, 'Suspended')?.message], ['JobSuspended', 'Job suspended']);
      assert.equal(suspended.status?.active ?? 0, 0);
      assert.equal(suspended.status?.failed ?? 0, 0, 'pods deleted by suspension are not failures');
      assert.equal(c.events('Suspended').length, 1);
      await c.jobs().patch('s', 'merge', { spec: { suspend: false } });
      assert.ok(await c.settle(async () => (await c.activePods()).length === 2));
      const resumed = await c.get('s');
      assert.deepEqual([cond(resumed, 'Suspended')?.status, cond(resumed, 'Suspended')?.reason], ['False', 'JobResumed']);
      assert.equal(c.events('Resumed').length, 1);
    } finally {
      await c.stop();
    }
  });

  it('podFailurePolicy: Ignore does not count, FailJob fails the Job with the rule message', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(
        job('pfp', {
          podReplacementPolicy: 'Failed',
          podFailurePolicy: {
            rules: [
              { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
              { action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } },
            ],
          },
        }),
      );
      assert.ok(await c.settle(async () => (await c.activePods()).length === 1));
      const disrupted = (await c.activePods())[0]!;
      await c.finish(disrupted, 137, { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] });
      // Ignored, yet a failure for the back-off (as upstream): the replacement comes after 10 s.
      assert.ok(await c.settle(async () => (await c.activePods()).length === 1, 60));
      assert.equal((await c.get('pfp')).status?.failed ?? 0, 0);
      const pod = (await c.activePods())[0]!;
      await c.finish(pod, 42);
      assert.ok(await c.settle(hasCond(c, 'pfp', 'Failed')));
      const failed = cond(await c.get('pfp'), 'Failed')!;
      assert.equal(failed.reason, 'PodFailurePolicy');
      assert.equal(failed.message, `Container c for pod ns/${pod.metadata!.name} failed with exit code 42 matching FailJob rule at index 1`);
      assert.equal((await c.get('pfp')).status?.failed, 1);
    } finally {
      await c.stop();
    }
  });

  it('backoffLimitPerIndex: an index out of retries is failed, the Job fails with FailedIndexes', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('pi', { completionMode: 'Indexed', completions: 2, parallelism: 2, backoffLimit: 2 ** 31 - 1, backoffLimitPerIndex: 0 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 2));
      const pods = await c.activePods();
      const at = (ix: string) => pods.find((p) => p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'] === ix)!;
      assert.equal(at('0').metadata?.annotations?.['batch.kubernetes.io/job-index-failure-count'], '0');
      await c.finish(at('0'), 1);
      assert.ok(await c.settle(async () => (await c.get('pi')).status?.failedIndexes === '0'));
      await c.finish(at('1'), 0);
      assert.ok(await c.settle(hasCond(c, 'pi', 'Failed')));
      const j = await c.get('pi');
      assert.deepEqual([cond(j, 'Failed')?.reason, cond(j, 'Failed')?.message], ['FailedIndexes', 'Job has failed indexes']);
      assert.equal(j.status?.completedIndexes, '1');
      assert.equal(c.podCreates(), 2, 'index 0 was not retried');
    } finally {
      await c.stop();
    }
  });

  it('successPolicy: SuccessCriteriaMet with SuccessPolicy, the rest of the pods deleted, then Complete', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('sp', { completionMode: 'Indexed', completions: 3, parallelism: 3, successPolicy: { rules: [{ succeededIndexes: '0' }] } }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 3));
      const zero = (await c.activePods()).find((p) => p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'] === '0')!;
      await c.finish(zero, 0);
      assert.ok(await c.settle(hasCond(c, 'sp', 'Complete')));
      const j = await c.get('sp');
      assert.deepEqual(
        j.status?.conditions?.map((x) => [x.type, x.reason, x.message]),
        [
          ['SuccessCriteriaMet', 'SuccessPolicy', 'Matched rules at index 0'],
          ['Complete', 'SuccessPolicy', 'Matched rules at index 0'],
        ],
      );
      assert.equal((await c.activePods()).length, 0);
      assert.equal(j.status?.failed ?? 0, 0, 'pods removed after success are not failures');
    } finally {
      await c.stop();
    }
  });

  it('a deleted Job: its orphaned pods lose the tracking finalizer', async () => {
    const c = await new Cluster().start();
    try {
      await c.jobs().create(job('gone', { parallelism: 2, completions: 2 }));
      assert.ok(await c.settle(async () => (await c.activePods()).length === 2));
      // The garbage collector (not running here) deletes the pods; their tracking finalizers must go, or they would stay.
      await c.jobs().delete('gone', { propagationPolicy: 'Background' });
      assert.ok(await c.settle(async () => (await c.listPods()).every((p) => !(p.metadata?.finalizers ?? []).includes(FINALIZER))));
      assert.equal((await c.listPods()).length, 2);
    } finally {
      await c.stop();
    }
  });

  it('adopts an orphan its selector matches, adding the tracking finalizer', async () => {
    const c = await new Cluster().start();
    try {
      const j = await c.jobs().create(job('adopt', { suspend: true }));
      const labels = j.spec!.template.metadata!.labels!;
      await c.pods().create({ metadata: { name: 'orphan', labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } });
      await c.jobs().patch('adopt', 'merge', { spec: { suspend: false } });
      assert.ok(await c.settle(async () => (await c.pods().get('orphan')).metadata?.ownerReferences?.[0]?.uid === j.metadata!.uid));
      assert.deepEqual((await c.pods().get('orphan')).metadata?.finalizers, [FINALIZER]);
      assert.equal(c.podCreates(), 0, 'the adopted pod is the one wanted');
    } finally {
      await c.stop();
    }
  });
});

describe('Job helpers', () => {
  const pod = (name: string, ix: string | undefined, phase = 'Running', ready = false): Pod => ({
    metadata: { name, uid: name, ...(ix !== undefined ? { annotations: { 'batch.kubernetes.io/job-completion-index': ix } } : {}), creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { nodeName: 'n', containers: [] },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });

  it('activePodsForRemoval: duplicates (the best kept), unknown and out-of-range indexes first', () => {
    const indexed = job('j', { completionMode: 'Indexed', completions: 3 });
    const cases: { name: string; job: Job; pods: Pod[]; rmAtLeast: number; want: string[] }[] = [
      { name: 'no index', job: indexed, pods: [pod('a', undefined), pod('b', '0')], rmAtLeast: 0, want: ['a'] },
      { name: 'beyond completions', job: indexed, pods: [pod('a', '3'), pod('b', '1')], rmAtLeast: 0, want: ['a'] },
      { name: 'duplicate: the ready one stays', job: indexed, pods: [pod('a', '1', 'Running', true), pod('b', '1', 'Pending')], rmAtLeast: 0, want: ['b'] },
      { name: 'then by rank', job: job('n', { completions: 3 }), pods: [pod('a', undefined, 'Running', true), pod('b', undefined, 'Pending')], rmAtLeast: 1, want: ['b'] },
    ];
    for (const t of cases) assert.deepEqual(activePodsForRemoval(t.job, t.pods, t.rmAtLeast).map((p) => p.metadata!.name), t.want, t.name);
  });

  it('pastBackoffLimitOnFailure counts the restarts of running pods for OnFailure', () => {
    const j = (limit: number, restartPolicy = 'OnFailure') => job('j', { backoffLimit: limit, template: { spec: { restartPolicy, containers: [] } } });
    const restarted = (n: number, phase = 'Running'): Pod => ({ status: { phase, containerStatuses: [{ name: 'c', image: '', imageID: '', ready: false, restartCount: n }] } });
    const cases: [Job, Pod[], boolean][] = [
      [j(0), [restarted(1)], true],
      [j(0), [restarted(0)], false],
      [j(2), [restarted(1), restarted(1)], true],
      [j(3), [restarted(1), restarted(1)], false],
      [j(1), [restarted(5, 'Failed')], false],
      [j(1, 'Never'), [restarted(5)], false],
    ];
    for (const [jb, pods, want] of cases) assert.equal(pastBackoffLimitOnFailure(jb, pods), want);
  });

  it('ensureJobConditionStatus never appends a False condition, updates a changed one', () => {
    const [none, c1] = ensureJobConditionStatus([], 'Suspended', 'False', 'JobResumed', 'Job resumed', NOW);
    assert.deepEqual([none, c1], [[], false]);
    const [one, c2] = ensureJobConditionStatus([], 'Suspended', 'True', 'JobSuspended', 'Job suspended', NOW);
    assert.equal(c2, true);
    assert.deepEqual(one, [{ type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended', lastProbeTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
    const [same, c3] = ensureJobConditionStatus(one, 'Suspended', 'True', 'JobSuspended', 'Job suspended', NOW + 1000);
    assert.deepEqual([same, c3], [one, false]);
    const [flipped, c4] = ensureJobConditionStatus(one, 'Suspended', 'False', 'JobResumed', 'Job resumed', NOW + 1000);
    assert.deepEqual([flipped[0]?.status, flipped[0]?.lastTransitionTime, c4], ['False', '2026-01-01T00:00:01Z', true]);
  });
});
