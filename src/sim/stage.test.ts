import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinFunctions, type Env } from './expr.js';
import { compileStages, defaultStageSpecs, loadStageSpecs, type Operator, type StageSpec } from './stage.js';

const env = (root: unknown): Env => ({ root, now: 0, fns: builtinFunctions });

const pod = {
  metadata: { annotations: { 'sim.kite.dev/scenario': 'crash-loop' } },
  spec: { restartPolicy: 'Never', containers: [{ command: ['true'] }, { command: ['sh', '-c', 'exit 0'] }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

test('selector operators', () => {
  const cases: [string, Operator, string[] | undefined, boolean][] = [
    ['.status.phase', 'In', ['Running', 'Pending'], true],
    ['.status.phase', 'In', ['Pending'], false],
    ['.status.phase', 'NotIn', ['Pending'], true],
    ['.status.podIP', 'NotIn', ['x'], true],
    ['.status.phase', 'Exists', undefined, true],
    ['.metadata.deletionTimestamp', 'Exists', undefined, false],
    ['.metadata.deletionTimestamp', 'DoesNotExist', undefined, true],
    [".status.conditions[type='Ready'].status", 'In', ['True'], true],
    [".status.conditions[type='Ready'].status", 'NotIn', ['True'], false],
    [".metadata.annotations['sim.kite.dev/scenario']", 'In', ['crash-loop'], true],
    // Commands compare as their words joined by spaces; AllIn needs every one, and at least one.
    ['.spec.containers[].command', 'AllIn', ['true', 'sh -c exit 0'], true],
    ['.spec.containers[].command', 'AllIn', ['true'], false],
    ['.spec.initContainers[].command', 'AllIn', ['true'], false],
    ['.spec.containers[].command', 'In', ['true'], true],
  ];
  for (const [key, operator, values, want] of cases) {
    const [stage] = compileStages([{ name: 's', selector: [{ key, operator, values }] }]);
    assert.equal(stage!.matches(env(pod)), want, `${key} ${operator} ${values}`);
  }
});

test('delays: ms plus jitter below jitterMs, and expressions', () => {
  const [fixed, jittered, computed] = compileStages([
    { name: 'fixed', delay: { ms: 1000 } },
    { name: 'jittered', delay: { ms: 1000, jitterMs: 500 } },
    { name: 'computed', delay: { ms: '{{ mul(.n, 10) }}', jitterMs: { $if: '.j', $then: 100, $else: 0 } } },
  ]);
  assert.equal(fixed!.delay(env({}), () => 0.99), 1000);
  assert.equal(jittered!.delay(env({}), () => 0), 1000);
  assert.equal(jittered!.delay(env({}), () => 0.999999), 1499);
  for (let i = 0; i < 100; i++) {
    const d = jittered!.delay(env({}), Math.random);
    assert.ok(d >= 1000 && d < 1500, `delay ${d}`);
  }
  assert.equal(computed!.delay(env({ n: 7 }), () => 0.5), 70);
  assert.equal(computed!.delay(env({ n: 7, j: true }), () => 0.5), 120);
  const [bad] = compileStages([{ name: 'bad', delay: { ms: '{{ .x }}' } }]);
  assert.throws(() => bad!.delay(env({ x: 'soon' }), Math.random), /not a number/);
});

test('extends takes the base stage and overrides its fields', () => {
  const specs: StageSpec[] = [
    { name: 'child', extends: 'base', selector: [{ key: '.a', operator: 'Exists' }] },
    { name: 'base', delay: { ms: 5 }, steps: [{ delete: true }], selector: [{ key: '.b', operator: 'Exists' }] },
  ];
  const [child] = compileStages(specs);
  assert.equal(child!.matches(env({ a: 1 })), true);
  assert.equal(child!.matches(env({ b: 1 })), false);
  assert.equal(child!.delay(env({}), Math.random), 5);
  assert.deepEqual(
    child!.steps.map((s) => s.kind),
    ['delete'],
  );
});

test('invalid stage sets are refused', () => {
  const cases: [StageSpec[], RegExp][] = [
    [[{ name: 'a' }, { name: 'a' }], /defined twice/],
    [[{ name: 'a', extends: 'b' }], /unknown stage b/],
    [
      [
        { name: 'a', extends: 'b' },
        { name: 'b', extends: 'a' },
      ],
      /extends cycle/,
    ],
    [[{ name: 'a', selector: [{ key: '.x', operator: 'Matches' as Operator }] }], /unknown operator/],
    [[{ name: 'a', selector: [{ key: '.x', operator: 'In' }] }], /needs values/],
    [[{ name: 'a', steps: [{ delete: false }] }], /a step is one of/],
    [[{ name: 'a', resource: 'services' as 'pods' }], /pods or nodes/],
    [[{ name: 'a', steps: [{ patchStatus: { phase: '{{ .a. }}' } }] }], /unexpected end/],
  ];
  for (const [specs, err] of cases) assert.throws(() => compileStages(specs), err);
});

test('the default stage set compiles, node stages first', () => {
  const stages = compileStages(defaultStageSpecs);
  assert.deepEqual(
    stages.filter((s) => s.resource === 'nodes').map((s) => s.name),
    ['node-ready', 'node-heartbeat'],
  );
  const names = stages.map((s) => s.name);
  // Scenario stages come before the plain lifecycle they refine.
  assert.ok(names.indexOf('slow-start-creating') < names.indexOf('pod-ready'));
  assert.ok(names.indexOf('image-pull-error') < names.indexOf('pod-ready'));
});

test('--stages reads YAML and JSON files and directories, with "default" for the built-in set', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-stages-'));
  try {
    writeFileSync(join(dir, 'a.yaml'), 'name: one\nsteps:\n  - delete: true\n---\n- name: two\n- name: three\n');
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ stages: [{ name: 'four' }] }));
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    assert.deepEqual(
      loadStageSpecs(dir).map((s) => s.name),
      ['one', 'two', 'three', 'four'],
    );
    const mixed = loadStageSpecs(`${join(dir, 'b.json')},default`);
    assert.equal(mixed[0]!.name, 'four');
    assert.equal(mixed.length, 1 + defaultStageSpecs.length);
    writeFileSync(join(dir, 'bad.yaml'), 'name: [unclosed');
    assert.throws(() => loadStageSpecs(join(dir, 'bad.yaml')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
