import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, Pod } from '../../api/types.js';
import { defaultKubeletConfig } from '../config.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { CreateContainerConfigError, generateContainerConfig, managedHostsContent, type ContainerConfigInput } from './container.js';
import { hashContainer } from './labels.js';
import { generatePodSandboxConfig } from './sandbox.js';

const root = mkdtempSync(join(tmpdir(), 'kite-container-'));
const cfg = defaultKubeletConfig({ nodeName: 'n', rootDir: root, nodeIP: '192.168.1.2' });

function input(c: Partial<Container> = {}, spec: Partial<Pod['spec']> = {}, extra: Partial<ContainerConfigInput> = {}): ContainerConfigInput {
  const container: Container = { name: 'app', image: 'busybox:1.35', ...c };
  const pod: Pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u1' }, spec: { containers: [container], terminationGracePeriodSeconds: 30, ...spec } };
  return {
    pod,
    container,
    kind: 'regular',
    restartCount: 3,
    podIPs: ['10.1.0.7'],
    imageRef: 'sha256:abc',
    volumes: { mounts: () => [{ container_path: '/data', host_path: '/somewhere', readonly: false }] },
    sandboxConfig: generatePodSandboxConfig(pod, 0, { ...cfg, resolvConf: '/nonexistent' }),
    cfg,
    sources: { getConfigMap: async () => undefined, getSecret: async () => undefined },
    nodeAllocatable: { cpu: '2', memory: '4Gi' },
    ...extra,
  };
}

describe('generateContainerConfig', () => {
  it('assembles identity, image, env, command, log path and annotations', async () => {
    const c = await generateContainerConfig(
      input({
        command: ['sh', '-c'],
        args: ['echo $(GREETING)'],
        env: [{ name: 'GREETING', value: 'hi' }],
        workingDir: '/w',
        tty: true,
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
      }),
    );
    assert.deepEqual(c.metadata, { name: 'app', attempt: 3 });
    assert.deepEqual(c.image, { image: 'sha256:abc', user_specified_image: 'busybox:1.35' });
    assert.deepEqual(c.command, ['sh', '-c']);
    assert.deepEqual(c.args, ['echo hi']);
    assert.deepEqual(c.envs, [{ key: 'GREETING', value: 'hi' }]);
    assert.equal(c.working_dir, '/w');
    assert.equal(c.tty, true);
    assert.equal(c.log_path, 'app/3.log');
    assert.ok(statSync(join(cfg.podLogsDir, 'ns_web_u1', 'app')).isDirectory());
    assert.deepEqual(c.labels, { 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'ns', 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.container.name': 'app' });
    assert.deepEqual(c.annotations, {
      'io.kubernetes.container.hash': hashContainer({ name: 'app', image: 'busybox:1.35' }),
      'io.kubernetes.container.restartCount': '3',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.terminationGracePeriod': '30',
      'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sleep","1"]}}',
      'io.kubernetes.container.ports': '[{"containerPort":80,"protocol":"TCP"}]',
    });
    assert.equal(c.linux?.resources?.cpu_shares, 2);
    assert.equal(c.linux?.resources?.oom_score_adj, 1000);
    assert.equal(c.linux?.security_context?.privileged, false);
  });

  it('mounts: volumes, then /etc/hosts, then the termination-log file', async () => {
    const c = await generateContainerConfig(input({ terminationMessagePath: '/tmp/msg' }, { hostname: 'h', subdomain: 's' }));
    assert.deepEqual(
      c.mounts?.map((m) => m.container_path),
      ['/data', '/etc/hosts', '/tmp/msg'],
    );
    const hosts = c.mounts![1]!;
    assert.equal(hosts.host_path, join(root, 'pods', 'u1', 'etc-hosts'));
    assert.match(readFileSync(hosts.host_path, 'utf8'), /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n[\s\S]*\n10\.1\.0\.7\th\.s\.ns\.svc\.cluster\.local\th\n$/);
    const term = c.mounts![2]!;
    assert.ok(term.host_path.startsWith(join(root, 'pods', 'u1', 'containers', 'app') + '/'));
    assert.equal(statSync(term.host_path).mode & 0o777, 0o666);
  });

  it('no /etc/hosts before the pod has an IP or when the container mounts its own', async () => {
    const none = await generateContainerConfig(input({ terminationMessagePath: '' }, {}, { podIPs: [] }));
    assert.deepEqual(none.mounts?.map((m) => m.container_path), ['/data']);
    const own = await generateContainerConfig(input({}, {}, { volumes: { mounts: () => [{ container_path: '/etc/hosts', host_path: '/x' }] } }));
    assert.deepEqual(own.mounts?.map((m) => m.container_path), ['/etc/hosts', '/dev/termination-log']);
  });

  it('hostAliases and hostNetwork hosts files', () => {
    const pod: Pod = { metadata: { name: 'web', namespace: 'ns' }, spec: { containers: [], hostAliases: [{ ip: '1.2.3.4', hostnames: ['a', 'b'] }] } };
    assert.ok(managedHostsContent(pod, ['10.0.0.1'], 'cluster.local').endsWith('10.0.0.1\tweb\n\n# Entries added by HostAliases.\n1.2.3.4\ta\tb\n'));
    const hostNet: Pod = { ...pod, spec: { ...pod.spec!, hostNetwork: true } };
    assert.equal(managedHostsContent(hostNet, ['10.0.0.1'], 'cluster.local', '127.0.0.1 localhost\n'), '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n1.2.3.4\ta\tb\n');
  });

  it('CreateContainerConfigError for a missing configMap, a bad mount and runAsNonRoot', async () => {
    await assert.rejects(
      generateContainerConfig(input({ env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }] })),
      (e: Error) => e instanceof CreateContainerConfigError && e.message === 'configmap "cfg" not found',
    );
    await assert.rejects(
      generateContainerConfig(input({}, {}, { volumes: { mounts: () => { throw new Error('cannot find volume "v" to mount into container "app"'); } } })),
      (e: Error) => e instanceof CreateContainerConfigError && /cannot find volume "v"/.test(e.message),
    );
    await assert.rejects(
      generateContainerConfig(input({ securityContext: { runAsNonRoot: true } }, {}, { imageUser: { uid: 0 } })),
      (e: Error) => e instanceof CreateContainerConfigError && e.message === 'container has runAsNonRoot and image will run as root (pod: "web_ns(u1)", container: app)',
    );
  });

  it('records InvalidEnvironmentVariableNames', async () => {
    const recorder = new FakeRecorder();
    const cm = { metadata: { name: 'cfg', namespace: 'ns' }, data: { '1=bad': 'x', OK: 'y' } };
    const c = await generateContainerConfig(input({ envFrom: [{ configMapRef: { name: 'cfg' } }] }, {}, { recorder, sources: { getConfigMap: async () => cm, getSecret: async () => undefined } }));
    assert.deepEqual(c.envs, [{ key: 'OK', value: 'y' }]);
    assert.deepEqual(recorder.events.map((e) => [e.type, e.reason, e.message]), [
      ['Warning', 'InvalidEnvironmentVariableNames', 'Keys [1=bad] from the EnvFrom configMap ns/cfg were skipped since they are considered invalid environment variable names.'],
    ]);
  });
});
