import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../api/meta.js';
import { FakeClock } from '../../../util/clock.js';
import { isStatusError } from '../../../api/errors.js';
import type { Namespace } from '../../../api/types.js';
import type { AdmissionAttributes, AdmissionOperation } from '../interface.js';
import { admissionAttributes, fakeLookups } from '../testing.js';
import { NamespaceLifecycle, missingNamespaceWaitMs } from './namespacelifecycle.js';

const namespace = (name: string, phase = 'Active'): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase } });
const existing = [namespace('default'), namespace('kube-system'), namespace('dev'), namespace('old', 'Terminating')];

/** A lookup that serves namespaces only, so a plugin asking for another resource finds nothing. */
const namespaces = (list: Namespace[]) => fakeLookups({ namespaces: list });

const attrs = (operation: AdmissionOperation, resource: string, ns: string, name: string, object?: KubeObject, group = '') =>
  admissionAttributes(group, 'v1', resource, { operation, namespace: ns, name, object });
const pod = (meta: { name?: string; generateName?: string }): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta });

/** Admits with virtual time running, so the plugin's short wait for a missing namespace completes. */
async function run(a: AdmissionAttributes): Promise<unknown> {
  const clock = new FakeClock();
  const p = new NamespaceLifecycle({ lookups: namespaces(existing), clock });
  // The outcome is taken at once: a refusal must not sit unhandled while the clock advances.
  const outcome = p.admit(a).then(
    () => 'admitted',
    // Compared as the wire carries it (JSON drops undefined fields).
    (err: unknown) => (isStatusError(err) ? JSON.parse(JSON.stringify(err.toStatus())) : err),
  );
  await clock.advance(missingNamespaceWaitMs);
  return outcome;
}

void describe('NamespaceLifecycle', () => {
  const status = (code: number, reason: string, message: string, details: object) => ({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code,
  });
  const cases: [string, AdmissionAttributes, unknown][] = [
    ['create in an active namespace', attrs('CREATE', 'pods', 'dev', 'web', pod({ name: 'web' })), 'admitted'],
    ['update in an active namespace', attrs('UPDATE', 'pods', 'dev', 'web', pod({ name: 'web' })), 'admitted'],
    [
      'create in a missing namespace',
      attrs('CREATE', 'pods', 'nope', 'web', pod({ name: 'web' })),
      status(404, 'NotFound', 'namespaces "nope" not found', { name: 'nope', kind: 'namespaces' }),
    ],
    [
      'update in a missing namespace',
      attrs('UPDATE', 'configmaps', 'nope', 'c', { metadata: { name: 'c' } }),
      status(404, 'NotFound', 'namespaces "nope" not found', { name: 'nope', kind: 'namespaces' }),
    ],
    [
      'create in a terminating namespace',
      attrs('CREATE', 'pods', 'old', '', pod({ generateName: 'web-' })),
      status(403, 'Forbidden', 'pods "web-" is forbidden: unable to create new content in namespace old because it is being terminated', {
        name: 'web-',
        kind: 'pods',
        causes: [{ reason: 'NamespaceTerminating', message: 'namespace old is being terminated', field: 'metadata.namespace' }],
      }),
    ],
    [
      'create of a grouped kind in a terminating namespace names its group',
      attrs('CREATE', 'deployments', 'old', 'd', { metadata: { name: 'd' } }, 'apps'),
      status(403, 'Forbidden', 'deployments.apps "d" is forbidden: unable to create new content in namespace old because it is being terminated', {
        name: 'd',
        group: 'apps',
        kind: 'deployments',
        causes: [{ reason: 'NamespaceTerminating', message: 'namespace old is being terminated', field: 'metadata.namespace' }],
      }),
    ],
    ['update in a terminating namespace', attrs('UPDATE', 'pods', 'old', 'web', pod({ name: 'web' })), 'admitted'],
    ['delete in a terminating namespace', attrs('DELETE', 'pods', 'old', 'web'), 'admitted'],
    ['delete in a missing namespace', attrs('DELETE', 'pods', 'nope', 'web'), 'admitted'],
    ['cluster-scoped create', attrs('CREATE', 'nodes', '', 'n1', { metadata: { name: 'n1' } }), 'admitted'],
    ['creating a namespace', attrs('CREATE', 'namespaces', '', 'fresh', { ...namespace('fresh') }), 'admitted'],
    ['deleting an ordinary namespace', attrs('DELETE', 'namespaces', '', 'dev'), 'admitted'],
    ...['default', 'kube-system', 'kube-public'].map((ns): [string, AdmissionAttributes, unknown] => [
      `deleting ${ns}`,
      attrs('DELETE', 'namespaces', '', ns),
      status(403, 'Forbidden', `namespaces "${ns}" is forbidden: this namespace may not be deleted`, { name: ns, kind: 'namespaces' }),
    ]),
  ];
  for (const [name, a, want] of cases) {
    void it(name, async () => assert.deepEqual(await run(a), want));
  }

  void it('handles create, update and delete but not connect', () => {
    const p = new NamespaceLifecycle({ lookups: namespaces(existing) });
    assert.deepEqual(
      (['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const).map((op) => p.handles(attrs(op, 'pods', 'dev', 'web'))),
      [true, true, true, false],
    );
  });

  void it('a create waits briefly for a namespace its cache has not seen yet', async () => {
    const clock = new FakeClock();
    const known: Namespace[] = [];
    let calls = 0;
    const p = new NamespaceLifecycle({ lookups: fakeLookups({ namespaces: known }, () => calls++), clock });
    const done = p.admit(attrs('CREATE', 'pods', 'late', 'web', pod({ name: 'web' })));
    await clock.advance(missingNamespaceWaitMs - 1);
    known.push(namespace('late'));
    assert.equal(calls, 1, 'no second lookup before the wait is over');
    await clock.advance(1);
    await done;
    assert.equal(calls, 2);
  });

  void it('honours a configured set of immortal namespaces', async () => {
    const p = new NamespaceLifecycle({ lookups: namespaces(existing), immortalNamespaces: ['dev'] });
    await assert.rejects(p.admit(attrs('DELETE', 'namespaces', '', 'dev')), /this namespace may not be deleted/);
    await p.admit(attrs('DELETE', 'namespaces', '', 'default'));
  });
});
