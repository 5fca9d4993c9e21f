// ReplicationController and PodTemplate validation as upstream's core validation
// (ValidateReplicationController, ValidatePodTemplate and their updates).
import { Path, required, type FieldError } from '../field.js';
import { selectorFromSet } from '../labels.js';
import { validateTemplateLabels, validateTemplateRestarts } from './apps.js';
import { isObj, strMap, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';
import { validatePodTemplateSpec } from './podspec.js';

const specPath = Path.root('spec');
const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});

function validateReplicationControllerSpec(s: Obj): FieldError[] {
  const errs = validateNonnegative(s.minReadySeconds, specPath.child('minReadySeconds'));
  const selector = selectorFromSet(strMap(s.selector));
  if (selector.empty()) errs.push(required(specPath.child('selector'), ''));
  errs.push(...validateNonnegative(s.replicas, specPath.child('replicas')));
  const tp = specPath.child('template');
  if (!isObj(s.template)) errs.push(required(tp, ''));
  else errs.push(...validateTemplateLabels(s.template, selector, tp), ...validatePodTemplateSpec(s.template, tp), ...validateTemplateRestarts(s.template, 'ReplicationController', tp));
  return errs;
}

export const validateReplicationController = (rc: Obj): FieldError[] => [
  ...validateObjectMeta(rc.metadata, true, nameIsDNSSubdomain),
  ...validateReplicationControllerSpec(spec(rc)),
];

/** The strategy validates the object as new, then as an update (the spec twice); an RC's selector may change. */
export function validateReplicationControllerUpdate(rc: Obj, old: Obj): FieldError[] {
  return [...validateReplicationController(rc), ...validateObjectMetaUpdate(rc.metadata, old.metadata), ...validateReplicationControllerSpec(spec(rc))];
}

/** An RC's status has the ReplicaSet's fields and rules. */
export { validateReplicaSetStatusUpdate as validateReplicationControllerStatusUpdate } from './apps.js';

export const validatePodTemplate = (pt: Obj): FieldError[] => [
  ...validateObjectMeta(pt.metadata, true, nameIsDNSSubdomain),
  ...validatePodTemplateSpec(pt.template, Path.root('template')),
];

export const validatePodTemplateUpdate = (pt: Obj, old: Obj): FieldError[] => [
  ...validateObjectMetaUpdate(pt.metadata, old.metadata),
  ...validatePodTemplateSpec(pt.template, Path.root('template')),
];
