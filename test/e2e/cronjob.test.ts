// The CronJob controller inside `kite server`, with `kite sim` running the pods, through the real
// kubectl: a CronJob every minute creates its Jobs (named by the scheduled minute, annotated with
// the scheduled time, listed in status.active), `kubectl create job --from=cronjob/x` works, and
// `kubectl get cj` prints upstream's columns. It waits for two minute boundaries (about 2.5 minutes
// at most); the Job controller finishes each Job, and the history limit (1) deletes the older one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectlOk, simCluster } from './harness.js';

const manifest = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: every-minute
  namespace: default
spec:
  schedule: '*/1 * * * *'
  successfulJobsHistoryLimit: 1
  failedJobsHistoryLimit: 1
  jobTemplate:
    spec:
      template:
        metadata:
          labels:
            app: every-minute
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - name: main
            image: busybox:1.35
            command: ['true']
`;

interface JobList {
  items: {
    metadata: { name: string; uid: string; annotations?: Record<string, string>; ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
    status?: { conditions?: { type: string; status: string }[] };
  }[];
}

describe('CronJob controller (kite server + kite sim)', () => {
  const cluster = simCluster(1);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const jobs = () => (JSON.parse(k(['get', 'jobs', '-o', 'json'])) as JobList).items;

  it('kubectl get cj prints upstream columns', () => {
    assert.equal(k(['apply', '-f', '-'], manifest).trim(), 'cronjob.batch/every-minute created');
    const [head, row] = k(['get', 'cj']).trim().split('\n');
    assert.deepEqual(head!.trim().split(/\s{2,}/), ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']);
    assert.match(row!, /^every-minute\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+\d+\s+(<none>|\d+s)\s+\d+s$/);
    const [wideHead, wideRow] = k(['get', 'cronjobs', '-o', 'wide']).trim().split('\n');
    assert.deepEqual(wideHead!.trim().split(/\s{2,}/).slice(-3), ['CONTAINERS', 'IMAGES', 'SELECTOR']);
    assert.match(wideRow!, /\s+main\s+busybox:1\.35\s+<none>$/);
  });

  it('refuses a schedule robfig/cron cannot parse, with its message', () => {
    const bad = manifest.replace('name: every-minute', 'name: bad').replace("'*/1 * * * *'", "'61 * * * *'");
    const r = kubectlOk.bind(null, cluster.server);
    assert.throws(() => r(['apply', '-f', '-'], bad), /spec\.schedule: Invalid value: "61 \* \* \* \*": end of range \(61\) above maximum \(59\): 61/);
  });

  it('kubectl create job --from=cronjob/every-minute makes a Job from the template', () => {
    assert.equal(k(['create', 'job', 'manual', '--from=cronjob/every-minute']).trim(), 'job.batch/manual created');
    const job = jobs().find((j) => j.metadata.name === 'manual');
    assert.equal(job?.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(job?.metadata.ownerReferences?.[0]?.name, 'every-minute');
  });

  it('creates a Job at each minute, named by it, lists it in status.active, and keeps one finished Job', async () => {
    // Every scheduled Job seen, by name: the history limit may delete the first before the second finishes.
    const seen = new Map<string, JobList['items'][number]>();
    const scheduled = await eventually(
      () => {
        for (const j of jobs()) if (j.metadata.name !== 'manual') seen.set(j.metadata.name, j);
        return seen.size >= 2 ? [...seen.values()] : undefined;
      },
      'two scheduled Jobs',
      150_000,
    );
    for (const job of scheduled) {
      const stamp = job.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'];
      assert.match(stamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
      assert.equal(job.metadata.name, `every-minute-${Date.parse(stamp!) / 60_000}`);
      assert.deepEqual(job.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['CronJob', 'every-minute', true]]);
    }
    const cj = JSON.parse(k(['get', 'cj', 'every-minute', '-o', 'json'])) as { status?: { active?: { name: string }[]; lastScheduleTime?: string } };
    assert.ok(cj.status?.lastScheduleTime, 'lastScheduleTime set');
    const older = [...seen.keys()].sort()[0]!;
    // The Job controller finishes them; once a later one is complete the older goes (successfulJobsHistoryLimit 1).
    await eventually(() => {
      const now = jobs().filter((j) => j.metadata.name !== 'manual');
      const laterDone = now.some((j) => j.metadata.name > older && j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'));
      return laterDone && !now.some((j) => j.metadata.name === older) ? true : undefined;
    }, `a later Job complete and ${older} deleted`, 60_000);
    const reasons = k(['get', 'events', '--field-selector', 'involvedObject.name=every-minute', '-o', 'jsonpath={.items[*].reason}']);
    for (const reason of ['SuccessfulCreate', 'SawCompletedJob', 'SuccessfulDelete']) assert.match(reasons, new RegExp(reason));
    const status = JSON.parse(k(['get', 'cj', 'every-minute', '-o', 'json'])) as { status?: { lastSuccessfulTime?: string } };
    assert.ok(status.status?.lastSuccessfulTime, 'lastSuccessfulTime set');
  });
});
