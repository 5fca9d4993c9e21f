// bench/authz: the per-request cost of authorization, in process: the RBAC authorizer deciding a
// user's request among N RoleBindings (its own binding one of them) beside the privileged-group
// authorizer that decides system:masters' requests (the floor: one group lookup).
//   node --import tsx bench/authz.ts [--bindings 10000] [--calls 200000]
import { parseArgs } from '../src/util/args.js';
import type { ClusterRole, RoleBinding } from '../src/api/types.js';
import type { AuthorizationAttributes, Authorizer } from '../src/apiserver/authz/authorizer.js';
import { PrivilegedGroupsAuthorizer } from '../src/apiserver/authz/builtin.js';
import { RbacAuthorizer } from '../src/apiserver/authz/rbac/authorizer.js';

const args = parseArgs(process.argv.slice(2));
const bindings = Number(args.flags.get('bindings') ?? 10_000);
const calls = Number(args.flags.get('calls') ?? 200_000);
const namespaces = 100;

const role: ClusterRole = {
  metadata: { name: 'bench-edit' },
  rules: [{ verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], apiGroups: [''], resources: ['pods', 'services', 'configmaps'] }],
};
const binding = (ns: string, name: string, user: string): RoleBinding => ({
  metadata: { name, namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-edit' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
});
const roleBindings = Array.from({ length: bindings }, (_, i) => binding(`ns-${i % namespaces}`, `b-${i}`, `user-${i}`));
const rbac = new RbacAuthorizer({
  version: () => 1,
  roles: () => [],
  roleBindings: () => roleBindings,
  clusterRoles: () => [role],
  clusterRoleBindings: () => [],
});

const request = (user: AuthorizationAttributes['user'], namespace: string): AuthorizationAttributes => ({
  user,
  verb: 'get',
  isResourceRequest: true,
  path: `/api/v1/namespaces/${namespace}/pods/p`,
  namespace,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  name: 'p',
});

async function measure(label: string, authorizer: Authorizer, attrs: AuthorizationAttributes, want: string): Promise<void> {
  const first = await authorizer.authorize(attrs);
  if (first.decision !== want) throw new Error(`${label}: ${first.decision}, want ${want}`);
  const start = performance.now();
  for (let i = 0; i < calls; i++) await authorizer.authorize(attrs);
  const ms = performance.now() - start;
  console.log(`${label.padEnd(58)} ${((ms * 1000) / calls).toFixed(2).padStart(8)} µs/call ${Math.round(calls / (ms / 1000)).toLocaleString('en-US').padStart(12)} calls/s`);
}

const bound = bindings - 1; // the last binding's user, in ns-<bound % namespaces>
console.log(`bench/authz: ${calls} calls each; ${bindings} RoleBindings over ${namespaces} namespaces\n`);
// The first call also builds the index (kept until a role or binding changes).
const indexStart = performance.now();
await new RbacAuthorizer({ version: () => 1, roles: () => [], roleBindings: () => roleBindings, clusterRoles: () => [role], clusterRoleBindings: () => [] }).authorize(request({ name: 'x', groups: [] }, 'ns-0'));
console.log(`RBAC index of ${bindings} bindings built in ${(performance.now() - indexStart).toFixed(1)} ms (once per change of a role or binding)\n`);
await measure('floor: system:masters (privileged-group authorizer)', new PrivilegedGroupsAuthorizer(), request({ name: 'admin', groups: ['system:masters'] }, 'ns-0'), 'allow');
await measure(`RBAC: bound user, allowed (${bindings} bindings)`, rbac, request({ name: `user-${bound}`, groups: ['system:authenticated'] }, `ns-${bound % namespaces}`), 'allow');
await measure(`RBAC: unbound user, no opinion (${bindings} bindings)`, rbac, request({ name: 'nobody', groups: ['system:authenticated'] }, 'ns-0'), 'noOpinion');
