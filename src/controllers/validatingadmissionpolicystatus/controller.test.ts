import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { ValidatingAdmissionPolicy } from 'kubernetes-types/admissionregistration/v1.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { ValidatingAdmissionPolicyStatusController } from './controller.js';

test('each policy generation gets observedGeneration and typeChecking in its status', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = await FakeApi.start({ clock });
  const admin = api.client();
  const client = api.client({ name: 'system:serviceaccount:kube-system:validatingadmissionpolicy-status-controller', groups: ['system:authenticated'] });
  const informers = new SharedInformerFactory({ client, clock });
  const controller = new ValidatingAdmissionPolicyStatusController({ client, informers, clock, logger: pino({ level: 'silent' }) });
  controller.start();
  informers.start();
  try {
    const policies = admin.resource<ValidatingAdmissionPolicy>('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies');
    // kubernetes-types' NamedRuleWithOperations lacks the fields it inlines from Rule.
    const rules: object[] = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }];
    const spec: ValidatingAdmissionPolicy['spec'] = { matchConstraints: { resourceRules: rules }, validations: [{ expression: 'object.spec.replicas <= 5' }] };
    await policies.create({ metadata: { name: 'p' }, spec });
    const observed = async (generation: number) => {
      for (let i = 0; i < 50; i++) {
        const p = await policies.get('p');
        if (p.status?.observedGeneration === generation) return p.status;
        await clock.advance(100);
      }
      assert.fail(`generation ${generation} never observed`);
    };
    assert.deepEqual(await observed(1), { observedGeneration: 1, typeChecking: {} });
    const p = await policies.get('p');
    await policies.update({ ...p, spec: { ...p.spec, validations: [{ expression: 'object.spec.replicas <= 3' }] } });
    assert.deepEqual(await observed(2), { observedGeneration: 2, typeChecking: {} });
  } finally {
    await controller.stop();
    await informers.shutdown();
    await api.stop();
  }
});
