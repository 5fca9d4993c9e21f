import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodSpec, SecurityContext } from 'kubernetes-types/core/v1.js';
import { evaluatePod, forbiddenDetail, forbiddenReason } from './checks.js';

/** A pod that passes restricted; each case breaks one thing. */
const restrictedContainer: SecurityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
const goodSpec = (): PodSpec => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', image: 'i', securityContext: { ...restrictedContainer } }],
});
const withContainer = (sc: SecurityContext): PodSpec => ({ ...goodSpec(), containers: [{ name: 'c', image: 'i', securityContext: { ...restrictedContainer, ...sc } }] });
const withPod = (extra: Partial<PodSpec>): PodSpec => ({ ...goodSpec(), ...extra });

test('a pod that follows restricted passes every level', () => {
  for (const level of ['privileged', 'baseline', 'restricted'] as const) assert.deepEqual(evaluatePod(level, {}, goodSpec()), [], level);
});

test('baseline checks: each failing pod, worded as upstream (and restricted reports them too)', () => {
  const cases: [string, PodSpec, string, Record<string, string>?][] = [
    ['hostProcess', withPod({ securityContext: { ...goodSpec().securityContext, windowsOptions: { hostProcess: true } } }), 'hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)'],
    ['host namespaces', withPod({ hostNetwork: true, hostPID: true }), 'host namespaces (hostNetwork, hostPID)'],
    ['privileged', withContainer({ privileged: true }), 'privileged (container "c" must not set securityContext.privileged=true)'],
    ['hostPorts', { ...goodSpec(), containers: [{ name: 'c', image: 'i', securityContext: restrictedContainer, ports: [{ containerPort: 80, hostPort: 8080 }] }] }, 'hostPort (container "c" uses hostPort 8080)'],
    ['AppArmor field', withContainer({ appArmorProfile: { type: 'Unconfined' } }), 'forbidden AppArmor profile (container "c" must not set AppArmor profile type to "Unconfined")'],
    [
      'AppArmor annotation',
      goodSpec(),
      'forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/c=\\"unconfined\\"")',
      { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' },
    ],
    ['SELinux', withContainer({ seLinuxOptions: { type: 'spc_t', user: 'root' } }), 'seLinuxOptions (container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)'],
    ['procMount', withContainer({ procMount: 'Unmasked' }), 'procMount (container "c" must not set securityContext.procMount to "Unmasked")'],
    ['sysctls', withPod({ securityContext: { ...goodSpec().securityContext, sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.ipv4.tcp_syncookies', value: '1' }] } }), 'forbidden sysctls (kernel.msgmax)'],
  ];
  for (const [name, spec, want, annotations] of cases) {
    assert.equal(forbiddenDetail(evaluatePod('baseline', { annotations }, spec)), want, `baseline ${name}`);
    assert.equal(forbiddenDetail(evaluatePod('restricted', { annotations }, spec)), want, `restricted ${name}`);
  }
});

test('checks restricted replaces at baseline', () => {
  const caps = withContainer({ capabilities: { drop: ['ALL'], add: ['SYS_ADMIN', 'CHOWN'] } });
  assert.equal(forbiddenDetail(evaluatePod('baseline', {}, caps)), 'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)');
  assert.equal(forbiddenDetail(evaluatePod('restricted', {}, caps)), 'unrestricted capabilities (container "c" must not include "CHOWN", "SYS_ADMIN" in securityContext.capabilities.add)');
  const hostPath = withPod({ volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }] });
  assert.equal(forbiddenDetail(evaluatePod('baseline', {}, hostPath)), 'hostPath volumes (volume "h")');
  assert.equal(forbiddenDetail(evaluatePod('restricted', {}, hostPath)), 'restricted volume types (volume "h" uses restricted volume type "hostPath")');
  const unconfined = withPod({ securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Unconfined' } } });
  assert.equal(forbiddenDetail(evaluatePod('baseline', {}, unconfined)), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")');
  assert.equal(forbiddenDetail(evaluatePod('restricted', {}, unconfined)), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")');
});

test('restricted checks: each failing pod passes baseline, worded as upstream', () => {
  const cases: [string, PodSpec, string][] = [
    ['privilege escalation', withContainer({ allowPrivilegeEscalation: true }), 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)'],
    ['capabilities', withContainer({ capabilities: {} }), 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])'],
    ['volumes', withPod({ volumes: [{ name: 'n', nfs: { server: 's', path: '/' } }, { name: 'm', nfs: { server: 's', path: '/' } }] }), 'restricted volume types (volumes "n", "m" use restricted volume type "nfs")'],
    ['runAsNonRoot unset', withPod({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }), 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)'],
    ['runAsNonRoot false', withContainer({ runAsNonRoot: false }), 'runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false)'],
    ['runAsUser', withPod({ securityContext: { ...goodSpec().securityContext, runAsUser: 0 } }), 'runAsUser=0 (pod must not set runAsUser=0)'],
    ['seccomp unset', withPod({ securityContext: { runAsNonRoot: true } }), 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'],
  ];
  for (const [name, spec, want] of cases) {
    assert.deepEqual(evaluatePod('baseline', {}, spec), [], `baseline ${name}`);
    assert.equal(forbiddenDetail(evaluatePod('restricted', {}, spec)), want, `restricted ${name}`);
  }
});

test('a bare privileged pod: every reason in upstream order', () => {
  const spec: PodSpec = { initContainers: [{ name: 'i', image: 'x' }], containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] };
  assert.equal(forbiddenReason(evaluatePod('restricted', {}, spec)), 'privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile');
  assert.equal(
    forbiddenDetail(evaluatePod('restricted', {}, spec)),
    'privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (containers "i", "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (containers "i", "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or containers "i", "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or containers "i", "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
});

test('windows pods skip the Linux-only restricted checks', () => {
  const spec: PodSpec = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c', image: 'x' }] };
  assert.deepEqual(evaluatePod('restricted', {}, spec), []);
});
