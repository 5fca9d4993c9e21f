// Validation of the kinds the built-in admission plugins read: core LimitRange, node.k8s.io
// RuntimeClass, networking.k8s.io IngressClass and Ingress. Only upstream's metadata rules and the
// fields the plugins depend on (quantities, the runtime handler, the ingress controller).
import { invalid, Path, required, type FieldError } from '../field.js';
import { errFormatWrong, Quantity } from '../quantity.js';
import { arr, isObj, str, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';
import { validateDNS1123Label } from './podspec.js';

const limitRangeLists = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** Every quantity of every item must parse, as upstream's ValidateLimitRange checks each one. */
export function validateLimitRange(lr: Obj): FieldError[] {
  const errs = validateObjectMeta(lr.metadata, true, nameIsDNSSubdomain);
  const limits = Path.root('spec').child('limits');
  arr(isObj(lr.spec) ? lr.spec.limits : undefined).forEach((item, i) => {
    const it = isObj(item) ? item : {};
    if (!str(it.type)) errs.push(required(limits.index(i).child('type')));
    for (const list of limitRangeLists) {
      for (const [name, value] of Object.entries(isObj(it[list]) ? it[list] : {})) {
        try {
          Quantity.from(value as string | number);
        } catch {
          errs.push(invalid(limits.index(i).child(list).key(name), value, errFormatWrong));
        }
      }
    }
  });
  return errs;
}

export const validateLimitRangeUpdate = (lr: Obj, old: Obj): FieldError[] => [...validateObjectMetaUpdate(lr.metadata, old.metadata), ...validateLimitRange(lr)];

/** The handler names the CRI runtime handler: a DNS label. */
export function validateRuntimeClass(rc: Obj): FieldError[] {
  const errs = validateObjectMeta(rc.metadata, false, nameIsDNSSubdomain);
  const handler = str(rc.handler);
  if (!handler) errs.push(required(Path.root('handler')));
  else errs.push(...validateDNS1123Label(handler, Path.root('handler')));
  return errs;
}

export const validateRuntimeClassUpdate = (rc: Obj, old: Obj): FieldError[] => [...validateObjectMetaUpdate(rc.metadata, old.metadata), ...validateRuntimeClass(rc)];

export function validateIngressClass(ic: Obj): FieldError[] {
  const errs = validateObjectMeta(ic.metadata, false, nameIsDNSSubdomain);
  if (!str(isObj(ic.spec) ? ic.spec.controller : undefined)) errs.push(required(Path.root('spec').child('controller')));
  return errs;
}

export const validateIngressClassUpdate = (ic: Obj, old: Obj): FieldError[] => [...validateObjectMetaUpdate(ic.metadata, old.metadata), ...validateIngressClass(ic)];

export const validateIngress = (ing: Obj): FieldError[] => validateObjectMeta(ing.metadata, true, nameIsDNSSubdomain);

export const validateIngressUpdate = (ing: Obj, old: Obj): FieldError[] => [...validateObjectMetaUpdate(ing.metadata, old.metadata), ...validateIngress(ing)];
