// ValidatingAdmissionPolicy with the real kubectl: a CEL policy bound with Deny refuses a
// deployment with upstream's message, admits one within bounds, and a Warn binding makes kubectl
// print the warning. Only the API server runs: no pods, no node.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

const policy = (name: string, expression: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "${expression}"
`;

const binding = (name: string, policyName: string, actions: string[], namespace: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${policyName}
  validationActions: [${actions.join(', ')}]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ${namespace}
`;

describe('ValidatingAdmissionPolicy with kubectl', () => {
  let server: KiteServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('a Deny binding refuses with upstream message and admits within bounds', async () => {
    kubectlOk(server, ['apply', '-f', '-'], policy('max-replicas', 'object.spec.replicas <= 5') + '---\n' + binding('max-replicas-binding', 'max-replicas', ['Deny'], 'default'));
    const table = kubectlOk(server, ['get', 'validatingadmissionpolicybindings']);
    assert.match(table, /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\n/);
    assert.match(table, /max-replicas-binding\s+max-replicas\s+<unset>/);
    // The status controller reports the generation it saw (no type-checking warnings).
    await eventually(() => {
      const status = kubectlOk(server, ['get', 'validatingadmissionpolicy', 'max-replicas', '-o', 'jsonpath={.status}']);
      return status === '{"observedGeneration":1,"typeChecking":{}}' ? status : undefined;
    }, 'the policy status');
    // The policy is read from the API server's cache: wait until it is in force.
    const refused = await eventually(() => {
      const r = kubectl(server, ['create', 'deployment', 'd', '--image=x', '--replicas=6']);
      return r.code !== 0 ? r : undefined;
    }, 'the policy to refuse');
    assert.equal(
      refused.stderr.trim(),
      `error: failed to create deployment: deployments.apps "d" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`,
    );
    assert.equal(kubectlOk(server, ['create', 'deployment', 'd', '--image=x', '--replicas=5']).trim(), 'deployment.apps/d created');
    // Raising replicas past the bound is an update the policy refuses too.
    const edit = kubectl(server, ['patch', 'deployment', 'd', '-p', '{"spec":{"replicas":7}}']);
    assert.notEqual(edit.code, 0);
    // kubectl renders a 422 by its causes; upstream's cause has no field, hence the ": :".
    assert.equal(
      edit.stderr.trim(),
      `The deployments "d" is invalid: : ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`,
    );
  });

  it('refuses a policy whose expression does not compile and a binding with Deny and Warn', () => {
    const bad = kubectl(server, ['apply', '-f', '-'], policy('broken', 'object.spec.replicas <='));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /^The ValidatingAdmissionPolicy "broken" is invalid: spec.validations\[0\].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:/);
    const both = kubectl(server, ['apply', '-f', '-'], binding('both', 'max-replicas', ['Deny', 'Warn'], 'default'));
    assert.notEqual(both.code, 0);
    assert.match(both.stderr, /spec.validationActions: Invalid value: .*: must not contain both Deny and Warn/);
  });

  it('a Warn binding makes kubectl print the warning and admits', async () => {
    kubectlOk(server, ['create', 'namespace', 'warned']);
    kubectlOk(server, ['apply', '-f', '-'], policy('small', 'object.spec.replicas <= 1') + '---\n' + binding('small-warn', 'small', ['Warn'], 'warned'));
    const r = await eventually(() => {
      const out = kubectl(server, ['-n', 'warned', 'create', 'deployment', `w${Date.now()}`, '--image=x', '--replicas=2']);
      assert.equal(out.code, 0, out.stderr);
      return out.stderr.includes('Warning:') ? out : undefined;
    }, 'the Warn binding to warn');
    assert.match(r.stderr, /^Warning: Validation failed for ValidatingAdmissionPolicy 'small' with binding 'small-warn': failed expression: object.spec.replicas <= 1$/m);
    assert.match(r.stdout, /^deployment.apps\/w\d+ created$/m);
  });
});
