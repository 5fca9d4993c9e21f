// Strategies of the kinds with little of their own: field selectors, create-on-update, generation.
import { findResource } from '../../../api/resources.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy, metadataFields } from './generic.js';

const r = (group: string, resource: string, version = 'v1') => findResource(group, version, resource)!;

export function nodeStrategy(): ResourceStrategy {
  return genericStrategy(r('', 'nodes'), {
    // The kubelet registers its node with status filled in; only later writes split spec and status.
    prepareForCreate() {},
    selectableFields: (obj) => ({
      ...metadataFields(obj),
      'spec.unschedulable': String((obj.spec as { unschedulable?: boolean } | undefined)?.unschedulable ?? false),
    }),
  });
}

export function secretStrategy(): ResourceStrategy {
  return genericStrategy(r('', 'secrets'), {
    selectableFields: (obj) => ({ ...metadataFields(obj), type: String(obj.type ?? '') }),
  });
}

export function deploymentStrategy(): ResourceStrategy {
  const base = genericStrategy(r('apps', 'deployments'), { tracksGeneration: true });
  return {
    ...base,
    // Upstream's deploymentStatusStrategy keeps only spec and labels: the controller records the
    // revision annotation with its status writes.
    prepareForSubresourceUpdate(sub, obj, old, ctx) {
      const annotations = obj.metadata.annotations;
      base.prepareForSubresourceUpdate(sub, obj, old, ctx);
      if (sub !== 'status') return;
      if (annotations === undefined) delete obj.metadata.annotations;
      else obj.metadata.annotations = annotations;
    },
  };
}

export function endpointSliceStrategy(): ResourceStrategy {
  return genericStrategy(r('discovery.k8s.io', 'endpointslices'), { tracksGeneration: true });
}

/** Kinds whose spec changes bump metadata.generation, so controllers report observedGeneration. */
export function generationStrategy(group: string, resource: string, version = 'v1'): ResourceStrategy {
  return genericStrategy(r(group, resource, version), { tracksGeneration: true });
}

/** Kinds whose PUT may create (upstream's AllowCreateOnUpdate). */
export function createOnUpdateStrategy(group: string, resource: string): ResourceStrategy {
  return genericStrategy(r(group, resource), { allowCreateOnUpdate: true });
}

export function plainStrategy(group: string, resource: string): ResourceStrategy {
  return genericStrategy(r(group, resource));
}
