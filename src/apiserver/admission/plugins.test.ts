import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { allOrderedPlugins, enabledPluginNames, newAdmissionPlugins } from './plugins.js';

/** Upstream 1.33's default-on plugins that kite implements, in upstream's order, NodeRestriction on as kubeadm runs it. */
const defaults = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
];
const without = (...names: string[]) => defaults.filter((n) => !names.includes(n));

describe('admission plugin registry', () => {
  void it('runs the default-on plugins kite has in upstream order', () => {
    assert.deepEqual(enabledPluginNames(), defaults);
    const idx = (n: string) => allOrderedPlugins.indexOf(n);
    for (let i = 1; i < defaults.length; i++) assert.ok(idx(defaults[i - 1]!) < idx(defaults[i]!), defaults[i]);
  });

  void it('disables by name, and enable wins over disable', () => {
    assert.deepEqual(enabledPluginNames({ disable: ['Priority'] }), without('Priority'));
    assert.deepEqual(enabledPluginNames({ disable: ['Priority'], enable: ['Priority'] }), defaults);
    // Order comes from the registry, not from the flag.
    assert.deepEqual(enabledPluginNames({ enable: ['DefaultTolerationSeconds', 'NamespaceLifecycle'] }), defaults);
    assert.deepEqual(enabledPluginNames({ disable: ['ServiceAccount', 'ResourceQuota'] }), without('ServiceAccount', 'ResourceQuota'));
    // Upstream plugins kite lacks may be disabled (kubeadm-style flags keep working).
    assert.deepEqual(enabledPluginNames({ disable: ['DefaultStorageClass'] }), defaults);
  });

  void it('refuses unknown names and plugins kite does not implement', () => {
    assert.throws(() => enabledPluginNames({ enable: ['Nope'] }), /^Error: enable-admission-plugins plugin "Nope" is unknown$/);
    assert.throws(() => enabledPluginNames({ disable: ['Nope'] }), /^Error: disable-admission-plugins plugin "Nope" is unknown$/);
    assert.throws(() => enabledPluginNames({ enable: ['AlwaysDeny'] }), /plugin "AlwaysDeny" is not implemented by kite/);
  });

  void it('builds each enabled plugin under its upstream name', () => {
    const lookups = { get: async () => undefined, list: async () => [] };
    const resourceQuotas = { list: async () => [], updateStatus: async () => undefined };
    const authorize = async () => ({ decision: 'allow' as const });
    const plugins = newAdmissionPlugins({ lookups, clock: new FakeClock(), resourceQuotas, authorize }, { disable: ['NamespaceLifecycle'] });
    assert.deepEqual(
      plugins.map((p) => p.name),
      without('NamespaceLifecycle'),
    );
  });
});
