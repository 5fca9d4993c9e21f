// Cluster plumbing: Node, Namespace, Lease, PriorityClass, RuntimeClass.
import type { Lease, Namespace, Node, PriorityClass, RuntimeClass } from '../../api/types.js';
import { age, ageColumn, column, nameColumn, printer, wide } from './printer.js';

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';
const NODE_ROLE_LABEL = 'kubernetes.io/role';

/** Roles from node-role.kubernetes.io/<role> keys and kubernetes.io/role=<role>, sorted and deduplicated. */
export function nodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
    if (key.startsWith(NODE_ROLE_PREFIX)) {
      const role = key.slice(NODE_ROLE_PREFIX.length);
      if (role) roles.add(role);
    } else if (key === NODE_ROLE_LABEL && value) {
      roles.add(value);
    }
  }
  return [...roles].sort();
}

/** "Ready" / "NotReady" (from the Ready condition) or "Unknown" without one, plus ",SchedulingDisabled" when cordoned. */
export function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  return status.join(',');
}

const nodeAddress = (node: Node, type: string) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
const addressesDoc =
  "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";

export const nodePrinter = printer<Node>(
  [
    nameColumn,
    column('Status', 'string', 'The status of the node'),
    column('Roles', 'string', 'The roles of the node'),
    ageColumn,
    column('Version', 'string', 'Kubelet Version reported by the node.'),
    wide('Internal-IP', 'string', addressesDoc),
    wide('External-IP', 'string', addressesDoc),
    wide('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).'),
    wide('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    wide('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).'),
  ],
  (node, now) => {
    const info = node.status?.nodeInfo;
    return {
      cells: [
        node.metadata.name,
        nodeStatus(node),
        nodeRoles(node).join(',') || '<none>',
        age(node, now),
        info?.kubeletVersion ?? '',
        nodeAddress(node, 'InternalIP'),
        nodeAddress(node, 'ExternalIP'),
        info?.osImage || '<unknown>',
        info?.kernelVersion || '<unknown>',
        info?.containerRuntimeVersion || '<unknown>',
      ],
    };
  },
);

export const namespacePrinter = printer<Namespace>([nameColumn, column('Status', 'string', 'The status of the namespace'), ageColumn], (ns, now) => ({
  cells: [ns.metadata.name, ns.status?.phase ?? '', age(ns, now)],
}));

export const leasePrinter = printer<Lease>(
  [nameColumn, column('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.'), ageColumn],
  (lease, now) => ({ cells: [lease.metadata.name, lease.spec?.holderIdentity ?? '', age(lease, now)] }),
);

export const priorityClassPrinter = printer<PriorityClass>(
  [
    nameColumn,
    column(
      'Value',
      'integer',
      'value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.',
    ),
    column(
      'Global-Default',
      'boolean',
      'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.',
    ),
    ageColumn,
    // Priority 0 upstream as well: PREEMPTIONPOLICY shows without -o wide.
    column(
      'PreemptionPolicy',
      'string',
      'preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.',
    ),
  ],
  (pc, now) => ({ cells: [pc.metadata.name, pc.value, pc.globalDefault ?? false, age(pc, now), pc.preemptionPolicy ?? ''] }),
);

export const runtimeClassPrinter = printer<RuntimeClass>(
  // Upstream describes HANDLER with ObjectMeta's doc for a field it lacks: empty.
  [nameColumn, column('Handler', 'string', ''), ageColumn],
  (rc, now) => ({ cells: [rc.metadata.name, rc.handler ?? '', age(rc, now)] }),
);
