import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../api/types.js';
import { DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS, containerSecurityContext, namespaceOptions, sandboxSecurityContext, seccompProfile, verifyRunAsNonRoot } from './security.js';

const cfg = { rootDir: '/var/lib/kite' };
const mk = (spec: Partial<Pod['spec']> = {}, c: Partial<Container> = {}): { pod: Pod; c: Container } => {
  const container: Container = { name: 'c', ...c };
  return { pod: { metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [container], ...spec } }, c: container };
};

describe('namespaceOptions', () => {
  for (const [spec, want] of [
    [{}, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }],
    [{ hostNetwork: true, hostPID: true, hostIPC: true }, { network: 'NODE', pid: 'NODE', ipc: 'NODE' }],
    [{ shareProcessNamespace: true }, { network: 'POD', pid: 'POD', ipc: 'POD' }],
  ] as const) {
    it(JSON.stringify(spec), () => assert.deepEqual(namespaceOptions(mk(spec).pod), want));
  }
});

describe('seccompProfile', () => {
  it('maps the types', () => {
    assert.deepEqual(seccompProfile(undefined, cfg), { profile_type: 'Unconfined' });
    assert.deepEqual(seccompProfile({ type: 'RuntimeDefault' }, cfg), { profile_type: 'RuntimeDefault' });
    assert.deepEqual(seccompProfile({ type: 'Localhost', localhostProfile: 'prof.json' }, cfg), { profile_type: 'Localhost', localhost_ref: '/var/lib/kite/seccomp/prof.json' });
  });
});

describe('containerSecurityContext', () => {
  it('defaults: masked and read-only paths, no privileges', () => {
    const { pod, c } = mk();
    const sc = containerSecurityContext(pod, c, cfg);
    assert.equal(sc.privileged, false);
    assert.equal(sc.no_new_privs, false);
    assert.deepEqual(sc.masked_paths, DEFAULT_MASKED_PATHS);
    assert.deepEqual(sc.readonly_paths, DEFAULT_READONLY_PATHS);
    assert.equal(sc.capabilities, undefined);
  });
  it('container fields override the pod', () => {
    const { pod, c } = mk(
      { securityContext: { runAsUser: 1000, runAsGroup: 2000, fsGroup: 3000, supplementalGroups: [4000], seccompProfile: { type: 'RuntimeDefault' } } },
      { securityContext: { runAsUser: 1001, privileged: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, procMount: 'Unmasked' } },
    );
    assert.deepEqual(containerSecurityContext(pod, c, cfg), {
      privileged: true,
      readonly_rootfs: true,
      no_new_privs: true,
      namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
      seccomp: { profile_type: 'RuntimeDefault' },
      masked_paths: [],
      readonly_paths: [],
      capabilities: { add_capabilities: ['NET_ADMIN'], drop_capabilities: ['ALL'] },
      run_as_user: { value: 1001 },
      run_as_group: { value: 2000 },
      supplemental_groups: [3000, 4000],
    });
  });
});

describe('sandboxSecurityContext', () => {
  it('privileged when any container is', () => {
    const { pod } = mk({ initContainers: [{ name: 'i', securityContext: { privileged: true } }], hostNetwork: true, securityContext: { runAsUser: 5 } });
    const sc = sandboxSecurityContext(pod, cfg);
    assert.equal(sc.privileged, true);
    assert.equal(sc.namespace_options?.network, 'NODE');
    assert.deepEqual(sc.run_as_user, { value: 5 });
  });
});

describe('verifyRunAsNonRoot', () => {
  const who = '(pod: "p_ns(u)", container: c)';
  for (const [what, podSC, cSC, image, want] of [
    ['not asked', {}, {}, { uid: 0 }, undefined],
    ['runAsUser 0', { runAsNonRoot: true }, { runAsUser: 0 }, {}, `container's runAsUser breaks non-root policy ${who}`],
    ['runAsUser 1000', { runAsNonRoot: true }, { runAsUser: 1000 }, { uid: 0 }, undefined],
    ['image root', { runAsNonRoot: true }, {}, { uid: 0 }, `container has runAsNonRoot and image will run as root ${who}`],
    ['image without user', {}, { runAsNonRoot: true }, {}, `container has runAsNonRoot and image will run as root ${who}`],
    ['image user name', { runAsNonRoot: true }, {}, { username: 'nginx' }, `container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root ${who}`],
    ['image uid 101', { runAsNonRoot: true }, {}, { uid: 101 }, undefined],
  ] as const) {
    it(what, () => {
      const { pod, c } = mk({ securityContext: podSC }, { securityContext: cSC });
      assert.equal(verifyRunAsNonRoot(pod, c, image), want);
    });
  }
});
