// NamespaceLifecycle, as upstream: nothing is created in a namespace that does not exist or is being
// terminated, nothing in a missing namespace is updated, and the system namespaces cannot be deleted.
import type { Namespace } from 'kubernetes-types/core/v1.js';
import { notFound } from '../../../api/errors.js';
import { realClock, type Clock } from '../../../util/clock.js';
import { admissionForbidden } from '../errors.js';
import { newForbidden } from '../../authz/forbidden.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'NamespaceLifecycle';

/** The cause type clients check to tell "namespace terminating" from other refusals. */
export const namespaceTerminatingCause = 'NamespaceTerminating';

/** How long a create waits for a namespace its lookup cache has not seen yet, before refusing. */
export const missingNamespaceWaitMs = 50;

const namespacesResource = { group: '', resource: 'namespaces' };

export interface NamespaceLifecycleOptions {
  lookups: Pick<AdmissionLookups, 'get'>;
  /** Namespaces that can never be deleted. */
  immortalNamespaces?: readonly string[];
  clock?: Clock;
}

export class NamespaceLifecycle implements MutatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: Pick<AdmissionLookups, 'get'>;
  private readonly immortal: ReadonlySet<string>;
  private readonly clock: Clock;

  constructor(opts: NamespaceLifecycleOptions) {
    this.lookups = opts.lookups;
    this.immortal = new Set(opts.immortalNamespaces ?? ['default', 'kube-system', 'kube-public']);
    this.clock = opts.clock ?? realClock;
  }

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' || a.operation === 'UPDATE' || a.operation === 'DELETE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
    if (isNamespace) {
      if (a.operation === 'DELETE' && this.immortal.has(a.name)) {
        throw newForbidden(namespacesResource, a.name, 'this namespace may not be deleted');
      }
      return;
    }
    // Cluster-scoped objects have no namespace to check; deletes are always allowed, to clean up.
    if (a.namespace === '' || a.operation === 'DELETE') return;

    let ns = await this.lookups.get('namespaces', '', a.namespace);
    if (!ns && a.operation === 'CREATE') {
      // The namespace may have been created a moment ago and not yet reached the lookup's cache.
      await this.clock.sleep(missingNamespaceWaitMs);
      ns = await this.lookups.get('namespaces', '', a.namespace);
    }
    if (!ns) throw notFound(namespacesResource, a.namespace);

    if (a.operation === 'CREATE' && (ns as Namespace).status?.phase === 'Terminating') {
      const err = admissionForbidden(a, `unable to create new content in namespace ${a.namespace} because it is being terminated`);
      err.details!.causes = [
        { reason: namespaceTerminatingCause, message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' },
      ];
      throw err;
    }
  }
}
