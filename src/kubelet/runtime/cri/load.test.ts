// Wire check against upstream api.proto: messages encoded with kite's proto are taken apart by
// hand, so a field or enum number that differs from upstream fails here. The expected numbers
// were read off k8s.io/cri-api runtime/v1 api.proto, not from kite's proto.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { criService, criType, decodeMessage, encodeMessage, normalizeMessage } from './load.js';

interface WireField {
  no: number;
  wire: number;
  /** varint as a string (int64-safe), or the raw bytes of a length-delimited field. */
  value: string | Buffer;
}

function wireFields(buf: Uint8Array): WireField[] {
  const r = protobuf.Reader.create(buf);
  const out: WireField[] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, value: r.uint64().toString() });
    else if (wire === 2) out.push({ no, wire, value: Buffer.from(r.bytes()) });
    else throw new Error(`unexpected wire type ${wire} for field ${no}`);
  }
  return out;
}

/** Follows a path of field numbers through nested messages and returns the innermost field. */
function at(buf: Uint8Array, ...path: number[]): WireField {
  let current: Uint8Array = buf;
  let found: WireField | undefined;
  for (const no of path) {
    found = wireFields(current).find((f) => f.no === no);
    assert.ok(found, `field ${no} missing on path ${path.join('.')}; present: ${wireFields(current).map((f) => f.no)}`);
    if (Buffer.isBuffer(found.value)) current = found.value;
  }
  return found!;
}

function encode(type: string, obj: object): Buffer {
  return encodeMessage(criType(type), obj);
}

describe('CRI proto field numbers match upstream', () => {
  const cases: { name: string; type: string; msg: object; path: number[]; want: string | number }[] = [
    { name: 'PodSandboxConfig.linux = 8, .cgroup_parent = 1', type: 'PodSandboxConfig', msg: { linux: { cgroup_parent: '/kubepods/podx' } }, path: [8, 1], want: '/kubepods/podx' },
    { name: 'PodSandboxConfig.log_directory = 3', type: 'PodSandboxConfig', msg: { log_directory: '/logs/ns_p_u' }, path: [3], want: '/logs/ns_p_u' },
    { name: 'PodSandboxConfig.metadata.attempt = 1.4', type: 'PodSandboxConfig', msg: { metadata: { name: 'p', uid: 'u', namespace: 'n', attempt: 3 } }, path: [1, 4], want: '3' },
    { name: 'PodSandboxConfig.metadata.namespace = 1.3', type: 'PodSandboxConfig', msg: { metadata: { namespace: 'kube-system' } }, path: [1, 3], want: 'kube-system' },
    { name: 'PodSandboxConfig.dns_config.searches = 4.2', type: 'PodSandboxConfig', msg: { dns_config: { searches: ['svc.cluster.local'] } }, path: [4, 2], want: 'svc.cluster.local' },
    { name: 'PodSandboxConfig.port_mappings.host_port = 5.3', type: 'PodSandboxConfig', msg: { port_mappings: [{ container_port: 80, host_port: 8080 }] }, path: [5, 3], want: '8080' },
    { name: 'sandbox namespace_options.network NODE = 8.2.1.1 (2)', type: 'PodSandboxConfig', msg: { linux: { security_context: { namespace_options: { network: 'NODE' } } } }, path: [8, 2, 1, 1], want: '2' },
    { name: 'sandbox namespace_options.pid CONTAINER = 8.2.1.2 (1)', type: 'PodSandboxConfig', msg: { linux: { security_context: { namespace_options: { pid: 'CONTAINER' } } } }, path: [8, 2, 1, 2], want: '1' },
    { name: 'sandbox security_context.run_as_group = 8', type: 'LinuxSandboxSecurityContext', msg: { run_as_group: { value: 1000 } }, path: [8, 1], want: '1000' },
    { name: 'sandbox security_context.seccomp Localhost = 9.1 (2)', type: 'LinuxSandboxSecurityContext', msg: { seccomp: { profile_type: 'Localhost' } }, path: [9, 1], want: '2' },
    { name: 'sandbox security_context.privileged = 6', type: 'LinuxSandboxSecurityContext', msg: { privileged: true }, path: [6], want: '1' },
    { name: 'ContainerConfig.log_path = 11', type: 'ContainerConfig', msg: { log_path: 'c/0.log' }, path: [11], want: 'c/0.log' },
    { name: 'ContainerConfig.linux = 15, resources.memory_limit_in_bytes = 1.4', type: 'ContainerConfig', msg: { linux: { resources: { memory_limit_in_bytes: 134217728 } } }, path: [15, 1, 4], want: '134217728' },
    { name: 'ContainerConfig.linux.resources.oom_score_adj = 15.1.5', type: 'ContainerConfig', msg: { linux: { resources: { oom_score_adj: 1000 } } }, path: [15, 1, 5], want: '1000' },
    { name: 'LinuxContainerResources.memory_swap_limit_in_bytes = 10', type: 'LinuxContainerResources', msg: { memory_swap_limit_in_bytes: 5 }, path: [10], want: '5' },
    { name: 'ContainerConfig.labels = 9 (map entry key 1)', type: 'ContainerConfig', msg: { labels: { a: 'b' } }, path: [9, 1], want: 'a' },
    { name: 'ContainerConfig.annotations = 10 (map entry value 2)', type: 'ContainerConfig', msg: { annotations: { a: 'b' } }, path: [10, 2], want: 'b' },
    { name: 'ContainerConfig.envs = 6', type: 'ContainerConfig', msg: { envs: [{ key: 'K', value: 'V' }] }, path: [6, 2], want: 'V' },
    { name: 'ContainerConfig.mounts.propagation = 7.5', type: 'ContainerConfig', msg: { mounts: [{ propagation: 'PROPAGATION_BIDIRECTIONAL' }] }, path: [7, 5], want: '2' },
    { name: 'ContainerConfig.tty = 14', type: 'ContainerConfig', msg: { tty: true }, path: [14], want: '1' },
    { name: 'ContainerConfig.image.user_specified_image = 2.18', type: 'ContainerConfig', msg: { image: { user_specified_image: 'busybox' } }, path: [2, 18], want: 'busybox' },
    { name: 'container security_context.run_as_group = 15.2.12', type: 'ContainerConfig', msg: { linux: { security_context: { run_as_group: { value: 7 } } } }, path: [15, 2, 12, 1], want: '7' },
    { name: 'container security_context.run_as_username = 6', type: 'LinuxContainerSecurityContext', msg: { run_as_username: 'nobody' }, path: [6], want: 'nobody' },
    { name: 'container security_context.no_new_privs = 11', type: 'LinuxContainerSecurityContext', msg: { no_new_privs: true }, path: [11], want: '1' },
    { name: 'container security_context.masked_paths = 13', type: 'LinuxContainerSecurityContext', msg: { masked_paths: ['/proc/kcore'] }, path: [13], want: '/proc/kcore' },
    { name: 'container security_context.readonly_paths = 14', type: 'LinuxContainerSecurityContext', msg: { readonly_paths: ['/proc/sys'] }, path: [14], want: '/proc/sys' },
    { name: 'container security_context.seccomp = 15', type: 'LinuxContainerSecurityContext', msg: { seccomp: { profile_type: 'Unconfined' } }, path: [15, 1], want: '1' },
    { name: 'container security_context.capabilities.drop = 1.2', type: 'LinuxContainerSecurityContext', msg: { capabilities: { drop_capabilities: ['ALL'] } }, path: [1, 2], want: 'ALL' },
    { name: 'ContainerStatus.log_path = 15', type: 'ContainerStatus', msg: { log_path: '/logs/c/0.log' }, path: [15], want: '/logs/c/0.log' },
    { name: 'ContainerStatus.started_at = 5', type: 'ContainerStatus', msg: { started_at: '1767225600000000001' }, path: [5], want: '1767225600000000001' },
    { name: 'ContainerStatus.exit_code = 7', type: 'ContainerStatus', msg: { exit_code: 137 }, path: [7], want: '137' },
    { name: 'ContainerStatus.state CONTAINER_EXITED = 3 (2)', type: 'ContainerStatus', msg: { state: 'CONTAINER_EXITED' }, path: [3], want: '2' },
    { name: 'ContainerStatus.reason = 10', type: 'ContainerStatus', msg: { reason: 'OOMKilled' }, path: [10], want: 'OOMKilled' },
    { name: 'ContainerStatus.image_ref = 9', type: 'ContainerStatus', msg: { image_ref: 'sha' }, path: [9], want: 'sha' },
    { name: 'ContainerStatus.resources.linux = 16.1', type: 'ContainerStatus', msg: { resources: { linux: { cpu_shares: 2 } } }, path: [16, 1, 3], want: '2' },
    { name: 'Container.state = 6, created_at = 7', type: 'Container', msg: { created_at: '5' }, path: [7], want: '5' },
    { name: 'ExecSyncRequest.timeout = 3', type: 'ExecSyncRequest', msg: { timeout: 10 }, path: [3], want: '10' },
    { name: 'ExecSyncResponse.exit_code = 3', type: 'ExecSyncResponse', msg: { exit_code: 1 }, path: [3], want: '1' },
    { name: 'StopContainerRequest.timeout = 2', type: 'StopContainerRequest', msg: { timeout: 30 }, path: [2], want: '30' },
    { name: 'PodSandboxStatusResponse.info = 2', type: 'PodSandboxStatusResponse', msg: { info: { info: '{}' } }, path: [2, 2], want: '{}' },
    { name: 'PodSandboxStatus.network.ip = 5.1', type: 'PodSandboxStatus', msg: { network: { ip: '10.88.0.2' } }, path: [5, 1], want: '10.88.0.2' },
    { name: 'PodSandboxStatus.state SANDBOX_NOTREADY = 3 (1)', type: 'PodSandboxStatus', msg: { state: 'SANDBOX_NOTREADY' }, path: [3], want: '1' },
    { name: 'PodSandboxStatus.linux.namespaces.options = 6.1.2', type: 'PodSandboxStatus', msg: { linux: { namespaces: { options: { ipc: 'NODE' } } } }, path: [6, 1, 2, 3], want: '2' },
    { name: 'PodSandbox.runtime_handler = 7', type: 'PodSandbox', msg: { runtime_handler: 'runc' }, path: [7], want: 'runc' },
    { name: 'ContainerFilter.label_selector = 4', type: 'ContainerFilter', msg: { label_selector: { k: 'v' } }, path: [4, 1], want: 'k' },
    { name: 'ContainerFilter.state = 2 (CONTAINER_RUNNING 1)', type: 'ContainerFilter', msg: { state: { state: 'CONTAINER_RUNNING' } }, path: [2, 1], want: '1' },
    { name: 'PullImageRequest.sandbox_config = 3', type: 'PullImageRequest', msg: { sandbox_config: { hostname: 'h' } }, path: [3, 2], want: 'h' },
    { name: 'AuthConfig.registry_token = 6', type: 'AuthConfig', msg: { registry_token: 't' }, path: [6], want: 't' },
    { name: 'Image.size = 4, uid = 5', type: 'Image', msg: { uid: { value: 65534 } }, path: [5, 1], want: '65534' },
    { name: 'Image.pinned = 8', type: 'Image', msg: { pinned: true }, path: [8], want: '1' },
    { name: 'RunPodSandboxRequest.runtime_handler = 2', type: 'RunPodSandboxRequest', msg: { runtime_handler: 'runc' }, path: [2], want: 'runc' },
    { name: 'PortMapping.protocol SCTP = 1 (2)', type: 'PortMapping', msg: { protocol: 'SCTP' }, path: [1], want: '2' },
    { name: 'ExecRequest.stderr = 6', type: 'ExecRequest', msg: { stderr: true }, path: [6], want: '1' },
    { name: 'AttachRequest.tty = 3', type: 'AttachRequest', msg: { tty: true }, path: [3], want: '1' },
    { name: 'MemoryUsage.rss_bytes = 5', type: 'MemoryUsage', msg: { rss_bytes: { value: 9 } }, path: [5, 1], want: '9' },
    { name: 'FilesystemUsage.inodes_used = 4', type: 'FilesystemUsage', msg: { inodes_used: { value: 9 } }, path: [4, 1], want: '9' },
    { name: 'StatusResponse.status.conditions.reason = 1.1.3', type: 'StatusResponse', msg: { status: { conditions: [{ reason: 'NetworkPluginNotReady' }] } }, path: [1, 1, 3], want: 'NetworkPluginNotReady' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const f = at(encode(c.type, c.msg), ...c.path);
      const got = Buffer.isBuffer(f.value) ? f.value.toString('utf8') : f.value;
      assert.equal(got, String(c.want));
    });
  }
});

describe('decoding into types.ts shapes', () => {
  it('keeps timestamps as strings, makes other int64s numbers, and drops unset messages', () => {
    const type = criType('ContainerStatusResponse');
    const buf = encodeMessage(type, {
      status: {
        id: 'c1',
        state: 'CONTAINER_RUNNING',
        created_at: '1767225600123456789',
        started_at: '1767225601123456789',
        resources: { linux: { memory_limit_in_bytes: 268435456, cpu_quota: -1 } },
      },
    });
    const res = normalizeMessage(type, decodeMessage(type, buf)) as any;
    assert.equal(res.status.created_at, '1767225600123456789');
    assert.equal(res.status.started_at, '1767225601123456789');
    assert.equal(res.status.finished_at, '0');
    assert.equal(res.status.state, 'CONTAINER_RUNNING');
    assert.equal(res.status.exit_code, 0);
    assert.equal(res.status.resources.linux.memory_limit_in_bytes, 268435456);
    assert.equal(res.status.resources.linux.cpu_quota, -1);
    assert.deepEqual(res.status.labels, {});
    assert.ok(!('image' in res.status), 'unset ImageSpec reads as undefined');
    assert.deepEqual(res.info, {});
  });

  it('turns uint64 wrappers in repeated messages into numbers', () => {
    const type = criType('ListImagesResponse');
    const buf = encodeMessage(type, { images: [{ id: 'sha256:a', size: 4_400_000, uid: { value: 0 } }, { id: 'sha256:b' }] });
    const res = normalizeMessage(type, decodeMessage(type, buf)) as any;
    assert.equal(res.images[0].size, 4_400_000);
    assert.deepEqual(res.images[0].uid, { value: 0 });
    assert.equal(res.images[1].uid, undefined);
    assert.deepEqual(res.images[1].repo_tags, []);
  });

  it('reads ExecSync output as Buffers', () => {
    const type = criType('ExecSyncResponse');
    const res = decodeMessage(type, encodeMessage(type, { stdout: Buffer.from('hi\n'), exit_code: 3 })) as any;
    assert.ok(Buffer.isBuffer(res.stdout));
    assert.equal(res.stdout.toString(), 'hi\n');
    assert.ok(Buffer.isBuffer(res.stderr));
    assert.equal(res.stderr.length, 0);
    assert.equal(res.exit_code, 3);
  });

  it('names service paths as upstream does', () => {
    assert.equal(criService('RuntimeService').RunPodSandbox!.path, '/runtime.v1.RuntimeService/RunPodSandbox');
    assert.equal(criService('ImageService').PullImage!.path, '/runtime.v1.ImageService/PullImage');
    assert.equal(Object.keys(criService('RuntimeService')).length, 21);
    assert.equal(Object.keys(criService('ImageService')).length, 5);
  });
});
