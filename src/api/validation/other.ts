// Lease, EndpointSlice and PriorityClass validation as upstream's coordination, discovery and
// scheduling validation packages.
import { duplicate, forbidden, invalid, notSupported, Path, required, tooMany, type FieldError } from '../field.js';
import { arr, isObj, str, validateImmutable, validateLabels, validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName, type Obj } from './meta.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, invalidEach, isIPv4, isIPv6, nameIsDNSSubdomain } from './names.js';
import { validateDNS1123Label } from './podspec.js';
import { validateNonSpecialIP } from './core.js';

// ---- Lease ----

function validateLeaseSpec(spec: unknown): FieldError[] {
  const s = isObj(spec) ? spec : {};
  const p = Path.root('spec');
  const errs: FieldError[] = [];
  if (typeof s.leaseDurationSeconds === 'number' && s.leaseDurationSeconds <= 0) {
    errs.push(invalid(p.child('leaseDurationSeconds'), s.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (typeof s.leaseTransitions === 'number' && s.leaseTransitions < 0) {
    errs.push(invalid(p.child('leaseTransitions'), s.leaseTransitions, 'must be greater than or equal to 0'));
  }
  return errs;
}

export const validateLease = (l: Obj): FieldError[] => [...validateObjectMeta(l.metadata, true, nameIsDNSSubdomain), ...validateLeaseSpec(l.spec)];
export const validateLeaseUpdate = (l: Obj, old: Obj): FieldError[] => [...validateObjectMetaUpdate(l.metadata, old.metadata), ...validateLeaseSpec(l.spec)];

// ---- EndpointSlice ----

const addressTypes = ['FQDN', 'IPv4', 'IPv6'];
const supportedProtocols = ['SCTP', 'TCP', 'UDP'];

function fqdnErrors(value: string, p: Path): FieldError[] {
  const name = value.replace(/\.$/, '');
  if (!name) return [required(p, '')];
  const errs = invalidEach(p, value, dns1123SubdomainErrors(name));
  if (errs.length) return errs;
  if (name.split('.').length < 2) return [invalid(p, name, 'should be a domain with at least two segments separated by dots')];
  for (const label of name.split('.')) errs.push(...invalidEach(p, value, dns1123LabelErrors(label)));
  return errs;
}

function validateEndpoints(endpoints: unknown, addressType: string): FieldError[] {
  const p = Path.root('endpoints');
  const list = arr(endpoints);
  if (list.length > 1000) return [tooMany(p, list.length, 1000)];
  const errs: FieldError[] = [];
  list.forEach((ep, i) => {
    const ip = p.index(i);
    const ap = ip.child('addresses');
    const addresses = arr(ep?.addresses).map(str);
    if (addresses.length === 0) errs.push(required(ap, 'must contain at least 1 address'));
    else if (addresses.length > 100) errs.push(tooMany(ap, addresses.length, 100));
    addresses.forEach((a, j) => {
      const aj = ap.index(j);
      if (addressType === 'IPv4') errs.push(...(isIPv4(a) ? validateNonSpecialIP(a, aj) : [invalid(aj, a, 'must be a valid IPv4 address')]));
      else if (addressType === 'IPv6') errs.push(...(isIPv6(a) ? validateNonSpecialIP(a, aj) : [invalid(aj, a, 'must be a valid IPv6 address')]));
      else if (addressType === 'FQDN') errs.push(...fqdnErrors(a, aj));
    });
    if (ep?.nodeName != null) errs.push(...invalidEach(ip.child('nodeName'), ep.nodeName, nameIsDNSSubdomain(str(ep.nodeName), false)));
    const topology = isObj(ep?.deprecatedTopology) ? ep.deprecatedTopology : {};
    if (Object.keys(topology).length > 16) errs.push(tooMany(ip.child('deprecatedTopology'), Object.keys(topology).length, 16));
    errs.push(...validateLabels(topology, ip.child('deprecatedTopology')));
    if (ep?.hostname != null) errs.push(...validateDNS1123Label(str(ep.hostname), ip.child('hostname')));
  });
  return errs;
}

function validateSlicePorts(ports: unknown): FieldError[] {
  const p = Path.root('ports');
  const list = arr(ports);
  if (list.length > 20000) return [tooMany(p, list.length, 20000)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  list.forEach((port, i) => {
    const ip = p.index(i);
    const name = str(port?.name);
    if (name) errs.push(...validateDNS1123Label(name, ip.child('name')));
    if (names.has(name)) errs.push(duplicate(ip.child('name'), name));
    names.add(name);
    if (port?.protocol == null) errs.push(required(ip.child('protocol'), ''));
    else if (!supportedProtocols.includes(port.protocol)) errs.push(notSupported(ip.child('protocol'), port.protocol, supportedProtocols));
    if (port?.appProtocol != null) errs.push(...validateQualifiedName(str(port.appProtocol), ip.child('appProtocol')));
  });
  return errs;
}

export function validateEndpointSlice(slice: Obj): FieldError[] {
  const errs = validateObjectMeta(slice.metadata, true, nameIsDNSSubdomain);
  const addressType = str(slice.addressType);
  if (!addressType) errs.push(required(Path.root('addressType'), ''));
  else if (!addressTypes.includes(addressType)) errs.push(notSupported(Path.root('addressType'), addressType, addressTypes));
  return [...errs, ...validateEndpoints(slice.endpoints, addressType), ...validateSlicePorts(slice.ports)];
}

export function validateEndpointSliceUpdate(slice: Obj, old: Obj): FieldError[] {
  return [
    ...validateObjectMetaUpdate(slice.metadata, old.metadata),
    ...validateEndpointSlice(slice),
    ...validateImmutable(str(slice.addressType), str(old.addressType), Path.root('addressType')),
  ];
}

// ---- PriorityClass ----

/** The highest priority a user-defined class may have; above it only the system classes live. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;

/** The classes the API server creates at startup (upstream's priority admission post-start hook). */
export const systemPriorityClasses = [
  {
    name: 'system-node-critical',
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: SYSTEM_CRITICAL_PRIORITY,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
] as const;

/** The reason a system-prefixed class is not one of the known ones, or undefined when it is. */
function systemClassError(name: string, value: unknown, globalDefault: boolean): string | undefined {
  const known = systemPriorityClasses.find((c) => c.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

const preemptionPolicies = ['Never', 'PreemptLowerPriority'];

export function validatePriorityClass(pc: Obj): FieldError[] {
  const errs = validateObjectMeta(pc.metadata, false, nameIsDNSSubdomain);
  const name = str(pc.metadata?.name);
  if (name.startsWith('system-')) {
    const why = systemClassError(name, pc.value, pc.globalDefault === true);
    if (why) errs.push(forbidden(Path.root('metadata').child('name'), `priority class names with 'system-' prefix are reserved for system use only. error: ${why}`));
  } else if (typeof pc.value === 'number' && pc.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(forbidden(Path.root('value'), `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (pc.preemptionPolicy != null && !preemptionPolicies.includes(pc.preemptionPolicy)) {
    errs.push(notSupported(Path.root('preemptionPolicy'), pc.preemptionPolicy, preemptionPolicies));
  }
  return errs;
}

export function validatePriorityClassUpdate(pc: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(pc.metadata, old.metadata);
  if (pc.value !== old.value) errs.push(forbidden(Path.root('value'), 'may not be changed in an update.'));
  errs.push(...validateImmutable(pc.preemptionPolicy ?? null, old.preemptionPolicy ?? null, Path.root('preemptionPolicy')));
  return errs;
}
