import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Container, Pod, Secret } from '../../api/types.js';
import { EnvError, expand, expandCommandAndArgs, extractContainerResource, makeEnvironmentVariables, mappingFor, type EnvSources } from './env.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function sources(cms: ConfigMap[] = [], secrets: Secret[] = []): EnvSources {
  return {
    getConfigMap: async (ns, name) => cms.find((c) => c.metadata?.namespace === ns && c.metadata?.name === name),
    getSecret: async (ns, name) => secrets.find((s) => s.metadata?.namespace === ns && s.metadata?.name === name),
  };
}

const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1', labels: { app: 'web' }, annotations: { note: 'hi' } },
  spec: { nodeName: 'node-a', serviceAccountName: 'sa', containers: [] },
};
const ctx = { podIPs: ['10.1.0.5'], hostIPs: ['192.168.1.2'], nodeAllocatable: { cpu: '4', memory: '8Gi' } };
const cm: ConfigMap = { metadata: { name: 'cfg', namespace: 'default' }, data: { A: 'a', B: 'b', 'bad=key': 'x' } };
const sec: Secret = { metadata: { name: 's', namespace: 'default' }, data: { PASS: b64('p@ss') } };

describe('expand', () => {
  const m = mappingFor(new Map([['A', 'x'], ['EMPTY', '']]));
  for (const [input, want] of [
    ['$(A)', 'x'],
    ['pre-$(A)-post', 'pre-x-post'],
    ['$$(A)', '$(A)'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$(A', '$(A'],
    ['$A', '$A'],
    ['$', '$'],
    ['$(EMPTY)z', 'z'],
    ['$$$(A)', '$x'],
    ['$()', '$()'],
  ] as const) {
    it(`${input} → ${want}`, () => assert.equal(expand(input, m), want));
  }
});

describe('makeEnvironmentVariables', () => {
  async function envOf(c: Partial<Container>, s = sources([cm], [sec])) {
    return makeEnvironmentVariables(pod, { name: 'c', ...c }, s, ctx);
  }

  it('envFrom with prefix, skips invalid names, env overrides and expands in order', async () => {
    const r = await envOf({
      envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'P_' }, { secretRef: { name: 's' } }],
      env: [
        { name: 'P_A', value: 'over' },
        { name: 'X', value: '$(P_A)-$(PASS)-$(LATER)' },
        { name: 'LATER', value: 'late' },
      ],
    });
    assert.deepEqual(r.envs, [
      { key: 'P_A', value: 'over' },
      { key: 'P_B', value: 'b' },
      { key: 'PASS', value: 'p@ss' },
      { key: 'X', value: 'over-p@ss-$(LATER)' },
      { key: 'LATER', value: 'late' },
    ]);
    assert.deepEqual(r.invalidKeys, [{ kind: 'configMap', name: 'cfg', keys: ['P_bad=key'] }]);
  });

  it('fieldRef and resourceFieldRef values', async () => {
    const r = await envOf({
      resources: { limits: { memory: '1Gi' }, requests: { cpu: '250m' } },
      env: [
        { name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'L', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'AN', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['note']" } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
        { name: 'HIP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
        { name: 'PIP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'PIPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
        { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
        { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        { name: 'CPU_REQ_M', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
        { name: 'CPU_REQ', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
      ],
    });
    assert.deepEqual(Object.fromEntries(r.envs.map((e) => [e.key, e.value])), {
      N: 'web',
      NS: 'default',
      UID: 'u1',
      L: 'web',
      AN: 'hi',
      NODE: 'node-a',
      SA: 'sa',
      HIP: '192.168.1.2',
      PIP: '10.1.0.5',
      PIPS: '10.1.0.5',
      CPU_LIMIT: '4', // node allocatable
      MEM_MI: '1024',
      CPU_REQ_M: '250',
      CPU_REQ: '1', // rounded up
    });
  });

  it('key refs and optional sources', async () => {
    const r = await envOf({
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'A' } } },
        { name: 'P', valueFrom: { secretKeyRef: { name: 's', key: 'PASS' } } },
        { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'missing', key: 'A', optional: true } } },
        { name: 'OPTKEY', valueFrom: { secretKeyRef: { name: 's', key: 'nope', optional: true } } },
      ],
      envFrom: [{ configMapRef: { name: 'absent', optional: true } }],
    });
    assert.deepEqual(r.envs, [
      { key: 'A', value: 'a' },
      { key: 'P', value: 'p@ss' },
    ]);
  });

  for (const [what, c, message] of [
    ['missing configMap', { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'nope', key: 'A' } } }] }, 'configmap "nope" not found'],
    ['missing secret', { env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'nope', key: 'A' } } }] }, 'secret "nope" not found'],
    ['missing configMap key', { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }] }, "couldn't find key k in ConfigMap default/cfg"],
    ['missing secret key', { env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }, "couldn't find key k in Secret default/s"],
    ['missing envFrom configMap', { envFrom: [{ configMapRef: { name: 'nope' } }] }, 'configmap "nope" not found'],
    ['missing envFrom secret', { envFrom: [{ secretRef: { name: 'nope' } }] }, 'secret "nope" not found'],
    ['bad field path', { env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] }, 'unsupported fieldPath: spec.bogus'],
  ] as const) {
    it(`rejects: ${what}`, async () => {
      await assert.rejects(envOf(c as unknown as Partial<Container>), (err: Error) => err instanceof EnvError && err.message === message);
    });
  }
});

describe('extractContainerResource', () => {
  const c: Container = { name: 'c', resources: { limits: { cpu: '1500m', memory: '100M' }, requests: { memory: '64Mi' } } };
  for (const [resource, divisor, want] of [
    ['limits.cpu', undefined, '2'],
    ['limits.cpu', '1m', '1500'],
    ['limits.memory', undefined, '100000000'],
    ['limits.memory', '1Mi', '96'],
    ['requests.memory', '1Mi', '64'],
    ['requests.cpu', undefined, '0'],
  ] as const) {
    it(`${resource} / ${divisor ?? '1'} = ${want}`, () => assert.equal(extractContainerResource({ resource, divisor }, c, {}), want));
  }
  it('rejects unknown resources', () => assert.throws(() => extractContainerResource({ resource: 'limits.gpu' }, c, {}), /unsupported container resource : limits.gpu/));
});

describe('expandCommandAndArgs', () => {
  it('expands against the final env', () => {
    const r = expandCommandAndArgs({ name: 'c', command: ['sh', '-c', 'echo $(MSG)'], args: ['$(MISSING)', '$$(MSG)'] }, [{ key: 'MSG', value: 'hello' }]);
    assert.deepEqual(r, { command: ['sh', '-c', 'echo hello'], args: ['$(MISSING)', '$(MSG)'] });
  });
});
