import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IngressClass } from '../../../api/types.js';
import { admissionAttributes, fakeLookups } from '../testing.js';
import { DefaultIngressClass } from './defaultingressclass.js';

const cls = (name: string, created: string, isDefault: boolean): IngressClass => ({
  metadata: { name, creationTimestamp: created, annotations: isDefault ? { 'ingressclass.kubernetes.io/is-default-class': 'true' } : {} },
  spec: { controller: 'example.com/c' },
});
const attrs = (ing: object) => admissionAttributes('networking.k8s.io', 'v1', 'ingresses', { namespace: 'd', name: 'i', object: ing });

test('an Ingress without a class gets the newest default class', async () => {
  const classes = [cls('old', '2026-01-01T00:00:00Z', true), cls('new', '2026-02-01T00:00:00Z', true), cls('newest', '2026-03-01T00:00:00Z', false)];
  const p = new DefaultIngressClass({ lookups: fakeLookups({ 'ingressclasses.networking.k8s.io': classes }) });
  const cases: [string, object, string | undefined][] = [
    ['no class', { metadata: { name: 'i' }, spec: {} }, 'new'],
    ['named class kept', { metadata: { name: 'i' }, spec: { ingressClassName: 'old' } }, 'old'],
    ['legacy annotation', { metadata: { name: 'i', annotations: { 'kubernetes.io/ingress.class': 'nginx' } }, spec: {} }, undefined],
  ];
  for (const [name, ing, want] of cases) {
    const a = attrs(ing);
    await p.admit(a);
    assert.equal((a.object!.spec as { ingressClassName?: string }).ingressClassName, want, name);
  }
  const none = attrs({ metadata: { name: 'i' }, spec: {} });
  await new DefaultIngressClass({ lookups: fakeLookups({}) }).admit(none);
  assert.deepEqual(none.object!.spec, {});
});
