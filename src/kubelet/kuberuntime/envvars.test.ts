import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, Service, ServicePort } from '../../api/types.js';
import { EnvError, makeEnvironmentVariables, type EnvSources } from './env.js';
import { envVariableName, serviceEnvVarMap, serviceEnvVars } from './envvars.js';

const svc = (ns: string, name: string, clusterIP: string, ports: ServicePort[] = [{ port: 80 }]): Service => ({ metadata: { namespace: ns, name }, spec: { clusterIP, ports } });

const kubernetes = svc('default', 'kubernetes', '10.96.0.1', [{ name: 'https', port: 443, protocol: 'TCP' }]);
const myservice = svc('default', 'myservice', '10.96.0.20', [{ port: 80 }]);

describe('serviceEnvVars (FromServices)', () => {
  it('host, ports by name and the Docker link variables', () => {
    const multi = svc('ns', 'my-app.v2', '10.96.5.5', [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'dns-udp', port: 53, protocol: 'UDP' },
    ]);
    assert.deepEqual(serviceEnvVars([multi]), [
      ['MY_APP_V2_SERVICE_HOST', '10.96.5.5'],
      ['MY_APP_V2_SERVICE_PORT', '8080'],
      ['MY_APP_V2_SERVICE_PORT_HTTP', '8080'],
      ['MY_APP_V2_SERVICE_PORT_DNS_UDP', '53'],
      ['MY_APP_V2_PORT', 'tcp://10.96.5.5:8080'],
      ['MY_APP_V2_PORT_8080_TCP', 'tcp://10.96.5.5:8080'],
      ['MY_APP_V2_PORT_8080_TCP_PROTO', 'tcp'],
      ['MY_APP_V2_PORT_8080_TCP_PORT', '8080'],
      ['MY_APP_V2_PORT_8080_TCP_ADDR', '10.96.5.5'],
      ['MY_APP_V2_PORT_53_UDP', 'udp://10.96.5.5:53'],
      ['MY_APP_V2_PORT_53_UDP_PROTO', 'udp'],
      ['MY_APP_V2_PORT_53_UDP_PORT', '53'],
      ['MY_APP_V2_PORT_53_UDP_ADDR', '10.96.5.5'],
    ]);
  });

  it('an unnamed first port has no _SERVICE_PORT_<NAME>; protocol defaults to TCP', () => {
    assert.deepEqual(new Map(serviceEnvVars([myservice])), new Map([
      ['MYSERVICE_SERVICE_HOST', '10.96.0.20'],
      ['MYSERVICE_SERVICE_PORT', '80'],
      ['MYSERVICE_PORT', 'tcp://10.96.0.20:80'],
      ['MYSERVICE_PORT_80_TCP', 'tcp://10.96.0.20:80'],
      ['MYSERVICE_PORT_80_TCP_PROTO', 'tcp'],
      ['MYSERVICE_PORT_80_TCP_PORT', '80'],
      ['MYSERVICE_PORT_80_TCP_ADDR', '10.96.0.20'],
    ]));
  });

  it('headless and ExternalName Services have no variables', () => {
    assert.deepEqual(serviceEnvVars([svc('ns', 'headless', 'None'), { metadata: { namespace: 'ns', name: 'ext' }, spec: { type: 'ExternalName', externalName: 'example.org' } }]), []);
  });

  it('names: a leading digit gets an underscore', () => {
    assert.equal(envVariableName('3d-render'), '_3D_RENDER');
    assert.equal(envVariableName('a.b-c'), 'A_B_C');
  });
});

describe('serviceEnvVarMap (getServiceEnvVarMap)', () => {
  const other = svc('other', 'elsewhere', '10.96.0.30');
  const all = [kubernetes, myservice, other, svc('team', 'api', '10.96.0.40'), svc('team', 'kubernetes', '10.96.0.41')];

  it('the pod namespace\'s Services and default/kubernetes; never another namespace\'s', () => {
    const m = serviceEnvVarMap(all, 'default', true);
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
    assert.equal(m.get('KUBERNETES_SERVICE_PORT_HTTPS'), '443');
    assert.equal(m.get('KUBERNETES_PORT_443_TCP'), 'tcp://10.96.0.1:443');
    assert.equal(m.get('MYSERVICE_SERVICE_HOST'), '10.96.0.20');
    assert.equal(m.get('ELSEWHERE_SERVICE_HOST'), undefined);
    assert.equal(m.get('API_SERVICE_HOST'), undefined);
  });

  it('enableServiceLinks false keeps only the kubernetes Service', () => {
    const m = serviceEnvVarMap(all, 'default', false);
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
    assert.equal(m.get('MYSERVICE_SERVICE_HOST'), undefined);
    assert.deepEqual([...serviceEnvVarMap(all, 'team', false).keys()].filter((k) => k.startsWith('API_')), []);
  });

  it('a namespace\'s own Service named kubernetes replaces the master one when links are on', () => {
    assert.equal(serviceEnvVarMap(all, 'team', true).get('KUBERNETES_SERVICE_HOST'), '10.96.0.41');
    assert.equal(serviceEnvVarMap(all, 'team', false).get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
  });
});

describe('makeEnvironmentVariables with service links', () => {
  const pod = (enableServiceLinks?: boolean): Pod => ({ metadata: { name: 'web', namespace: 'default', uid: 'u' }, spec: { containers: [], ...(enableServiceLinks === undefined ? {} : { enableServiceLinks }) } });
  const ctx = { podIPs: ['10.217.244.5'], hostIPs: ['127.0.0.1'], nodeAllocatable: {} };
  const sources = (synced = true, services: Service[] = [kubernetes, myservice]): EnvSources => ({
    getConfigMap: async () => ({ metadata: { name: 'cm', namespace: 'default' }, data: { MYSERVICE_PORT: 'from-configmap' } }),
    getSecret: async () => undefined,
    services: { hasSynced: () => synced, list: () => services },
  });

  it('container variables come first and win; $(VAR) sees the links; the rest of the links follow', async () => {
    const c: Container = {
      name: 'c',
      envFrom: [{ configMapRef: { name: 'cm' } }],
      env: [
        { name: 'URL', value: 'http://$(MYSERVICE_SERVICE_HOST):$(MYSERVICE_SERVICE_PORT)/' },
        { name: 'MYSERVICE_SERVICE_HOST', value: 'mine' },
      ],
    };
    const { envs } = await makeEnvironmentVariables(pod(), c, sources(), ctx);
    const keys = envs.map((e) => e.key);
    assert.deepEqual(keys.slice(0, 3), ['MYSERVICE_PORT', 'URL', 'MYSERVICE_SERVICE_HOST']);
    const m = new Map(envs.map((e) => [e.key, e.value]));
    assert.equal(m.get('URL'), 'http://10.96.0.20:80/');
    assert.equal(m.get('MYSERVICE_SERVICE_HOST'), 'mine');
    assert.equal(m.get('MYSERVICE_PORT'), 'from-configmap');
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
    assert.equal(m.get('MYSERVICE_PORT_80_TCP_ADDR'), '10.96.0.20');
    assert.equal(new Set(keys).size, keys.length, 'each variable once');
  });

  it('enableServiceLinks: false still gets KUBERNETES_SERVICE_HOST', async () => {
    const { envs } = await makeEnvironmentVariables(pod(false), { name: 'c' }, sources(), ctx);
    const keys = envs.map((e) => e.key);
    assert.ok(keys.includes('KUBERNETES_SERVICE_HOST'));
    assert.ok(!keys.some((k) => k.startsWith('MYSERVICE_')));
  });

  it('before the first list of Services, upstream\'s error', async () => {
    await assert.rejects(makeEnvironmentVariables(pod(), { name: 'c' }, sources(false), ctx), (err: unknown) => err instanceof EnvError && err.message === 'services have not yet been read at least once, cannot construct envvars');
  });

  it('no service source (no API server): no links', async () => {
    const { envs } = await makeEnvironmentVariables(pod(), { name: 'c', env: [{ name: 'A', value: '$(KUBERNETES_SERVICE_HOST)' }] }, { getConfigMap: async () => undefined, getSecret: async () => undefined }, ctx);
    assert.deepEqual(envs, [{ key: 'A', value: '$(KUBERNETES_SERVICE_HOST)' }]);
  });
});
