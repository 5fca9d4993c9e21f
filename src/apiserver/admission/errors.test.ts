import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/meta.js';
import { admissionForbidden } from './errors.js';
import { admissionAttributes } from './testing.js';

const attrs = (object?: KubeObject) => admissionAttributes('scheduling.k8s.io', 'v1', 'priorityclasses', { operation: object ? 'CREATE' : 'DELETE', name: 'high', object });

void describe('admissionForbidden', () => {
  const cases: [string, KubeObject | undefined, string][] = [
    ['names the object', { metadata: { name: 'high', generateName: 'h-' } }, 'priorityclasses.scheduling.k8s.io "high" is forbidden: why'],
    ['uses generateName before a name exists', { metadata: { generateName: 'h-' } }, 'priorityclasses.scheduling.k8s.io "h-" is forbidden: why'],
    ['says Unknown without an object', undefined, 'priorityclasses.scheduling.k8s.io "Unknown" is forbidden: why'],
  ];
  for (const [name, object, message] of cases) {
    void it(name, () => {
      const err = admissionForbidden(attrs(object), 'why');
      assert.equal(err.code, 403);
      assert.equal(err.message, message);
      assert.equal(err.details?.group, 'scheduling.k8s.io');
    });
  }
});
