// Validation of the core kinds other than Pod, as upstream's pkg/apis/core/validation.
import { duplicate, forbidden, invalid, notSupported, Path, rawValue, required, tooLong, type FieldError } from '../field.js';
import { Quantity } from '../quantity.js';
import {
  arr,
  deepEqual,
  isObj,
  str,
  strMap,
  validateImmutable,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateQualifiedName,
  type Obj,
} from './meta.js';
import {
  configMapKeyErrors,
  dns1123SubdomainErrors,
  invalidEach,
  ipErrors,
  isCIDR,
  isIP,
  isIPv4,
  labelValueErrors,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  portNameErrors,
  portNumErrors,
} from './names.js';
import { validateDNS1123Label, validateResourceName, validateResourceQuantity, validateTaintEffect } from './podspec.js';

const metaPath = Path.root('metadata');
const specPath = Path.root('spec');
const supportedProtocols = ['SCTP', 'TCP', 'UDP'];
const maxSecretSize = 1024 * 1024;
const immutableWhenSet = 'field is immutable when `immutable` is set';

const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});
const status = (o: Obj): Obj => (isObj(o.status) ? o.status : {});

/** ValidateNonSpecialIP: a usable unicast address. */
export function validateNonSpecialIP(ip: string, p: Path): FieldError[] {
  if (!isIP(ip)) return [invalid(p, ip, 'must be a valid IP address')];
  const errs: FieldError[] = [];
  const v4 = isIPv4(ip);
  const lower = ip.toLowerCase();
  if (v4 ? ip === '0.0.0.0' : /^[0:]+$/.test(lower)) errs.push(invalid(p, ip, `may not be unspecified (${ip})`));
  if (v4 ? ip.startsWith('127.') : /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(lower)) errs.push(invalid(p, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (v4 ? ip.startsWith('169.254.') : /^fe[89ab][0-9a-f]?:/.test(lower)) errs.push(invalid(p, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (v4 ? ip.startsWith('224.0.0.') : lower.startsWith('ff02:')) errs.push(invalid(p, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}

// ---- Namespace ----

const standardFinalizers = ['foregroundDeletion', 'kubernetes', 'orphan'];

/** The core group's finalizer names: qualified, and one of the standard ones when unprefixed. */
function validateFinalizerName(name: string, p: Path): FieldError[] {
  const errs = validateQualifiedName(name, p);
  if (!name.includes('/') && !standardFinalizers.includes(name)) errs.push(notSupported(p, name, standardFinalizers));
  return errs;
}

export function validateNamespace(ns: Obj): FieldError[] {
  const errs = validateObjectMeta(ns.metadata, false, nameIsDNSLabel);
  for (const f of arr(spec(ns).finalizers)) errs.push(...validateFinalizerName(str(f), specPath.child('finalizers')));
  return errs;
}

export function validateNamespaceStatusUpdate(ns: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(ns.metadata, old.metadata);
  const phase = str(status(ns).phase);
  const phasePath = Path.root('status').child('Phase');
  if (!ns.metadata?.deletionTimestamp) {
    if (phase !== 'Active') errs.push(invalid(phasePath, phase, "may only be 'Active' if `deletionTimestamp` is empty"));
  } else if (phase !== 'Terminating') {
    errs.push(invalid(phasePath, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
  return errs;
}

/** The namespace finalize subresource. */
export function validateNamespaceFinalizeUpdate(ns: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(ns.metadata, old.metadata);
  arr(spec(ns).finalizers).forEach((f, i) => errs.push(...validateFinalizerName(str(f), specPath.child('finalizers').index(i))));
  return errs;
}

// ---- Node ----

function validateNodeTaints(taints: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(taints).forEach((t, i) => {
    const ip = p.index(i);
    errs.push(...validateQualifiedName(str(t?.key), ip.child('key')));
    const valueErrs = labelValueErrors(str(t?.value));
    if (valueErrs.length) errs.push(invalid(ip.child('value'), str(t?.value), valueErrs.join(';')));
    errs.push(...validateTaintEffect(str(t?.effect), false, ip.child('effect')));
    const key = `${str(t?.effect)}\u0000${str(t?.key)}`;
    if (seen.has(key)) errs.push({ ...duplicate(ip, t), detail: 'taints must be unique by key and effect pair' });
    seen.add(key);
  });
  return errs;
}

function validateNodeResources(node: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ['capacity', 'allocatable']) {
    for (const [name, raw] of Object.entries(isObj(status(node)[field]) ? status(node)[field] : {})) {
      const p = Path.root('status').child(field).key(name);
      errs.push(...validateResourceName(name, p));
      let q: Quantity;
      try {
        q = Quantity.from(raw as string | number);
      } catch (e) {
        errs.push(invalid(p, raw, (e as Error).message));
        continue;
      }
      errs.push(...validateResourceQuantity(name, q, p));
    }
  }
  return errs;
}

function validatePodCIDRs(cidrs: unknown): FieldError[] {
  const list = arr(cidrs).map(str);
  const p = specPath.child('podCIDRs');
  const errs: FieldError[] = [];
  list.forEach((c, i) => {
    if (!isCIDR(c)) errs.push(invalid(p.index(i), c, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'));
  });
  if (list.length > 1) {
    const v4 = list.filter((c) => isIPv4(c.split('/')[0]!)).length;
    if (list.length > 2 || v4 !== 1) errs.push(invalid(p, list, 'may specify no more than one CIDR for each IP family'));
  }
  return errs;
}

export function validateNode(node: Obj): FieldError[] {
  const errs = validateObjectMeta(node.metadata, false, nameIsDNSSubdomain);
  // Upstream reports taints under metadata.
  errs.push(...validateNodeTaints(spec(node).taints, metaPath.child('taints')));
  errs.push(...validateNodeResources(node));
  errs.push(...validatePodCIDRs(spec(node).podCIDRs));
  return errs;
}

/** ValidateNodeUpdate (also used for status updates): only labels, taints, capacity, status and first-time podCIDRs/providerID change. */
export function validateNodeUpdate(node: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(node.metadata, old.metadata);
  errs.push(...validateNodeResources(node));
  const seen: unknown[] = [];
  arr(status(node).addresses).forEach((a, i) => {
    if (seen.some((s) => deepEqual(s, a))) errs.push(duplicate(Path.root('status').child('addresses').index(i), a));
    seen.push(a);
  });
  const oldCIDRs = arr(spec(old).podCIDRs);
  const newCIDRs = arr(spec(node).podCIDRs);
  const cidrMsg = 'node updates may not change podCIDR except from "" to valid';
  if (oldCIDRs.length > 0) {
    if (oldCIDRs.length !== newCIDRs.length) errs.push(forbidden(specPath.child('podCIDRs'), cidrMsg));
    else oldCIDRs.forEach((c, i) => c !== newCIDRs[i] && errs.push(forbidden(specPath.child('podCIDRs'), cidrMsg)));
  }
  const oldProvider = str(spec(old).providerID);
  if (oldProvider && oldProvider !== str(spec(node).providerID)) {
    errs.push(forbidden(specPath.child('providerID'), 'node updates may not change providerID except from "" to valid'));
  }
  errs.push(...validateNodeTaints(spec(node).taints, metaPath.child('taints')));
  // Whatever else differs in the spec is a protected field.
  const allowed = ['taints', 'unschedulable', 'podCIDR', 'podCIDRs', 'providerID', 'configSource'];
  const strip = (s: Obj) => Object.fromEntries(Object.entries(s).filter(([k]) => !allowed.includes(k)));
  const cidrsChanged = oldCIDRs.length > 0 && !deepEqual(oldCIDRs, newCIDRs);
  if (!deepEqual(strip(spec(node)), strip(spec(old))) || cidrsChanged) {
    errs.push(forbidden(Path.root(''), 'node updates may only change labels, taints, or capacity (or configSource, if the DynamicKubeletConfig feature gate is enabled)'));
  }
  return errs;
}

// ---- ConfigMap, Secret ----

export function validateConfigMap(cm: Obj): FieldError[] {
  const errs = validateObjectMeta(cm.metadata, true, nameIsDNSSubdomain);
  let size = 0;
  const binary = strMap(cm.binaryData);
  for (const [k, v] of Object.entries(strMap(cm.data))) {
    errs.push(...invalidEach(Path.root('data').key(k), k, configMapKeyErrors(k)));
    if (k in binary) errs.push(invalid(Path.root('data').key(k), k, 'duplicate of key present in binaryData'));
    size += Buffer.byteLength(str(v));
  }
  for (const [k, v] of Object.entries(binary)) {
    errs.push(...invalidEach(Path.root('binaryData').key(k), k, configMapKeyErrors(k)));
    size += Buffer.from(str(v), 'base64').length;
  }
  if (size > maxSecretSize) errs.push(tooLong(Path.root(''), '', maxSecretSize));
  return errs;
}

export function validateConfigMapUpdate(cm: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(cm.metadata, old.metadata);
  if (old.immutable === true) {
    if (cm.immutable !== true) errs.push(forbidden(Path.root('immutable'), immutableWhenSet));
    if (!deepEqual(cm.data, old.data)) errs.push(forbidden(Path.root('data'), immutableWhenSet));
    if (!deepEqual(cm.binaryData, old.binaryData)) errs.push(forbidden(Path.root('binaryData'), immutableWhenSet));
  }
  return [...errs, ...validateConfigMap(cm)];
}

export function validateSecret(secret: Obj): FieldError[] {
  const errs = validateObjectMeta(secret.metadata, true, nameIsDNSSubdomain);
  const dataPath = Path.root('data');
  const data = strMap(secret.data);
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    errs.push(...invalidEach(dataPath.key(k), k, configMapKeyErrors(k)));
    size += Buffer.from(str(v), 'base64').length;
  }
  if (size > maxSecretSize) errs.push(tooLong(dataPath, '', maxSecretSize));
  const has = (k: string) => k in data;
  const validJSON = (k: string) => {
    try {
      const parsed: unknown = JSON.parse(Buffer.from(data[k]!, 'base64').toString('utf8'));
      return isObj(parsed) ? undefined : 'json: cannot unmarshal into a map';
    } catch (e) {
      return (e as Error).message;
    }
  };
  switch (secret.type) {
    case 'kubernetes.io/service-account-token':
      if (!str(secret.metadata?.annotations?.['kubernetes.io/service-account.name'])) {
        errs.push(required(metaPath.child('annotations').key('kubernetes.io/service-account.name'), ''));
      }
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = secret.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) errs.push(required(dataPath.key(key), ''));
      else {
        const err = validJSON(key);
        if (err) errs.push(invalid(dataPath.key(key), '<secret contents redacted>', err));
      }
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) errs.push(required(dataPath.key('username'), ''), required(dataPath.key('password'), ''));
      break;
    case 'kubernetes.io/ssh-auth':
      if (!str(data['ssh-privatekey'])) errs.push(required(dataPath.key('ssh-privatekey'), ''));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) errs.push(required(dataPath.key('tls.crt'), ''));
      if (!has('tls.key')) errs.push(required(dataPath.key('tls.key'), ''));
      break;
  }
  return errs;
}

export function validateSecretUpdate(secret: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(secret.metadata, old.metadata);
  errs.push(...validateImmutable(str(secret.type), str(old.type), Path.root('type')));
  if (old.immutable === true) {
    if (secret.immutable !== true) errs.push(forbidden(Path.root('immutable'), immutableWhenSet));
    if (!deepEqual(secret.data, old.data)) errs.push(forbidden(Path.root('data'), immutableWhenSet));
  }
  return [...errs, ...validateSecret(secret)];
}

// ---- ServiceAccount, Endpoints ----

export const validateServiceAccount = (sa: Obj): FieldError[] => validateObjectMeta(sa.metadata, true, nameIsDNSSubdomain);

function validateEndpointPort(port: Obj, requireName: boolean, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(port.name);
  if (requireName && !name) errs.push(required(p.child('name'), ''));
  else if (name) errs.push(...validateDNS1123Label(name, p.child('name')));
  errs.push(...invalidEach(p.child('port'), port.port ?? 0, portNumErrors(typeof port.port === 'number' ? port.port : 0)));
  const protocol = str(port.protocol);
  if (!protocol) errs.push(required(p.child('protocol'), ''));
  else if (!supportedProtocols.includes(protocol)) errs.push(notSupported(p.child('protocol'), protocol, supportedProtocols));
  if (port.appProtocol != null) errs.push(...validateQualifiedName(str(port.appProtocol), p.child('appProtocol')));
  return errs;
}

function validateEndpointAddress(a: Obj, p: Path): FieldError[] {
  const errs = ipErrors(p.child('ip'), str(a.ip));
  if (str(a.hostname)) errs.push(...validateDNS1123Label(a.hostname, p.child('hostname')));
  if (a.nodeName != null) errs.push(...invalidEach(p.child('nodeName'), a.nodeName, nameIsDNSSubdomain(str(a.nodeName), false)));
  if (isIP(str(a.ip))) errs.push(...validateNonSpecialIP(str(a.ip), p.child('ip')));
  return errs;
}

export function validateEndpoints(ep: Obj): FieldError[] {
  const errs = validateObjectMeta(ep.metadata, true, nameIsDNSSubdomain);
  arr(ep.subsets).forEach((ss, i) => {
    const ip = Path.root('subsets').index(i);
    if (arr(ss?.addresses).length === 0 && arr(ss?.notReadyAddresses).length === 0) {
      errs.push(required(ip, 'must specify `addresses` or `notReadyAddresses`'));
    }
    arr(ss?.addresses).forEach((a, j) => errs.push(...validateEndpointAddress(isObj(a) ? a : {}, ip.child('addresses').index(j))));
    arr(ss?.notReadyAddresses).forEach((a, j) => errs.push(...validateEndpointAddress(isObj(a) ? a : {}, ip.child('notReadyAddresses').index(j))));
    const ports = arr(ss?.ports);
    ports.forEach((port, j) => errs.push(...validateEndpointPort(isObj(port) ? port : {}, ports.length > 1, ip.child('ports').index(j))));
  });
  return errs;
}

// ---- Service ----

const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const ipFamilyPolicies = ['SingleStack', 'PreferDualStack', 'RequireDualStack'];

const clusterIPsOf = (s: Obj): string[] => {
  const ips = arr(s.clusterIPs).map(str);
  return ips.length ? ips : str(s.clusterIP) ? [s.clusterIP] : [];
};
const isHeadless = (s: Obj) => clusterIPsOf(s)[0] === 'None';

/** ServicePort as Go's %#v prints the (protocol, port) key upstream reports duplicates with. */
const goServicePortKey = (protocol: string, port: unknown) =>
  rawValue(
    `core.ServicePort{Name:"", Protocol:${JSON.stringify(protocol)}, AppProtocol:(*string)(nil), Port:${Number(port) || 0}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );

function validateServicePort(sp: Obj, requireName: boolean, names: Set<string>, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(sp.name);
  if (requireName && !name) errs.push(required(p.child('name'), ''));
  else if (name) {
    errs.push(...validateDNS1123Label(name, p.child('name')));
    if (names.has(name)) errs.push(duplicate(p.child('name'), name));
    else names.add(name);
  }
  errs.push(...invalidEach(p.child('port'), sp.port ?? 0, portNumErrors(typeof sp.port === 'number' ? sp.port : 0)));
  const protocol = str(sp.protocol);
  if (!protocol) errs.push(required(p.child('protocol'), ''));
  else if (!supportedProtocols.includes(protocol)) errs.push(notSupported(p.child('protocol'), protocol, supportedProtocols));
  const tp = sp.targetPort;
  if (typeof tp === 'number') errs.push(...invalidEach(p.child('targetPort'), tp, portNumErrors(tp)));
  else if (typeof tp === 'string') errs.push(...invalidEach(p.child('targetPort'), tp, portNameErrors(tp)));
  if (sp.appProtocol != null) errs.push(...validateQualifiedName(str(sp.appProtocol), p.child('appProtocol')));
  return errs;
}

function validateClusterIPFields(s: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const ipsPath = specPath.child('clusterIPs');
  const ips = clusterIPsOf(s);
  if (s.type === 'ExternalName') return errs;
  if (str(s.clusterIP) && arr(s.clusterIPs).length > 0 && s.clusterIP !== s.clusterIPs[0]) {
    errs.push(invalid(ipsPath, s.clusterIPs, 'first value must match `clusterIP`'));
  }
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) errs.push(invalid(ipsPath, ips, "'None' must be the first and only value"));
      return;
    }
    errs.push(...ipErrors(ipsPath.index(i), ip));
  });
  const realIPs = ips.filter(isIP);
  if (realIPs.length > 1 && (realIPs.length > 2 || realIPs.filter(isIPv4).length !== 1)) {
    errs.push(invalid(ipsPath, ips, 'may specify no more than one IP for each IP family'));
  }
  if (s.ipFamilyPolicy != null && !ipFamilyPolicies.includes(s.ipFamilyPolicy)) {
    errs.push(notSupported(specPath.child('ipFamilyPolicy'), s.ipFamilyPolicy, ipFamilyPolicies));
  }
  const families = arr(s.ipFamilies).map(str);
  families.forEach((f, i) => {
    const fp = specPath.child('ipFamilies').index(i);
    if (f !== 'IPv4' && f !== 'IPv6') errs.push(notSupported(fp, f, ['IPv4', 'IPv6']));
    else if (families.indexOf(f) !== i) errs.push(duplicate(fp, f));
  });
  if (families.length > 2) errs.push(invalid(specPath.child('ipFamilies'), families, 'may specify no more than one IP for each IP family'));
  if (s.ipFamilyPolicy === 'SingleStack' && realIPs.length > 1) {
    errs.push(invalid(specPath.child('ipFamilyPolicy'), s.ipFamilyPolicy, 'must be RequireDualStack or PreferDualStack when multiple IPs are specified'));
  }
  return errs;
}

export function validateService(svc: Obj): FieldError[] {
  const errs = validateObjectMeta(svc.metadata, true, nameIsDNS1035Label);
  const s = spec(svc);
  const ports = arr(s.ports).map((p) => (isObj(p) ? p : {}));
  const portsPath = specPath.child('ports');
  const type = str(s.type);
  if (ports.length === 0 && !isHeadless(s) && type !== 'ExternalName') errs.push(required(portsPath, ''));
  if ((type === 'LoadBalancer' || type === 'NodePort') && isHeadless(s)) {
    errs.push(invalid(specPath.child('clusterIPs').index(0), 'None', `may not be set to 'None' for ${type} services`));
  }
  if (type === 'ExternalName') {
    if (clusterIPsOf(s).length > 0) errs.push(forbidden(specPath.child('clusterIPs'), 'may not be set for ExternalName services'));
    if (arr(s.ipFamilies).length > 0) errs.push(forbidden(specPath.child('ipFamilies'), 'may not be set for ExternalName services'));
    if (s.ipFamilyPolicy != null) errs.push(forbidden(specPath.child('ipFamilyPolicy'), 'may not be set for ExternalName services'));
    const cname = str(s.externalName).replace(/\.$/, '');
    if (cname) errs.push(...invalidEach(specPath.child('externalName'), cname, dns1123SubdomainErrors(cname)));
    else errs.push(required(specPath.child('externalName'), ''));
  }
  const names = new Set<string>();
  ports.forEach((p, i) => errs.push(...validateServicePort(p, ports.length > 1, names, portsPath.index(i))));
  if (s.selector != null) errs.push(...validateLabels(s.selector, specPath.child('selector')));
  const affinity = str(s.sessionAffinity);
  if (!affinity) errs.push(required(specPath.child('sessionAffinity'), ''));
  else if (affinity !== 'ClientIP' && affinity !== 'None') errs.push(notSupported(specPath.child('sessionAffinity'), affinity, ['ClientIP', 'None']));
  if (affinity === 'ClientIP') {
    const configPath = specPath.child('sessionAffinityConfig');
    const why = 'when session affinity type is ClientIP';
    const config = s.sessionAffinityConfig;
    if (!isObj(config)) errs.push(required(configPath, why));
    else if (!isObj(config.clientIP)) errs.push(required(configPath.child('clientIP'), why));
    else if (config.clientIP.timeoutSeconds == null) errs.push(required(configPath.child('clientIP', 'timeoutSeconds'), why));
    else {
      const timeout = config.clientIP.timeoutSeconds;
      if (typeof timeout !== 'number' || timeout <= 0 || timeout > 86400) {
        errs.push(invalid(configPath.child('clientIP', 'timeoutSeconds'), timeout, 'must be greater than 0 and less than 86400'));
      }
    }
  } else if (affinity === 'None' && s.sessionAffinityConfig != null) {
    errs.push(forbidden(specPath.child('sessionAffinityConfig'), 'must not be set when session affinity is None'));
  }
  errs.push(...validateClusterIPFields(s));
  arr(s.externalIPs).forEach((ip, i) => {
    const ep = specPath.child('externalIPs').index(i);
    const ipErrs = ipErrors(ep, str(ip));
    errs.push(...(ipErrs.length ? ipErrs : validateNonSpecialIP(str(ip), ep)));
  });
  if (!type) errs.push(required(specPath.child('type'), ''));
  else if (!serviceTypes.includes(type)) errs.push(notSupported(specPath.child('type'), type, serviceTypes));
  if (type === 'ClusterIP') {
    ports.forEach((p, i) => p.nodePort && errs.push(forbidden(portsPath.index(i).child('nodePort'), "may not be used when `type` is 'ClusterIP'")));
  }
  const nodePorts = new Set<string>();
  const portKeys = new Set<string>();
  ports.forEach((p, i) => {
    if (p.nodePort) {
      const key = `${str(p.protocol)}/${p.nodePort}`;
      if (nodePorts.has(key)) errs.push(duplicate(portsPath.index(i).child('nodePort'), p.nodePort));
      nodePorts.add(key);
    }
    const key = `${str(p.protocol)}/${p.port}`;
    if (portKeys.has(key)) errs.push(duplicate(portsPath.index(i), goServicePortKey(str(p.protocol), p.port)));
    portKeys.add(key);
  });
  const etp = s.externalTrafficPolicy;
  const externallyAccessible = type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && arr(s.externalIPs).length > 0);
  if (externallyAccessible) {
    if (!etp) errs.push(required(specPath.child('externalTrafficPolicy'), ''));
    else if (etp !== 'Cluster' && etp !== 'Local') errs.push(notSupported(specPath.child('externalTrafficPolicy'), etp, ['Cluster', 'Local']));
  } else if (etp) {
    errs.push(invalid(specPath.child('externalTrafficPolicy'), etp, 'may only be set for externally-accessible services'));
  }
  if (s.healthCheckNodePort && !(type === 'LoadBalancer' && etp === 'Local')) {
    errs.push(invalid(specPath.child('healthCheckNodePort'), s.healthCheckNodePort, 'may only be set when `type` is \'LoadBalancer\' and `externalTrafficPolicy` is \'Local\''));
  }
  const itp = s.internalTrafficPolicy;
  if (itp == null) {
    // Other types historically went unchecked, and stored objects must stay valid.
    if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP') errs.push(required(specPath.child('internalTrafficPolicy'), ''));
  } else if (itp !== 'Cluster' && itp !== 'Local') {
    errs.push(notSupported(specPath.child('internalTrafficPolicy'), itp, ['Cluster', 'Local']));
  }
  for (const [k, v] of Object.entries(strMap(svc.metadata?.annotations))) {
    if (k === 'service.beta.kubernetes.io/load-balancer-source-ranges' && type !== 'LoadBalancer' && v) {
      errs.push(forbidden(metaPath.child('annotations').key(k), 'may only be used when `type` is \'LoadBalancer\''));
    }
  }
  return errs;
}

/** The cluster IPs may not change once allocated, unless the service changes to or from ExternalName. */
export function validateServiceUpdate(svc: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(svc.metadata, old.metadata);
  const s = spec(svc);
  const o = spec(old);
  if (s.type !== 'ExternalName' && o.type !== 'ExternalName') {
    const oldIPs = clusterIPsOf(o);
    const newIPs = clusterIPsOf(s);
    const p = specPath.child('clusterIPs');
    if (oldIPs.length === newIPs.length) {
      oldIPs.forEach((ip, i) => ip !== newIPs[i] && errs.push(invalid(p.index(i), newIPs, 'may not change once set')));
    } else if (oldIPs.length > 0 && newIPs.length > 0 && oldIPs[0] !== newIPs[0]) {
      errs.push(invalid(p.index(0), newIPs, 'may not change once set'));
    }
    const oldFamilies = arr(o.ipFamilies);
    const newFamilies = arr(s.ipFamilies);
    if (oldFamilies.length > 0 && newFamilies.length > 0 && oldFamilies[0] !== newFamilies[0]) {
      errs.push(invalid(specPath.child('ipFamilies').index(0), str(newFamilies[0]), 'may not change once set'));
    }
  }
  return [...errs, ...validateService(svc)];
}

export function validateServiceStatusUpdate(svc: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(svc.metadata, old.metadata);
  const ingressPath = Path.root('status').child('loadBalancer', 'ingress');
  arr(status(svc).loadBalancer?.ingress).forEach((ing, i) => {
    const ip = ingressPath.index(i);
    if (str(ing?.ip)) errs.push(...ipErrors(ip.child('ip'), ing.ip));
    if (ing?.ipMode != null) {
      if (!str(ing.ip)) errs.push(forbidden(ip.child('ipMode'), 'may not be specified when `ip` is not set'));
      else if (ing.ipMode !== 'VIP' && ing.ipMode !== 'Proxy') errs.push(notSupported(ip.child('ipMode'), ing.ipMode, ['VIP', 'Proxy']));
    } else if (str(ing?.ip)) {
      errs.push(required(ip.child('ipMode'), 'must be specified when `ip` is set'));
    }
    if (str(ing?.hostname)) {
      errs.push(...invalidEach(ip.child('hostname'), ing.hostname, dns1123SubdomainErrors(ing.hostname)));
      if (isIP(ing.hostname)) errs.push(invalid(ip.child('hostname'), ing.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

// ---- Event (core/v1 and events.k8s.io/v1) ----

/** An event in the internal shape upstream validates: both API versions map onto these fields. */
export interface EventView {
  namespace: string;
  meta: unknown;
  involvedNamespace: string;
  reason: string;
  message: string;
  type: string;
  action: string;
  reportingController: string;
  reportingInstance: string;
  eventTime: unknown;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: unknown;
  source: Obj;
  series: unknown;
  /** The fields compared for immutability on update. */
  involvedObject: unknown;
  related: unknown;
}

export function coreEventView(e: Obj): EventView {
  return {
    namespace: str(e.metadata?.namespace),
    meta: e.metadata,
    involvedNamespace: str(e.involvedObject?.namespace),
    reason: str(e.reason),
    message: str(e.message),
    type: str(e.type),
    action: str(e.action),
    reportingController: str(e.reportingComponent),
    reportingInstance: str(e.reportingInstance),
    eventTime: e.eventTime,
    firstTimestamp: e.firstTimestamp,
    lastTimestamp: e.lastTimestamp,
    count: e.count,
    source: isObj(e.source) ? e.source : {},
    series: e.series,
    involvedObject: e.involvedObject,
    related: e.related,
  };
}

export function eventsV1View(e: Obj): EventView {
  return {
    namespace: str(e.metadata?.namespace),
    meta: e.metadata,
    involvedNamespace: str(e.regarding?.namespace),
    reason: str(e.reason),
    message: str(e.note),
    type: str(e.type),
    action: str(e.action),
    reportingController: str(e.reportingController),
    reportingInstance: str(e.reportingInstance),
    eventTime: e.eventTime,
    firstTimestamp: e.deprecatedFirstTimestamp,
    lastTimestamp: e.deprecatedLastTimestamp,
    count: e.deprecatedCount,
    source: isObj(e.deprecatedSource) ? e.deprecatedSource : {},
    series: e.series,
    involvedObject: e.regarding,
    related: e.related,
  };
}

const isSet = (t: unknown) => t != null && t !== '';

/** legacyValidateEvent: the checks every event passes; `coreV1` picks the reporting field's name. */
function legacyValidateEvent(e: EventView, coreV1: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const involvedNs = Path.root('involvedObject').child('namespace');
  const mismatch = () => errs.push(invalid(involvedNs, e.involvedNamespace, 'does not match event.namespace'));
  if (!isSet(e.eventTime)) {
    if (!e.involvedNamespace) {
      if (e.namespace !== '' && e.namespace !== 'default') mismatch();
    } else if (e.namespace !== e.involvedNamespace) mismatch();
  } else {
    if (!e.involvedNamespace && e.namespace !== 'default' && e.namespace !== 'kube-system') mismatch();
    const rc = Path.root(coreV1 ? 'reportingComponent' : 'reportingController');
    if (!e.reportingController) errs.push(required(rc, ''));
    errs.push(...validateQualifiedName(e.reportingController, rc));
    const limited: [string, string, number][] = [['reportingInstance', e.reportingInstance, 128], ['action', e.action, 128], ['reason', e.reason, 128]];
    for (const [field, value, limit] of limited) {
      if (!value) errs.push(required(Path.root(field), ''));
      if (value.length > limit) errs.push(invalid(Path.root(field), '', `can have at most ${limit} characters`));
    }
    if (e.message.length > 1024) errs.push(invalid(Path.root('message'), '', 'can have at most 1024 characters'));
  }
  errs.push(...invalidEach(Path.root('namespace'), e.namespace, dns1123SubdomainErrors(e.namespace)));
  return errs;
}

function validateEventSeries(e: EventView): FieldError[] {
  if (!isObj(e.series)) return [];
  const errs: FieldError[] = [];
  if (typeof e.series.count !== 'number' || e.series.count < 2) errs.push(invalid(Path.root('series.count'), '', 'should be at least 2'));
  if (!isSet(e.series.lastObservedTime)) errs.push(required(Path.root('series.lastObservedTime'), ''));
  return errs;
}

/** ValidateEventCreate: core/v1 events get the legacy checks only, events.k8s.io/v1 the strict ones too. */
export function validateEventCreate(e: EventView, coreV1: boolean): FieldError[] {
  const errs = legacyValidateEvent(e, coreV1);
  if (coreV1) return errs;
  errs.push(...validateObjectMeta(e.meta, true, nameIsDNSSubdomain));
  errs.push(...validateEventSeries(e));
  if (!isSet(e.eventTime)) errs.push(required(Path.root('eventTime'), ''));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(invalid(Path.root('type'), '', `has invalid value: ${e.type}`));
  if (isSet(e.firstTimestamp)) errs.push(invalid(Path.root('firstTimestamp'), '', 'needs to be unset'));
  if (isSet(e.lastTimestamp)) errs.push(invalid(Path.root('lastTimestamp'), '', 'needs to be unset'));
  if (e.count) errs.push(invalid(Path.root('count'), '', 'needs to be unset'));
  if (str(e.source.component) || str(e.source.host)) errs.push(invalid(Path.root('source'), '', 'needs to be unset'));
  return errs;
}

export function validateEventUpdate(e: EventView, old: EventView, coreV1: boolean): FieldError[] {
  const errs = legacyValidateEvent(e, coreV1);
  if (coreV1) return errs;
  errs.push(...validateObjectMetaUpdate(e.meta, old.meta));
  if (!deepEqual(e.series, old.series)) errs.push(...validateEventSeries(e));
  const fields: [string, keyof EventView][] = [
    ['involvedObject', 'involvedObject'], ['reason', 'reason'], ['message', 'message'], ['source', 'source'],
    ['firstTimestamp', 'firstTimestamp'], ['lastTimestamp', 'lastTimestamp'], ['count', 'count'], ['action', 'action'],
    ['related', 'related'], ['type', 'type'], ['eventTime', 'eventTime'], ['reportingController', 'reportingController'],
    ['reportingInstance', 'reportingInstance'],
  ];
  for (const [field, key] of fields) errs.push(...validateImmutable(e[key], old[key], Path.root(field)));
  return errs;
}
