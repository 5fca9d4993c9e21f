// The built-in admission plugins seen through the real kubectl against a server without nodes:
// PodSecurity refusals and warnings as upstream words them, LimitRanger's defaults and
// RuntimeClass's overhead on created pods.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';

const privilegedPod = (ns: string) => `apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ${ns}
spec:
  containers:
  - name: c
    image: busybox:1.35
    securityContext:
      privileged: true
`;

const restrictedViolations =
  'privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

describe('built-in admission plugins', () => {
  let server: KiteServer;

  before(async () => {
    server = await startServer({ dataDir: tempDir('adm-builtin') });
  });

  after(async () => {
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });

  void it('PodSecurity enforce refuses a privileged pod with upstream message', () => {
    kubectlOk(server, ['create', 'namespace', 'enforced']);
    kubectlOk(server, ['label', 'namespace', 'enforced', 'pod-security.kubernetes.io/enforce=restricted']);
    const r = kubectl(server, ['apply', '-f', '-'], privilegedPod('enforced'));
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      `Error from server (Forbidden): error when creating "STDIN": pods "p" is forbidden: violates PodSecurity "restricted:latest": ${restrictedViolations}`,
    );
  });

  void it('PodSecurity warn admits the pod and kubectl prints the warning', () => {
    kubectlOk(server, ['create', 'namespace', 'warned']);
    kubectlOk(server, ['label', 'namespace', 'warned', 'pod-security.kubernetes.io/warn=restricted']);
    const r = kubectl(server, ['create', '-f', '-'], privilegedPod('warned'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'pod/p created');
    assert.equal(r.stderr.trim(), `Warning: would violate PodSecurity "restricted:latest": ${restrictedViolations}`);
  });

  void it('PodSecurity warns about existing pods when the enforce level tightens', () => {
    const r = kubectl(server, ['label', 'namespace', 'warned', 'pod-security.kubernetes.io/enforce=baseline']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'namespace/warned labeled');
    assert.equal(r.stderr.trim(), 'Warning: existing pods in namespace "warned" violate the new PodSecurity enforce level "baseline:latest"\nWarning: p: privileged');
  });

  void it('LimitRanger defaults a container\'s requests and limits', () => {
    kubectlOk(server, ['create', 'namespace', 'limited']);
    kubectlOk(server, ['apply', '-f', '-'], `apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: limited
spec:
  limits:
  - type: Container
    default:
      cpu: 500m
    defaultRequest:
      cpu: 100m
      memory: 64Mi
`);
    kubectlOk(server, ['run', 'p', '-n', 'limited', '--image=busybox:1.35']);
    assert.equal(kubectlOk(server, ['get', 'pod', 'p', '-n', 'limited', '-o', 'jsonpath={.spec.containers[0].resources.requests}']), '{"cpu":"100m","memory":"64Mi"}');
    assert.equal(kubectlOk(server, ['get', 'pod', 'p', '-n', 'limited', '-o', 'jsonpath={.spec.containers[0].resources.limits}']), '{"cpu":"500m"}');
    assert.equal(
      kubectlOk(server, ['get', 'pod', 'p', '-n', 'limited', '-o', 'jsonpath={.metadata.annotations.kubernetes\\.io/limit-ranger}']),
      'LimitRanger plugin set: cpu, memory request for container p; cpu limit for container p',
    );
  });

  void it('RuntimeClass sets the pod overhead and refuses an unknown class', () => {
    kubectlOk(server, ['apply', '-f', '-'], `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: sandboxed
handler: runc
overhead:
  podFixed:
    cpu: 250m
    memory: 120Mi
`);
    kubectlOk(server, ['run', 'sandboxed', '--image=busybox:1.35', '--overrides', '{"spec":{"runtimeClassName":"sandboxed"}}']);
    assert.equal(kubectlOk(server, ['get', 'pod', 'sandboxed', '-o', 'jsonpath={.spec.overhead}']), '{"cpu":"250m","memory":"120Mi"}');
    const r = kubectl(server, ['run', 'nope', '--image=busybox:1.35', '--overrides', '{"spec":{"runtimeClassName":"missing"}}']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'Error from server (Forbidden): pods "nope" is forbidden: pod rejected: RuntimeClass "missing" not found');
  });
});
