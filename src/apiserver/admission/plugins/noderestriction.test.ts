import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { isStatusError } from '../../../api/errors.js';
import { fakeLookups } from '../testing.js';
import type { AdmissionAttributes, AdmissionOperation } from '../interface.js';
import { forbiddenLabels, NodeRestriction, nodeIdentity } from './noderestriction.js';

const node1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const admin = { name: 'admin', groups: ['system:masters'] };
const plugin = new NodeRestriction({
  lookups: fakeLookups({
    nodes: [{ metadata: { name: 'n1', uid: 'uid-n1' } }],
    pods: [{ metadata: { namespace: 'ns', name: 'mine' }, spec: { nodeName: 'n1', containers: [] } }],
  }),
});

interface Request {
  operation: AdmissionOperation;
  resource: [string, string];
  subresource?: string;
  namespace?: string;
  name?: string;
  object?: object;
  oldObject?: object;
  user?: AdmissionAttributes['user'];
}

function attrs(r: Request): AdmissionAttributes {
  return {
    operation: r.operation,
    resource: findResource(r.resource[0], 'v1', r.resource[1])!,
    subresource: r.subresource ?? '',
    namespace: r.namespace ?? '',
    name: r.name ?? '',
    object: r.object as KubeObject | undefined,
    oldObject: r.oldObject as KubeObject | undefined,
    user: r.user ?? node1,
    dryRun: false,
  };
}

async function verdict(r: Request): Promise<string> {
  const a = attrs(r);
  if (!plugin.handles(a)) return 'not handled';
  try {
    await plugin.admit(a);
    return 'allowed';
  } catch (err) {
    assert.ok(isStatusError(err));
    return `${err.code} ${err.message}`;
  }
}

const nodeObj = (name: string, labels: Record<string, string> = {}, taints: object[] = []) => ({ metadata: { name, labels }, spec: { taints } });
const pod = (nodeName: string, extra: Record<string, unknown> = {}) => ({ metadata: { name: 'mine', namespace: 'ns', labels: { a: 'b' } }, spec: { nodeName, containers: [{ name: 'c', image: 'i' }] }, ...extra });
const mirror = (spec: Record<string, unknown> = {}, owner: Record<string, unknown> = {}) => ({
  metadata: {
    name: 'static-n1',
    namespace: 'ns',
    annotations: { 'kubernetes.io/config.mirror': 'hash' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-n1', controller: true, ...owner }],
  },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }], ...spec },
});

void describe('nodeIdentity', () => {
  const cases: [AdmissionAttributes['user'], ReturnType<typeof nodeIdentity>][] = [
    [node1, { isNode: true, nodeName: 'n1' }],
    [{ name: 'system:node:n1', groups: [] }, { isNode: false, nodeName: '' }],
    [{ name: 'kubelet', groups: ['system:nodes'] }, { isNode: true, nodeName: '' }],
  ];
  for (const [user, want] of cases) void it(user.name, () => assert.deepEqual(nodeIdentity(user), want));
});

void describe('forbiddenLabels', () => {
  void it('allows the kubelet labels and non-kubernetes labels, refuses the rest, sorted', () => {
    const labels = {
      'kubernetes.io/hostname': 'n1',
      'node.kubernetes.io/instance-type': 'x',
      'x.kubelet.kubernetes.io/k': 'v',
      'example.com/team': 'a',
      plain: 'v',
      'node-role.kubernetes.io/control-plane': '',
      'a.node-restriction.kubernetes.io/x': 'v',
      'k8s.io/other': 'v',
    };
    assert.deepEqual(forbiddenLabels(labels), ['a.node-restriction.kubernetes.io/x', 'k8s.io/other', 'node-role.kubernetes.io/control-plane']);
    // Removing a forbidden label is a modification too; unchanged ones are not.
    assert.deepEqual(forbiddenLabels({ 'kubernetes.io/os': 'linux' }, { 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/worker': '' }), ['node-role.kubernetes.io/worker']);
    assert.deepEqual(forbiddenLabels({ 'node-role.kubernetes.io/worker': '' }, { 'node-role.kubernetes.io/worker': '' }), []);
  });
});

void describe('NodeRestriction', () => {
  const cases: [string, Request, string][] = [
    ['other users are not its business', { operation: 'UPDATE', resource: ['', 'nodes'], name: 'n2', object: nodeObj('n2'), oldObject: nodeObj('n2'), user: admin }, 'not handled'],
    ['a node user without a node name', { operation: 'UPDATE', resource: ['', 'nodes'], name: 'n1', object: nodeObj('n1'), oldObject: nodeObj('n1'), user: { name: 'kubelet', groups: ['system:nodes'] } }, '403 nodes "n1" is forbidden: could not determine node from user "kubelet"'],
    ['registers itself with kubelet labels', { operation: 'CREATE', resource: ['', 'nodes'], object: nodeObj('n1', { 'kubernetes.io/hostname': 'n1' }) }, 'allowed'],
    ['registers with a role label', { operation: 'CREATE', resource: ['', 'nodes'], object: nodeObj('n1', { 'node-role.kubernetes.io/control-plane': '' }) }, '403 nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-role.kubernetes.io/control-plane'],
    ['modifies another node', { operation: 'UPDATE', resource: ['', 'nodes'], name: 'n2', object: nodeObj('n2'), oldObject: nodeObj('n2') }, '403 nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'],
    ['sets the control-plane role on itself', { operation: 'UPDATE', resource: ['', 'nodes'], name: 'n1', object: nodeObj('n1', { 'node-role.kubernetes.io/control-plane': '' }), oldObject: nodeObj('n1') }, '403 nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane'],
    ['sets its own labels', { operation: 'UPDATE', resource: ['', 'nodes'], name: 'n1', object: nodeObj('n1', { team: 'a', 'kubernetes.io/arch': 'arm64' }), oldObject: nodeObj('n1') }, 'allowed'],
    ['changes its taints', { operation: 'UPDATE', resource: ['', 'nodes'], name: 'n1', object: nodeObj('n1'), oldObject: nodeObj('n1', {}, [{ key: 'k', effect: 'NoSchedule' }]) }, '403 nodes "n1" is forbidden: node "n1" is not allowed to modify taints'],
    ['updates its status', { operation: 'UPDATE', resource: ['', 'nodes'], subresource: 'status', name: 'n1', object: nodeObj('n1'), oldObject: nodeObj('n1') }, 'allowed'],
    ['deletes itself', { operation: 'DELETE', resource: ['', 'nodes'], name: 'n1', oldObject: nodeObj('n1') }, 'allowed'],
    ['updates its pod status', { operation: 'UPDATE', resource: ['', 'pods'], subresource: 'status', namespace: 'ns', name: 'mine', object: pod('n1'), oldObject: pod('n1') }, 'allowed'],
    ['updates another node pod status', { operation: 'UPDATE', resource: ['', 'pods'], subresource: 'status', namespace: 'ns', name: 'mine', object: pod('n2'), oldObject: pod('n2') }, '403 pods "mine" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself'],
    ['relabels a pod through status', { operation: 'UPDATE', resource: ['', 'pods'], subresource: 'status', namespace: 'ns', name: 'mine', object: { ...pod('n1'), metadata: { name: 'mine', labels: { a: 'c' } } }, oldObject: pod('n1') }, '403 pods "mine" is forbidden: node "n1" cannot update labels through pod status'],
    ['deletes its pod', { operation: 'DELETE', resource: ['', 'pods'], namespace: 'ns', name: 'mine', oldObject: pod('n1') }, 'allowed'],
    ['deletes another node pod', { operation: 'DELETE', resource: ['', 'pods'], namespace: 'ns', name: 'mine', oldObject: pod('n2') }, '403 pods "Unknown" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'],
    ['updates a pod', { operation: 'UPDATE', resource: ['', 'pods'], namespace: 'ns', name: 'mine', object: pod('n1'), oldObject: pod('n1') }, '403 pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods'],
    ['binds a pod', { operation: 'CREATE', resource: ['', 'pods'], subresource: 'binding', namespace: 'ns', name: 'mine', object: { metadata: { name: 'mine' } } }, `403 pods "mine" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`],
    ['creates a mirror pod', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror() }, 'allowed'],
    ['creates a plain pod', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: pod('n1') }, '403 pods "mine" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods'],
    ['creates a mirror pod elsewhere', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({ nodeName: 'n2' }) }, '403 pods "static-n1" is forbidden: node "n1" can only create pods with spec.nodeName set to itself'],
    ['creates a mirror pod owned by another node', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({}, { name: 'n2' }) }, '403 pods "static-n1" is forbidden: node "n1" can only create pods with an owner reference set to itself'],
    ['creates a mirror pod without a controller reference', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({}, { controller: false }) }, '403 pods "static-n1" is forbidden: node "n1" can only create pods with a controller owner reference set to itself'],
    ['creates a mirror pod with a stale node uid', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({}, { uid: 'old' }) }, '403 pods "static-n1" is forbidden: node n1 UID mismatch: expected old got uid-n1'],
    ['creates a mirror pod with a secret volume', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({ volumes: [{ name: 'v', secret: { secretName: 's' } }] }) }, '403 pods "static-n1" is forbidden: node "n1" can not create pods that reference secrets'],
    ['creates a mirror pod with a configmap env', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({ containers: [{ name: 'c', image: 'i', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'm', key: 'k' } } }] }] }) }, '403 pods "static-n1" is forbidden: node "n1" can not create pods that reference configmaps'],
    ['creates a mirror pod with a service account', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({ serviceAccountName: 'sa' }) }, '403 pods "static-n1" is forbidden: node "n1" can not create pods that reference a service account'],
    ['creates a mirror pod with a claim', { operation: 'CREATE', resource: ['', 'pods'], namespace: 'ns', object: mirror({ volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] }) }, '403 pods "static-n1" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims'],
    ['renews its lease', { operation: 'UPDATE', resource: ['coordination.k8s.io', 'leases'], namespace: 'kube-node-lease', name: 'n1', object: { metadata: { name: 'n1' } }, oldObject: { metadata: { name: 'n1' } } }, 'allowed'],
    ['creates its lease', { operation: 'CREATE', resource: ['coordination.k8s.io', 'leases'], namespace: 'kube-node-lease', object: { metadata: { name: 'n1' } } }, 'allowed'],
    ['creates another node lease', { operation: 'CREATE', resource: ['coordination.k8s.io', 'leases'], namespace: 'kube-node-lease', object: { metadata: { name: 'n2' } } }, '403 leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node'],
    ['a lease elsewhere', { operation: 'UPDATE', resource: ['coordination.k8s.io', 'leases'], namespace: 'kube-system', name: 'n1', object: { metadata: { name: 'n1' } }, oldObject: { metadata: { name: 'n1' } } }, '403 leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace'],
    ['other resources are not its business', { operation: 'CREATE', resource: ['', 'events'], namespace: 'ns', object: { metadata: { name: 'e' } } }, 'allowed'],
  ];
  for (const [name, request, want] of cases) {
    void it(name, async () => assert.equal(await verdict(request), want));
  }
});
