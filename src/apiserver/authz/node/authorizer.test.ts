import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../api/types.js';
import type { AuthorizationAttributes } from '../authorizer.js';
import { clusterRoles } from '../rbac/bootstrappolicy/policy.js';
import { NodeAuthorizer } from './authorizer.js';

const pods: Pod[] = [
  {
    metadata: { namespace: 'ns', name: 'p1' },
    spec: {
      nodeName: 'n1',
      serviceAccountName: 'sa',
      containers: [{ name: 'c', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } }], envFrom: [{ secretRef: { name: 's-env' } }] }],
      volumes: [
        { name: 'v', secret: { secretName: 's-vol' } },
        { name: 'c', persistentVolumeClaim: { claimName: 'claim' } },
        { name: 'p', projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }] } },
      ],
    },
  },
  { metadata: { namespace: 'ns', name: 'p2' }, spec: { nodeName: 'n2', containers: [{ name: 'c' }], volumes: [{ name: 'v', secret: { secretName: 'other' } }] } },
];
const nodeRules = clusterRoles.find((r) => r.metadata?.name === 'system:node')!.rules!;
const authz = new NodeAuthorizer({ version: () => 1, pods: () => pods }, nodeRules);
const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const a = (over: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: n1, verb: 'get', isResourceRequest: true, path: '', namespace: 'ns', apiGroup: '', apiVersion: 'v1', resource: '', subresource: '', name: '', ...over,
});
const related = "no relationship found between node 'n1' and this object";

void describe('NodeAuthorizer', () => {
  const cases: [string, AuthorizationAttributes, string, string?][] = [
    ['a secret of its pod\'s volume', a({ resource: 'secrets', name: 's-vol' }), 'allow'],
    ['a secret of its pod\'s envFrom', a({ resource: 'secrets', name: 's-env' }), 'allow'],
    ['a watch of one secret by name', a({ resource: 'secrets', verb: 'watch', fieldSelector: 'metadata.name=s-vol' }), 'allow'],
    ['a secret of a pod on another node', a({ resource: 'secrets', name: 'other' }), 'noOpinion', related],
    ['listing secrets', a({ resource: 'secrets', verb: 'list' }), 'noOpinion', 'No Object name found'],
    ['writing a secret', a({ resource: 'secrets', verb: 'update', name: 's-vol' }), 'noOpinion', 'can only read resources of this type'],
    ['a configmap of its pod\'s env', a({ resource: 'configmaps', name: 'cm-env' }), 'allow'],
    ['a projected configmap', a({ resource: 'configmaps', name: 'kube-root-ca.crt' }), 'allow'],
    ['its pod\'s claim', a({ resource: 'persistentvolumeclaims', name: 'claim' }), 'allow'],
    ['a token of its pod\'s service account', a({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa' }), 'allow'],
    ['a token of another service account', a({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'default' }), 'noOpinion', related],
    ['its own Node', a({ resource: 'nodes', name: 'n1', namespace: '' }), 'allow'],
    ['another Node', a({ resource: 'nodes', name: 'n2', namespace: '' }), 'noOpinion', "node 'n1' cannot read 'n2', only its own Node object"],
    ['all Nodes', a({ resource: 'nodes', verb: 'list', namespace: '' }), 'noOpinion', "node 'n1' cannot read all nodes, only its own Node object"],
    ['its node status', a({ resource: 'nodes', subresource: 'status', verb: 'patch', name: 'n1', namespace: '' }), 'allow'],
    ['its Lease', a({ apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', verb: 'update', name: 'n1' }), 'allow'],
    ['another Lease', a({ apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', verb: 'update', name: 'n2' }), 'noOpinion', 'can only access node lease with the same name as the requesting node'],
    ['pods of its node', a({ resource: 'pods', verb: 'watch', fieldSelector: 'spec.nodeName=n1' }), 'allow'],
    ['all pods', a({ resource: 'pods', verb: 'list' }), 'noOpinion', 'can only list/watch pods with spec.nodeName field selector'],
    ['its pod', a({ resource: 'pods', name: 'p1' }), 'allow'],
    ['another node\'s pod', a({ resource: 'pods', name: 'p2' }), 'noOpinion', related],
    ['pod status', a({ resource: 'pods', subresource: 'status', verb: 'patch', name: 'p1' }), 'allow'],
    ['an eviction', a({ resource: 'pods', subresource: 'eviction', verb: 'create', name: 'p1' }), 'allow'],
    ['events, by the system:node rules', a({ resource: 'events', verb: 'create' }), 'allow'],
    ['deployments are not a node\'s', a({ apiGroup: 'apps', resource: 'deployments', verb: 'list' }), 'noOpinion'],
    ['not a node', a({ user: { name: 'alice', groups: [] }, resource: 'secrets', name: 's-vol' }), 'noOpinion'],
    ['a node without a name', a({ user: { name: 'x', groups: ['system:nodes'] }, resource: 'secrets', name: 's-vol' }), 'noOpinion', 'unknown node for user "x"'],
  ];
  for (const [name, attrs, decision, reason] of cases) {
    void it(name, async () => {
      const got = await authz.authorize(attrs);
      assert.equal(got.decision, decision);
      if (reason) assert.equal(got.reason, reason);
    });
  }
});
