// networking.k8s.io/v1 ServiceCIDR and IPAddress, as upstream's pkg/apis/networking/validation:
// an IPAddress is named by its canonical IP and points at its parent; a ServiceCIDR holds one or two
// canonical CIDRs (one per family) that never change.
import { invalid, Path, rawValue, required, type FieldError } from '../field.js';
import { formatAddr, formatPrefix, masked, parseAddr, parsePrefix } from '../netip.js';
import { arr, isObj, str, validateImmutable, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { dns1123SubdomainErrors, invalidEach, nameIsDNSSubdomain, nameIsPathSegment, type NameValidator } from './names.js';

const invalidIPMessage = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const invalidCIDRMessage = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/** validation.IsValidIP (strict, 1.33): parseable and in canonical form. */
export function ipAddressErrors(value: string): string[] {
  const addr = parseAddr(value);
  if (!addr) return [invalidIPMessage];
  const canonical = formatAddr(addr);
  return canonical === value ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/** validation.IsValidCIDR (strict, 1.33): parseable, no host bits, canonical text. */
export function cidrErrors(value: string): string[] {
  const prefix = parsePrefix(value);
  if (!prefix) return [invalidCIDRMessage];
  const canonical = formatPrefix(masked(prefix));
  return canonical === value ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/** IPAddress names do not come from generateName, so the prefix form is not considered. */
const ipAddressName: NameValidator = (name) => ipAddressErrors(name);

const goStrings = (list: string[]) => `[]string{${list.map((s) => JSON.stringify(s)).join(', ')}}`;

export function validateServiceCIDR(cidr: Obj): FieldError[] {
  const errs = validateObjectMeta(cidr.metadata, false, nameIsDNSSubdomain);
  const p = Path.root('spec').child('cidrs');
  const cidrs = arr(cidr.spec?.cidrs).map(str);
  const shownSpec = () => rawValue(`networking.ServiceCIDRSpec{CIDRs:${goStrings(cidrs)}}`);
  if (cidrs.length === 0) return [...errs, required(p, 'at least one CIDR required')];
  if (cidrs.length > 2) return [...errs, invalid(p, shownSpec(), 'may only hold up to 2 values')];
  if (cidrs.length === 2) {
    const [a, b] = cidrs.map(parsePrefix);
    if (!a || !b || a.addr.family === b.addr.family) {
      return [...errs, invalid(p, shownSpec(), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64')];
    }
  }
  cidrs.forEach((c, i) => errs.push(...invalidEach(p.index(i), c, cidrErrors(c))));
  return errs;
}

export function validateServiceCIDRUpdate(cidr: Obj, old: Obj): FieldError[] {
  const cidrs = arr(cidr.spec?.cidrs);
  return [
    ...validateObjectMetaUpdate(cidr.metadata, old.metadata),
    ...validateImmutable(cidrs, arr(old.spec?.cidrs), Path.root('spec').child('cidrs'), rawValue(goStrings(cidrs.map(str)))),
  ];
}

export const validateServiceCIDRStatusUpdate = (cidr: Obj, old: Obj): FieldError[] => validateObjectMetaUpdate(cidr.metadata, old.metadata);

function validateParentReference(ref: unknown, p: Path): FieldError[] {
  if (!isObj(ref)) return [required(p, '')];
  const errs: FieldError[] = [];
  // The core group of Services is "", so the group cannot be required.
  const group = str(ref.group);
  if (group) errs.push(...invalidEach(p.child('group'), group, dns1123SubdomainErrors(group)));
  for (const field of ['resource', 'name'] as const) {
    const v = str(ref[field]);
    if (!v) errs.push(required(p.child(field), ''));
    else errs.push(...invalidEach(p.child(field), v, nameIsPathSegment(v, false)));
  }
  const namespace = str(ref.namespace);
  if (namespace) errs.push(...invalidEach(p.child('namespace'), namespace, nameIsPathSegment(namespace, false)));
  return errs;
}

export function validateIPAddress(ip: Obj): FieldError[] {
  return [...validateObjectMeta(ip.metadata, false, ipAddressName), ...validateParentReference(ip.spec?.parentRef, Path.root('spec').child('parentRef'))];
}

/** Go's %#v of the parentRef pointer upstream's immutability error shows. */
function goParentRef(ref: unknown): { toString(): string } {
  if (!isObj(ref)) return rawValue('(*networking.ParentReference)(nil)');
  const f = (k: string) => JSON.stringify(str(ref[k]));
  return rawValue(`&networking.ParentReference{Group:${f('group')}, Resource:${f('resource')}, Namespace:${f('namespace')}, Name:${f('name')}}`);
}

export function validateIPAddressUpdate(ip: Obj, old: Obj): FieldError[] {
  const ref = ip.spec?.parentRef;
  return [
    ...validateObjectMetaUpdate(ip.metadata, old.metadata),
    ...validateImmutable(ref ?? null, old.spec?.parentRef ?? null, Path.root('spec').child('parentRef'), goParentRef(ref)),
  ];
}
