// CriRuntime against an in-process gRPC server on a unix socket that speaks the same proto: what
// arrives on the server is what containerd would decode, and server errors must come back as
// RuntimeErrors with the runtime's own text.
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { RuntimeError, isNotFound, type ContainerConfig, type PodSandboxConfig } from '../types.js';
import { CriRuntime, grpcTarget } from './client.js';
import { criService, type CriServiceName } from './load.js';

type Reply = object | { error: { code: grpc.status; details: string } } | 'hang';

interface Received {
  method: string;
  request: any;
  deadline: number;
}

/** A scriptable runtime: each method answers from `replies` (default: an empty response). */
class FakeCriServer {
  readonly received: Received[] = [];
  replies = new Map<string, (req: any) => Reply>();
  private readonly server = new grpc.Server();
  private readonly hanging: grpc.sendUnaryData<unknown>[] = [];
  private readonly implemented = new Set<string>();

  constructor(unimplemented: string[] = []) {
    for (const service of ['RuntimeService', 'ImageService'] as CriServiceName[]) {
      const def = criService(service);
      const impl: grpc.UntypedServiceImplementation = {};
      for (const method of Object.keys(def)) {
        if (unimplemented.includes(method)) continue;
        this.implemented.add(method);
        impl[method] = (call: grpc.ServerUnaryCall<any, unknown>, cb: grpc.sendUnaryData<unknown>) => {
          const d = call.getDeadline();
          this.received.push({ method, request: call.request, deadline: d instanceof Date ? d.getTime() : d });
          const reply = this.replies.get(method)?.(call.request) ?? {};
          if (reply === 'hang') this.hanging.push(cb);
          else if ('error' in reply) cb({ code: reply.error.code, details: reply.error.details });
          else cb(null, reply);
        };
      }
      this.server.addService(def, impl);
    }
  }

  listen(socket: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.server.bindAsync(grpcTarget(socket), grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
  }

  last(method: string): Received {
    const r = this.received.filter((x) => x.method === method).at(-1);
    assert.ok(r, `${method} was not called`);
    return r;
  }

  stop(): void {
    this.server.forceShutdown();
  }
}

const sandboxConfig: PodSandboxConfig = {
  metadata: { name: 'web', uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', namespace: 'default', attempt: 1 },
  hostname: 'web',
  log_directory: '/var/log/pods/default_web_1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  dns_config: { servers: ['10.96.0.10'], searches: ['default.svc.cluster.local'], options: ['ndots:5'] },
  port_mappings: [{ protocol: 'TCP', container_port: 80, host_port: 8080 }],
  labels: { 'io.kubernetes.pod.name': 'web' },
  annotations: { 'kubernetes.io/config.seen': 'now' },
  linux: {
    cgroup_parent: '/kubepods/besteffort/pod1b4e28ba-2fa1-11d2-883f-0016d3cca427',
    security_context: { namespace_options: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' }, run_as_user: { value: 0 } },
    sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' },
  },
};

const containerConfig: ContainerConfig = {
  metadata: { name: 'app', attempt: 2 },
  image: { image: 'docker.io/library/busybox:1.35', user_specified_image: 'busybox:1.35' },
  command: ['sh', '-c'],
  args: ['echo hello; sleep 3600'],
  working_dir: '/tmp',
  envs: [{ key: 'A', value: '1' }],
  mounts: [{ container_path: '/data', host_path: '/srv/data', readonly: true, propagation: 'PROPAGATION_HOST_TO_CONTAINER' }],
  log_path: 'app/2.log',
  linux: {
    resources: { memory_limit_in_bytes: 134217728, cpu_shares: 102, cpu_quota: 50000, cpu_period: 100000, oom_score_adj: 1000 },
    security_context: { capabilities: { drop_capabilities: ['ALL'] }, run_as_user: { value: 1000 }, no_new_privs: true, masked_paths: ['/proc/kcore'] },
  },
};

describe('CriRuntime', () => {
  let dir: string;
  let server: FakeCriServer;
  let runtime: CriRuntime;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kite-cri-'));
    server = new FakeCriServer(['ReopenContainerLog']);
    await server.listen(join(dir, 'cri.sock'));
    runtime = new CriRuntime({ endpoint: `unix://${join(dir, 'cri.sock')}`, defaultTimeoutMs: 10_000 });
    await runtime.waitForReady(Date.now() + 10_000);
  });

  after(() => {
    runtime.close();
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    server.replies.clear();
    server.received.length = 0;
  });

  it('sends RunPodSandbox with nested sandbox config fields and returns the sandbox ID', async () => {
    server.replies.set('RunPodSandbox', () => ({ pod_sandbox_id: 'sb-1' }));
    assert.equal(await runtime.runPodSandbox(sandboxConfig, 'runc'), 'sb-1');
    const { request } = server.last('RunPodSandbox');
    assert.equal(request.runtime_handler, 'runc');
    assert.deepEqual(request.config.metadata, sandboxConfig.metadata);
    assert.equal(request.config.log_directory, sandboxConfig.log_directory);
    assert.equal(request.config.linux.cgroup_parent, '/kubepods/besteffort/pod1b4e28ba-2fa1-11d2-883f-0016d3cca427');
    assert.equal(request.config.linux.security_context.namespace_options.network, 'NODE');
    assert.equal(request.config.linux.security_context.namespace_options.pid, 'CONTAINER');
    assert.equal(request.config.linux.security_context.run_as_user.value, '0');
    assert.deepEqual(request.config.linux.sysctls, { 'net.ipv4.ip_unprivileged_port_start': '0' });
    assert.deepEqual(request.config.dns_config.options, ['ndots:5']);
    assert.deepEqual(request.config.port_mappings, [{ protocol: 'TCP', container_port: 80, host_port: 8080, host_ip: '' }]);
    assert.deepEqual(request.config.labels, { 'io.kubernetes.pod.name': 'web' });
  });

  it('sends CreateContainer with the container config, log_path and resources, and the sandbox config', async () => {
    server.replies.set('CreateContainer', () => ({ container_id: 'c-1' }));
    assert.equal(await runtime.createContainer('sb-1', containerConfig, sandboxConfig), 'c-1');
    const { request } = server.last('CreateContainer');
    assert.equal(request.pod_sandbox_id, 'sb-1');
    const c = request.config;
    assert.deepEqual(c.metadata, { name: 'app', attempt: 2 });
    assert.equal(c.image.image, 'docker.io/library/busybox:1.35');
    assert.equal(c.image.user_specified_image, 'busybox:1.35');
    assert.deepEqual(c.command, ['sh', '-c']);
    assert.deepEqual(c.args, ['echo hello; sleep 3600']);
    assert.equal(c.log_path, 'app/2.log');
    assert.deepEqual(c.envs, [{ key: 'A', value: '1' }]);
    assert.equal(c.mounts[0].propagation, 'PROPAGATION_HOST_TO_CONTAINER');
    assert.equal(c.mounts[0].readonly, true);
    assert.equal(c.linux.resources.memory_limit_in_bytes, '134217728');
    assert.equal(c.linux.resources.cpu_shares, '102');
    assert.equal(c.linux.resources.oom_score_adj, '1000');
    assert.deepEqual(c.linux.security_context.capabilities.drop_capabilities, ['ALL']);
    assert.equal(c.linux.security_context.no_new_privs, true);
    assert.equal(request.sandbox_config.linux.cgroup_parent, sandboxConfig.linux!.cgroup_parent);
  });

  it('reads ContainerStatus with timestamps as strings and resources as numbers', async () => {
    server.replies.set('ContainerStatus', () => ({
      status: {
        id: 'c-1',
        metadata: { name: 'app', attempt: 2 },
        state: 'CONTAINER_EXITED',
        created_at: '1767225600000000001',
        started_at: '1767225601000000002',
        finished_at: '1767225631000000003',
        exit_code: 137,
        image: { image: 'docker.io/library/busybox:1.35' },
        image_ref: 'docker.io/library/busybox@sha256:abc',
        reason: 'Error',
        log_path: '/var/log/pods/x/app/2.log',
        resources: { linux: { memory_limit_in_bytes: '134217728' } },
      },
      info: { info: '{"pid":1}' },
    }));
    const s = await runtime.containerStatus('c-1', true);
    assert.equal(server.last('ContainerStatus').request.verbose, true);
    assert.equal(s.state, 'CONTAINER_EXITED');
    assert.equal(s.started_at, '1767225601000000002');
    assert.equal(s.finished_at, '1767225631000000003');
    assert.equal(s.exit_code, 137);
    assert.equal(s.reason, 'Error');
    assert.equal(s.log_path, '/var/log/pods/x/app/2.log');
    assert.equal(s.resources!.linux!.memory_limit_in_bytes, 134217728);
    assert.deepEqual(s.labels, {});
  });

  it('reads PodSandboxStatus with its network and verbose info', async () => {
    server.replies.set('PodSandboxStatus', () => ({
      status: { id: 'sb-1', state: 'SANDBOX_READY', created_at: '5', network: { ip: '10.88.0.7' } },
      info: { info: '{"pid":42}' },
    }));
    const res = await runtime.podSandboxStatus('sb-1', true);
    assert.equal(res.status.network!.ip, '10.88.0.7');
    assert.deepEqual(res.status.network!.additional_ips, []);
    assert.equal(res.status.state, 'SANDBOX_READY');
    assert.equal(res.status.linux, undefined);
    assert.equal(res.info!.info, '{"pid":42}');
  });

  it('lists with filters', async () => {
    server.replies.set('ListContainers', () => ({ containers: [{ id: 'c-1', state: 'CONTAINER_RUNNING', created_at: '7' }] }));
    server.replies.set('ListPodSandbox', () => ({ items: [{ id: 'sb-1', state: 'SANDBOX_NOTREADY' }] }));
    const cs = await runtime.listContainers({ pod_sandbox_id: 'sb-1', state: { state: 'CONTAINER_RUNNING' }, label_selector: { a: 'b' } });
    assert.equal(cs[0]!.created_at, '7');
    assert.deepEqual(server.last('ListContainers').request.filter, { id: '', pod_sandbox_id: 'sb-1', state: { state: 'CONTAINER_RUNNING' }, label_selector: { a: 'b' } });
    const sbs = await runtime.listPodSandbox();
    assert.equal(sbs[0]!.state, 'SANDBOX_NOTREADY');
    assert.equal(server.last('ListPodSandbox').request.filter, null);
  });

  it('sends the grace period to StopContainer and extends the deadline by it', async () => {
    await runtime.stopContainer('c-1', 30);
    const r = server.last('StopContainer');
    assert.deepEqual(r.request, { container_id: 'c-1', timeout: '30' });
    // default 10 s + 30 s grace: well beyond the default alone.
    assert.ok(r.deadline - Date.now() > 20_000, `deadline only ${r.deadline - Date.now()} ms away`);
  });

  it('runs ExecSync and returns output as Buffers', async () => {
    server.replies.set('ExecSync', () => ({ stdout: Buffer.from('ok\n'), exit_code: 2 }));
    const res = await runtime.execSync('c-1', ['cat', '/etc/hostname'], 5);
    assert.deepEqual(server.last('ExecSync').request, { container_id: 'c-1', cmd: ['cat', '/etc/hostname'], timeout: '5' });
    assert.equal(res.stdout.toString(), 'ok\n');
    assert.equal(res.stderr.length, 0);
    assert.equal(res.exit_code, 2);
  });

  it('returns the streaming URLs', async () => {
    server.replies.set('Exec', () => ({ url: 'http://127.0.0.1:1/exec/a' }));
    server.replies.set('Attach', () => ({ url: 'http://127.0.0.1:1/attach/b' }));
    server.replies.set('PortForward', () => ({ url: 'http://127.0.0.1:1/portforward/c' }));
    assert.equal(await runtime.exec({ container_id: 'c-1', cmd: ['sh'], stdin: true, tty: true, stdout: true }), 'http://127.0.0.1:1/exec/a');
    assert.deepEqual(server.last('Exec').request, { container_id: 'c-1', cmd: ['sh'], tty: true, stdin: true, stdout: true, stderr: false });
    assert.equal(await runtime.attach({ container_id: 'c-1', stdout: true, stderr: true }), 'http://127.0.0.1:1/attach/b');
    assert.equal(await runtime.portForward({ pod_sandbox_id: 'sb-1', port: [80, 443] }), 'http://127.0.0.1:1/portforward/c');
    assert.deepEqual(server.last('PortForward').request.port, [80, 443]);
  });

  it('reports version and runtime conditions', async () => {
    server.replies.set('Version', () => ({ version: '0.1.0', runtime_name: 'containerd', runtime_version: 'v1.6.20', runtime_api_version: 'v1' }));
    server.replies.set('Status', () => ({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true },
          { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'Network plugin returns error: cni plugin not initialized' },
        ],
      },
    }));
    const v = await runtime.version();
    assert.equal(server.last('Version').request.version, 'v1');
    assert.equal(v.runtime_name, 'containerd');
    const { status } = await runtime.status();
    assert.deepEqual(status.conditions[1], {
      type: 'NetworkReady',
      status: false,
      reason: 'NetworkPluginNotReady',
      message: 'Network plugin returns error: cni plugin not initialized',
    });
  });

  it('answers undefined for an absent image and the image when present', async () => {
    assert.equal(await runtime.imageStatus({ image: 'busybox:9' }), undefined);
    assert.equal(server.last('ImageStatus').request.image.image, 'busybox:9');
    server.replies.set('ImageStatus', () => ({ image: { id: 'sha256:1', repo_tags: ['docker.io/library/busybox:1.35'], size: '2000000' } }));
    const img = await runtime.imageStatus({ image: 'busybox:1.35' });
    assert.equal(img!.id, 'sha256:1');
    assert.equal(img!.size, 2_000_000);
  });

  it('pulls with auth and sandbox config and returns the image ref', async () => {
    server.replies.set('PullImage', () => ({ image_ref: 'sha256:feed' }));
    const ref = await runtime.pullImage({ image: 'docker.io/library/busybox:1.35' }, { username: 'u', password: 'p' }, sandboxConfig);
    assert.equal(ref, 'sha256:feed');
    const { request, deadline } = server.last('PullImage');
    assert.equal(request.auth.username, 'u');
    assert.equal(request.sandbox_config.metadata.uid, sandboxConfig.metadata.uid);
    // The pull deadline is its own (5 minutes), not the 10 s default.
    assert.ok(deadline - Date.now() > 60_000);
  });

  it('updates resources, removes images and reads stats with numeric usage', async () => {
    await runtime.updateContainerResources('c-1', { cpu_quota: 20000, cpu_period: 100000, unified: { 'memory.high': '1000' } });
    assert.deepEqual(server.last('UpdateContainerResources').request.linux.unified, { 'memory.high': '1000' });
    assert.equal(server.last('UpdateContainerResources').request.linux.cpu_quota, '20000');
    await runtime.removeImage({ image: 'sha256:1' });
    assert.equal(server.last('RemoveImage').request.image.image, 'sha256:1');
    server.replies.set('ImageFsInfo', () => ({
      image_filesystems: [{ timestamp: '1767225600000000000', fs_id: { mountpoint: '/var/lib/containerd' }, used_bytes: { value: '123456789' } }],
    }));
    const fs = await runtime.imageFsInfo();
    assert.equal(fs.image_filesystems[0]!.timestamp, '1767225600000000000');
    assert.equal(fs.image_filesystems[0]!.used_bytes!.value, 123456789);
    assert.equal(fs.image_filesystems[0]!.inodes_used, undefined);
    server.replies.set('ListContainerStats', () => ({
      stats: [{ attributes: { id: 'c-1' }, cpu: { timestamp: '9', usage_core_nano_seconds: { value: '5000000000' } }, memory: { timestamp: '9', working_set_bytes: { value: '4096' } } }],
    }));
    const stats = await runtime.listContainerStats({ pod_sandbox_id: 'sb-1' });
    assert.equal(server.last('ListContainerStats').request.filter.pod_sandbox_id, 'sb-1');
    assert.equal(stats[0]!.cpu!.usage_core_nano_seconds!.value, 5_000_000_000);
    assert.equal(stats[0]!.memory!.working_set_bytes!.value, 4096);
    assert.equal(stats[0]!.cpu!.timestamp, '9');
    assert.equal(stats[0]!.writable_layer, undefined);
  });

  it("maps a runtime error to a RuntimeError with the code and the runtime's message", async () => {
    const text =
      'failed to pull and unpack image "docker.io/library/nope:1": failed to resolve reference "docker.io/library/nope:1": docker.io/library/nope:1: not found';
    server.replies.set('PullImage', () => ({ error: { code: grpc.status.NOT_FOUND, details: text } }));
    const err = await runtime.pullImage({ image: 'docker.io/library/nope:1' }).catch((e: unknown) => e);
    assert.ok(err instanceof RuntimeError);
    assert.equal(err.code, 'NOT_FOUND');
    assert.equal(err.message, text);
    assert.ok(isNotFound(err));

    server.replies.set('StartContainer', () => ({ error: { code: grpc.status.UNKNOWN, details: 'failed to create containerd task: boom' } }));
    await assert.rejects(runtime.startContainer('c-1'), { name: 'RuntimeError', code: 'UNKNOWN', message: 'failed to create containerd task: boom' });

    server.replies.set('ExecSync', () => ({ error: { code: grpc.status.DEADLINE_EXCEEDED, details: 'timeout 1s exceeded: context deadline exceeded' } }));
    await assert.rejects(runtime.execSync('c-1', ['sleep', '9'], 1), { code: 'DEADLINE_EXCEEDED', message: 'timeout 1s exceeded: context deadline exceeded' });

    server.replies.set('RemoveContainer', () => ({ error: { code: grpc.status.RESOURCE_EXHAUSTED, details: 'too much' } }));
    await assert.rejects(runtime.removeContainer('c-1'), { code: 'UNKNOWN', message: 'too much' });
  });

  it('maps an unimplemented method to UNIMPLEMENTED', async () => {
    await assert.rejects(runtime.reopenContainerLog('c-1'), { name: 'RuntimeError', code: 'UNIMPLEMENTED' });
  });

  it('cancels a pull when its signal aborts', async () => {
    server.replies.set('PullImage', () => 'hang');
    const ac = new AbortController();
    const pull = runtime.pullImage({ image: 'docker.io/library/slow:1' }, undefined, undefined, ac.signal);
    await waitFor(() => server.received.some((r) => r.method === 'PullImage'));
    ac.abort();
    await assert.rejects(pull, { name: 'RuntimeError', code: 'CANCELLED', message: 'context canceled' });
  });

  it('refuses at once when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(runtime.runPodSandbox(sandboxConfig, '', ac.signal), { code: 'CANCELLED' });
    assert.equal(server.received.length, 0);
  });

  it("reports its own deadline as Go's context error", async () => {
    const hasty = new CriRuntime({ endpoint: join(dir, 'cri.sock'), defaultTimeoutMs: 50 });
    try {
      server.replies.set('StartContainer', () => 'hang');
      await assert.rejects(hasty.startContainer('c-1'), { code: 'DEADLINE_EXCEEDED', message: 'context deadline exceeded' });
    } finally {
      hasty.close();
    }
  });

  it('fails with UNAVAILABLE when nothing listens', async () => {
    const nobody = new CriRuntime({ endpoint: join(dir, 'absent.sock') });
    try {
      await assert.rejects(nobody.version(), { name: 'RuntimeError', code: 'UNAVAILABLE' });
      await assert.rejects(nobody.waitForReady(Date.now() + 100), { code: 'UNAVAILABLE' });
    } finally {
      nobody.close();
    }
  });
});

describe('grpcTarget', () => {
  it('accepts unix URLs and absolute paths only', () => {
    assert.equal(grpcTarget('unix:///run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock');
    assert.equal(grpcTarget('/run/k.sock'), 'unix:///run/k.sock');
    assert.throws(() => grpcTarget('localhost:1234'), /unsupported CRI endpoint/);
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}
