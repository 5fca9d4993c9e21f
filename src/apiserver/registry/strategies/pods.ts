// Pods: status starts Pending with its QoS class, the status subresource may not touch the spec,
// and deletion is graceful for pods bound to a node (the kubelet finishes it with grace 0).
import type { StoredObject } from '../../../api/meta.js';
import type { Pod } from '../../../api/types.js';
import { findResource } from '../../../api/resources.js';
import { qosClass } from '../../../api/pod/qos.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy, metadataFields } from './generic.js';
import { validateStatusUpdate } from '../../../api/validation/index.js';

const info = findResource('', 'v1', 'pods')!;

function asPod(obj: StoredObject): Pod {
  return obj as unknown as Pod;
}

export function podStrategy(): ResourceStrategy {
  return genericStrategy(info, {
    // Pods carry a generation since 1.33 (spec changes bump it).
    tracksGeneration: true,
    returnDeletedObject: true,
    prepareForCreate(obj) {
      obj.status = { phase: 'Pending', qosClass: qosClass(asPod(obj)) };
    },
    prepareForUpdate(obj, old) {
      obj.status = old.status;
    },
    prepareForSubresourceUpdate(sub, obj, old) {
      // pods/binding writes nodeName and the PodScheduled condition together, as upstream's assignPod.
      if (sub === 'binding') return;
      // The pods/status endpoint keeps the spec, and owner references (old kubelets corrupted them).
      obj.spec = old.spec;
      if (old.metadata.ownerReferences === undefined) delete obj.metadata.ownerReferences;
      else obj.metadata.ownerReferences = old.metadata.ownerReferences;
    },
    // A binding is checked by the binding handler itself; the pod update rules forbid what it changes.
    validateSubresourceUpdate: (sub, obj, old) => (sub === 'binding' ? [] : validateStatusUpdate('', 'Pod', obj, old)),
    gracefulDelete(obj, requested) {
      const pod = asPod(obj);
      let period = requested ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
      if (!pod.spec?.nodeName) period = 0;
      const phase = pod.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') period = 0;
      if (period < 0) period = 1;
      return { gracePeriodSeconds: period };
    },
    selectableFields(obj) {
      const pod = asPod(obj);
      return {
        ...metadataFields(obj),
        'spec.nodeName': pod.spec?.nodeName ?? '',
        'spec.restartPolicy': pod.spec?.restartPolicy ?? '',
        'spec.schedulerName': pod.spec?.schedulerName ?? '',
        'spec.serviceAccountName': pod.spec?.serviceAccountName ?? '',
        'spec.hostNetwork': String(pod.spec?.hostNetwork ?? false),
        'status.phase': pod.status?.phase ?? '',
        'status.podIP': pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP ?? '',
        'status.nominatedNodeName': pod.status?.nominatedNodeName ?? '',
      };
    },
  });
}
