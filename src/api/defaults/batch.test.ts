import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from './index.js';
import { MAX_INT32 } from './batch.js';

type Obj = Record<string, any>;
const job = (spec: Obj, metadata: Obj = { name: 'j' }): Obj => ({ metadata, spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } }, ...spec } });
const defaulted = (obj: Obj): Obj => {
  applyDefaults('batch', 'Job', obj);
  return obj;
};

test('Job defaults as upstream SetDefaults_Job', () => {
  const cases: { name: string; spec: Obj; want: Obj }[] = [
    {
      name: 'neither completions nor parallelism: one pod once',
      spec: {},
      want: { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed', manualSelector: false },
    },
    { name: 'completions only: parallelism 1', spec: { completions: 5 }, want: { completions: 5, parallelism: 1 } },
    { name: 'parallelism only: completions stay unset', spec: { parallelism: 3 }, want: { completions: undefined, parallelism: 3 } },
    { name: 'backoffLimitPerIndex: backoffLimit MaxInt32', spec: { completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 1 }, want: { backoffLimit: MAX_INT32, completionMode: 'Indexed' } },
    { name: 'explicit values kept', spec: { backoffLimit: 0, suspend: true, manualSelector: true, podReplacementPolicy: 'Failed' }, want: { backoffLimit: 0, suspend: true, manualSelector: true, podReplacementPolicy: 'Failed' } },
    {
      name: 'podFailurePolicy: replacement Failed, condition patterns status True',
      spec: { podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }, { type: 'X', status: 'False' }] }] } },
      want: { podReplacementPolicy: 'Failed', podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }, { type: 'X', status: 'False' }] }] } },
    },
  ];
  for (const c of cases) {
    const spec = defaulted(job(c.spec)).spec;
    for (const [k, v] of Object.entries(c.want)) assert.deepEqual(spec[k], v, `${c.name}: ${k}`);
  }
});

test('Job defaults: template labels copied to an unlabelled Job; the pod template defaulted', () => {
  const j = defaulted(job({ template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } }));
  assert.deepEqual(j.metadata.labels, { app: 'x' });
  assert.equal(j.spec.template.spec.restartPolicy, 'Always');
  assert.equal(j.spec.template.spec.containers[0].imagePullPolicy, 'Always');
  const labelled = defaulted(job({ template: { metadata: { labels: { app: 'x' } } } }, { name: 'j', labels: { own: 'y' } }));
  assert.deepEqual(labelled.metadata.labels, { own: 'y' });
});
