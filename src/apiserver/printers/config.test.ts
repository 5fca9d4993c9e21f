import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { ConfigMap, Secret, ServiceAccount } from '../../api/types.js';
import { configMapPrinter, secretPrinter, serviceAccountPrinter } from './config.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const meta = (name: string) => ({ name, namespace: 'default', creationTimestamp: new Date(NOW - 3 * 86400_000).toISOString() });
const stored = <T>(o: T) => o as T & StoredObject;

void test('DATA counts data plus binaryData for config maps, data only for secrets', () => {
  const cm: ConfigMap = { metadata: meta('app-config'), data: { 'a.conf': 'x', 'b.conf': 'y' }, binaryData: { logo: 'iVBORw0K' } };
  const empty: ConfigMap = { metadata: meta('kube-root-ca.crt') };
  assert.deepEqual(configMapPrinter.print(stored(cm), NOW).cells, ['app-config', 3, '3d']);
  assert.deepEqual(configMapPrinter.print(stored(empty), NOW).cells, ['kube-root-ca.crt', 0, '3d']);

  const tls: Secret = { metadata: meta('web-tls'), type: 'kubernetes.io/tls', data: { 'tls.crt': 'LS0t', 'tls.key': 'LS0t' } };
  const untyped: Secret = { metadata: meta('raw') };
  assert.deepEqual(secretPrinter.print(stored(tls), NOW).cells, ['web-tls', 'kubernetes.io/tls', 2, '3d']);
  assert.deepEqual(secretPrinter.print(stored(untyped), NOW).cells, ['raw', '', 0, '3d']);
});

void test('SECRETS counts the service account secrets', () => {
  const sa: ServiceAccount = { metadata: meta('builder'), secrets: [{ name: 'builder-token' }, { name: 'registry' }] };
  const plain: ServiceAccount = { metadata: meta('default') };
  assert.deepEqual(serviceAccountPrinter.print(stored(sa), NOW).cells, ['builder', 2, '3d']);
  assert.deepEqual(serviceAccountPrinter.print(stored(plain), NOW).cells, ['default', 0, '3d']);
});
