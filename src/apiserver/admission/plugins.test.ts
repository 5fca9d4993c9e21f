import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { allOrderedPlugins, enabledPluginNames, newAdmissionPlugins } from './plugins.js';

describe('admission plugin registry', () => {
  void it('runs the default-on plugins kite has in upstream order', () => {
    assert.deepEqual(enabledPluginNames(), ['NamespaceLifecycle', 'LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass']);
    const idx = (n: string) => allOrderedPlugins.indexOf(n);
    assert.ok(idx('NamespaceLifecycle') < idx('Priority') && idx('Priority') < idx('DefaultTolerationSeconds'));
  });

  void it('disables by name, and enable wins over disable', () => {
    assert.deepEqual(enabledPluginNames({ disable: ['Priority'] }), ['NamespaceLifecycle', 'LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'DefaultTolerationSeconds', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass']);
    assert.deepEqual(enabledPluginNames({ disable: ['Priority'], enable: ['Priority'] }), ['NamespaceLifecycle', 'LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass']);
    // Order comes from the registry, not from the flag.
    assert.deepEqual(enabledPluginNames({ enable: ['DefaultTolerationSeconds', 'NamespaceLifecycle'] }), ['NamespaceLifecycle', 'LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass']);
    // Upstream plugins kite lacks may be disabled (kubeadm-style flags keep working).
    assert.deepEqual(enabledPluginNames({ disable: ['ServiceAccount'] }), ['NamespaceLifecycle', 'LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass']);
  });

  void it('refuses unknown names and plugins kite does not implement', () => {
    assert.throws(() => enabledPluginNames({ enable: ['Nope'] }), /^Error: enable-admission-plugins plugin "Nope" is unknown$/);
    assert.throws(() => enabledPluginNames({ disable: ['Nope'] }), /^Error: disable-admission-plugins plugin "Nope" is unknown$/);
    assert.throws(() => enabledPluginNames({ enable: ['AlwaysDeny'] }), /plugin "AlwaysDeny" is not implemented by kite/);
  });

  void it('builds each enabled plugin under its upstream name', () => {
    const lookups = { get: async () => undefined, list: async () => [] };
    const plugins = newAdmissionPlugins({ lookups, clock: new FakeClock(), authorize: async () => ({ decision: 'allow' }) }, { disable: ['NamespaceLifecycle'] });
    assert.deepEqual(plugins.map((p) => p.name), ['LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass']);
  });
});
