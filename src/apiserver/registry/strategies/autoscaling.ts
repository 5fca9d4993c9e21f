// HorizontalPodAutoscaler: autoscaling/v2 is stored; autoscaling/v1 serves the same objects through
// upstream's conversion. Neither bumps metadata.generation (upstream's strategy does not); writes of
// the main resource keep the status, which in v1 includes the status annotations.
import { findResource } from '../../../api/resources.js';
import type { KubeObject, StoredObject } from '../../../api/meta.js';
import { conditionsAnnotation, hpaV1FromV2, hpaV2FromV1, hpaV2Served, metricStatusesAnnotation } from '../../../api/autoscaling.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from '../../../api/validation/index.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy } from './generic.js';

const group = 'autoscaling';
const kind = 'HorizontalPodAutoscaler';
const storagePrefix = '/registry/horizontalpodautoscalers/';
const statusAnnotations = [metricStatusesAnnotation, conditionsAnnotation];

const info = (version: string) => findResource(group, version, 'horizontalpodautoscalers')!;

export function horizontalPodAutoscalerStrategy(): ResourceStrategy {
  const base = genericStrategy(info('v2'), { storagePrefix, toServed: (obj) => hpaV2Served(obj) as StoredObject });
  return {
    ...base,
    prepareForCreate(obj, ctx) {
      base.prepareForCreate(obj, ctx);
      // The create's answer shows the empty status as later reads do.
      obj.status = hpaV2Served(obj).status;
    },
  };
}

type Annotated = { metadata?: { annotations?: Record<string, string> } };

/** Copies the v1 status annotations of `from` onto `to` (removing those `from` lacks). */
function copyStatusAnnotations(to: Annotated, from: Annotated): void {
  const src = from.metadata?.annotations ?? {};
  const dst = { ...(to.metadata?.annotations ?? {}) };
  for (const a of statusAnnotations) {
    if (a in src) dst[a] = src[a]!;
    else delete dst[a];
  }
  to.metadata ??= {};
  if (Object.keys(dst).length > 0) to.metadata.annotations = dst;
  else delete to.metadata.annotations;
}

const asV2 = (obj: StoredObject) => hpaV2FromV1(obj) as StoredObject;

/** Rewrites a v1 object in place as its stored form reads back (the implicit CPU target made explicit). */
function normalize(obj: StoredObject): void {
  const served = hpaV1FromV2(hpaV2FromV1(obj));
  for (const k of Object.keys(obj)) if (!(k in served)) delete obj[k];
  Object.assign(obj, served);
}

export function horizontalPodAutoscalerV1Strategy(): ResourceStrategy {
  const v1 = info('v1');
  const base = genericStrategy(v1, { storagePrefix });
  return {
    ...base,
    toServed: (obj) => hpaV1FromV2(obj) as StoredObject,
    toStored: (obj: KubeObject) => hpaV2FromV1(obj) as KubeObject,
    prepareForCreate(obj, ctx) {
      base.prepareForCreate(obj, ctx);
      copyStatusAnnotations(obj, {});
      normalize(obj);
    },
    prepareForUpdate(obj, old, ctx) {
      base.prepareForUpdate(obj, old, ctx);
      copyStatusAnnotations(obj, old);
      normalize(obj);
    },
    prepareForSubresourceUpdate(sub, obj, old, ctx) {
      // A v1 status write carries the full status in the annotations the status reset would drop.
      const written: Annotated = { metadata: { annotations: { ...(obj.metadata?.annotations ?? {}) } } };
      base.prepareForSubresourceUpdate(sub, obj, old, ctx);
      if (sub === 'status') copyStatusAnnotations(obj, written);
      normalize(obj);
    },
    // Upstream validates the internal (v2-shaped) object.
    validate: (obj) => validateCreate(group, kind, asV2(obj)),
    validateUpdate: (obj, old) => validateUpdate(group, kind, asV2(obj), asV2(old)),
    validateSubresourceUpdate: (sub, obj, old) =>
      sub === 'status' ? validateStatusUpdate(group, kind, asV2(obj), asV2(old)) : validateUpdate(group, kind, asV2(obj), asV2(old)),
  };
}
