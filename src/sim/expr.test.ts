import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinFunctions, compileExpr, compilePath, ExprError, type Env } from './expr.js';
import { goDuration, parseDuration } from '../api/duration.js';
import { compileTemplate } from './template.js';

const pod = {
  metadata: { name: 'web', annotations: { 'sim.kite.dev/scenario': 'crash-loop' } },
  spec: {
    containers: [
      { name: 'app', image: 'nginx', command: ['sh', '-c', 'exit 0'] },
      { name: 'side', image: 'busybox' },
    ],
  },
  status: {
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-12-31T00:00:00Z' },
      { type: 'Ready', status: 'False', lastTransitionTime: '2025-12-31T00:00:01Z' },
    ],
    containerStatuses: [{ name: 'app', restartCount: 2 }],
  },
};
const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const env = (item?: unknown, index?: number): Env => ({ root: pod, item, index, now, fns: builtinFunctions });

test('expressions evaluate against the object', () => {
  const cases: [string, unknown, unknown?][] = [
    ['.metadata.name', 'web'],
    ['.', pod],
    [".metadata.annotations['sim.kite.dev/scenario']", 'crash-loop'],
    ['.spec.containers[1].name', 'side'],
    ['.spec.containers[].name', ['app', 'side']],
    ['.spec.containers[name="side"].image', 'busybox'],
    ['.status.containerStatuses[name=item.name].restartCount', 2, { name: 'app' }],
    ['.status.containerStatuses[name=item.name].restartCount', undefined, { name: 'side' }],
    ['.spec.nothing.deeper', undefined],
    ['item.name', 'app', { name: 'app' }],
    ["'a \\' b'", "a ' b"],
    ['-1.5', -1.5],
    ['now()', '2026-01-01T12:00:00Z'],
    ["concat('spec.containers{', item.name, '}')", 'spec.containers{app}', { name: 'app' }],
    ["join(.spec.containers[].name, ' ')", 'app side'],
    ['len(.spec.containers)', 2],
    ['add(1, 2)', 3],
    ['min(300000, mul(10000, pow(2, 6)))', 300000],
    ["or(.status.startTime, 'fallback')", 'fallback'],
    ['or(.status.containerStatuses[0].restartCount, 0)', 2],
    ["eq(.metadata.name, 'web')", true],
    ['not(.spec.initContainers)', true],
    ['duration(80000)', '1m20s'],
    ["parseDuration('1m30s')", 90000],
    ["transitionTime('Ready', 'False')", '2025-12-31T00:00:01Z'],
    ["transitionTime('Ready', 'True')", '2026-01-01T12:00:00Z'],
    ["transitionTime('Initialized', 'True')", '2026-01-01T12:00:00Z'],
  ];
  for (const [src, want, item] of cases) assert.deepEqual(compileExpr(src)(env(item)), want, src);
});

test('paths used as selector keys yield every value they reach', () => {
  assert.deepEqual(compilePath('.spec.containers[].command')(env()), [['sh', '-c', 'exit 0']]);
  assert.deepEqual(compilePath('.status.conditions[].type')(env()), ['PodScheduled', 'Ready']);
  assert.deepEqual(compilePath(".status.conditions[type='Ready'].status")(env()), ['False']);
  assert.deepEqual(compilePath('.status.podIP')(env()), []);
});

test('malformed expressions fail when compiled', () => {
  for (const src of ['.a.', 'foo', "'open", '.a[', 'concat(1', '.a b', '#']) assert.throws(() => compileExpr(src), ExprError, src);
  assert.throws(() => compilePath('now()'), /not a path/);
  assert.throws(() => compileExpr('nosuch()')(env()), /unknown function nosuch/);
});

test('Go durations print and parse as Go does', () => {
  const cases: [number, string][] = [
    [500, '500ms'],
    [10_000, '10s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
  ];
  for (const [ms, s] of cases) {
    assert.equal(goDuration(ms), s);
    assert.equal(parseDuration(s), ms);
  }
  assert.equal(parseDuration('1.5s'), 1500);
  for (const bad of ['', '10', '5x', '1m junk']) assert.throws(() => parseDuration(bad), /invalid duration/, bad);
});

test('templates keep types, splice lists, and leave out empty fields', () => {
  const t = compileTemplate({
    phase: 'Running',
    restarts: '{{ .status.containerStatuses[0].restartCount }}',
    message: 'containers with unready status: [{{ join(.spec.containers[].name, " ") }}]',
    missing: '{{ .status.podIP }}',
    empty: {},
    ready: false,
    conditions: [
      { type: 'Initialized' },
      { $each: '.spec.containers', $do: { type: '{{ concat("c-", item.name) }}', index: '{{ index }}' } },
      { $if: '.spec.readinessGates', $then: { type: 'Gate' } },
    ],
    statuses: { $each: '.spec.containers', $where: "eq(item.image, 'nginx')", $do: { name: '{{ item.name }}' } },
    events: { $each: '.spec.containers', $do: [{ reason: 'Pulled' }, { reason: 'Started' }] },
    state: { $if: '.status.conditions', $then: { running: {} }, $else: { waiting: {} } },
    initContainerStatuses: { $each: '.spec.initContainers', $do: { name: '{{ item.name }}' } },
  });
  assert.deepEqual(t(env()), {
    phase: 'Running',
    restarts: 2,
    message: 'containers with unready status: [app side]',
    empty: {},
    ready: false,
    conditions: [{ type: 'Initialized' }, { type: 'c-app', index: 0 }, { type: 'c-side', index: 1 }],
    statuses: [{ name: 'app' }],
    events: [{ reason: 'Pulled' }, { reason: 'Started' }, { reason: 'Pulled' }, { reason: 'Started' }],
    state: { running: {} },
  });
});

test('a "}" inside an expression string does not end it', () => {
  assert.equal(compileTemplate("{{ concat('x{', '}') }}")(env()), 'x{}');
  assert.equal(compileTemplate("a {{ concat('}') }} b {{ .metadata.name }}")(env()), 'a } b web');
});

test('template errors surface at compile time', () => {
  assert.throws(() => compileTemplate({ $each: '.spec.containers' }), /needs "\$do"/);
  assert.throws(() => compileTemplate({ $if: 3 }), /must be an expression string/);
  assert.throws(() => compileTemplate({ a: ['{{ .x. }}'] }));
});
