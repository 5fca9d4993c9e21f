// CertificateSigningRequest as upstream's pkg/registry/certificates/certificates: the requestor
// fields come from the authenticated user, never the body; the spec is fixed at create; status
// writes own the certificate, approval writes own the conditions, and either stamps condition times.
import type { StoredObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { rfc3339 } from '../../../api/time.js';
import type { CertificateSigningRequestCondition } from '../../../api/types.js';
import { validateCertificateSigningRequestApprovalUpdate } from '../../../api/validation/certificates.js';
import type { ResourceStrategy, StrategyContext } from '../strategy.js';
import { genericStrategy, resetMetaForStatus } from './generic.js';

type Conditions = CertificateSigningRequestCondition[];
const conditionsOf = (obj: StoredObject): Conditions => ((obj.status as { conditions?: Conditions } | undefined)?.conditions ?? []) as Conditions;

/** Fills lastUpdateTime with now and lastTransitionTime from the old condition of the same type and status, else now. */
export function populateConditionTimestamps(obj: StoredObject, old: StoredObject, now: number): void {
  const stamp = rfc3339(now);
  for (const c of conditionsOf(obj)) {
    c.lastUpdateTime ||= stamp;
    if (!c.lastTransitionTime) {
      c.lastTransitionTime = conditionsOf(old).find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime)?.lastTransitionTime ?? stamp;
    }
  }
}

export function certificateSigningRequestStrategy(): ResourceStrategy {
  const base = genericStrategy(findResource('certificates.k8s.io', 'v1', 'certificatesigningrequests')!);
  return {
    ...base,
    prepareForCreate(obj, ctx: StrategyContext) {
      const spec = (obj.spec ?? {}) as Record<string, unknown>;
      for (const k of ['username', 'uid', 'groups', 'extra']) delete spec[k];
      const user = ctx.user;
      if (user) {
        spec.username = user.name;
        if (user.uid) spec.uid = user.uid;
        spec.groups = [...user.groups];
        if (user.extra && Object.keys(user.extra).length > 0) spec.extra = structuredClone(user.extra);
      }
      obj.spec = spec;
      // Nobody may create a request that is already approved or issued.
      obj.status = {};
    },
    prepareForUpdate(obj, old) {
      obj.spec = old.spec;
      obj.status = old.status;
    },
    prepareForSubresourceUpdate(sub, obj, old, ctx) {
      if (sub === 'approval') {
        const conditions = conditionsOf(obj);
        for (const k of Object.keys(obj)) if (k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') delete obj[k];
        for (const [k, v] of Object.entries(structuredClone(old))) if (k !== 'metadata') obj[k] = v;
        obj.status = { ...(old.status as object), conditions };
        if (conditions.length === 0) delete (obj.status as { conditions?: Conditions }).conditions;
        resetMetaForStatus(obj, old);
      } else {
        base.prepareForSubresourceUpdate(sub, obj, old, ctx);
      }
      populateConditionTimestamps(obj, old, ctx.now);
    },
    validateSubresourceUpdate(sub, obj, old) {
      return sub === 'approval' ? validateCertificateSigningRequestApprovalUpdate(obj, old) : base.validateSubresourceUpdate(sub, obj, old);
    },
    selectableFields: (obj) => ({ ...base.selectableFields(obj), 'spec.signerName': String((obj.spec as { signerName?: string } | undefined)?.signerName ?? '') }),
  };
}
