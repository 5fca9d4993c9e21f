// Objects every cluster has from its first start: the system namespaces and the built-in priority
// classes. Created only when missing, so restarts and several API servers agree.
import type { KubeObject } from '../api/meta.js';
import { applyDefaults } from '../api/defaults/index.js';
import { systemPriorityClassObjects } from './admission/plugins/priority.js';
import { isStatusError } from './errors.js';
import type { Registries } from './registry/registries.js';

const systemUser = { name: 'system:apiserver', groups: ['system:masters'] };

const namespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

async function ensure(registries: Registries, group: string, resource: string, namespace: string, obj: KubeObject): Promise<void> {
  const reg = registries.of(group, resource);
  try {
    await reg.get(namespace, obj.metadata!.name!);
    return;
  } catch (err) {
    if (!isStatusError(err) || err.code !== 404) throw err;
  }
  applyDefaults(group, reg.info.kind, obj);
  try {
    await reg.create(namespace, obj, { dryRun: false, user: systemUser, subresource: '' });
  } catch (err) {
    // Another API server made it first.
    if (!isStatusError(err) || err.code !== 409) throw err;
  }
}

export async function bootstrapObjects(registries: Registries): Promise<void> {
  for (const name of namespaces) {
    await ensure(registries, '', 'namespaces', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  for (const pc of systemPriorityClassObjects()) await ensure(registries, 'scheduling.k8s.io', 'priorityclasses', '', pc as unknown as KubeObject);
}
