// Pod spec validation as upstream's ValidatePodSpec and its helpers (pkg/apis/core/validation), with
// upstream's messages and field paths. Objects are decoded and defaulted JSON, read loosely.
import { duplicate, forbidden, invalid, notFound, notSupported, rawValue, required, type FieldError, type Path } from '../field.js';
import { Quantity } from '../quantity.js';
import { arr, isObj, str, validateAnnotations, validateLabelSelector, validateLabels, validateNonnegative, validateQualifiedName, type Obj } from './meta.js';
import {
  configMapKeyErrors,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  dns1123SubdomainWithUnderscoreErrors,
  envVarNameErrors,
  httpHeaderNameErrors,
  inclusiveRangeError,
  invalidEach,
  ipErrors,
  isNegativeErrorMsg,
  labelValueErrors,
  nameIsDNSSubdomain,
  portNameErrors,
  portNumErrors,
  qualifiedNameErrors,
} from './names.js';

export const validateDNS1123Label = (value: string, p: Path): FieldError[] => invalidEach(p, value, dns1123LabelErrors(value));

const supportedProtocols = ['SCTP', 'TCP', 'UDP'];
const fileModeErrorMsg = 'must be a number between 0 and 0777 (octal), both inclusive';
const maxInt32 = 2147483647;

// ---- resources ----

const isHugePage = (name: string) => name.startsWith('hugepages-');
export const isNativeResourceName = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: a non-native name that may be requested as requests.<name>. */
export const isExtendedResourceName = (name: string) => !isNativeResourceName(name) && !name.startsWith('requests.') && qualifiedNameErrors(`requests.${name}`).length === 0;
const overcommitAllowed = (name: string) => isNativeResourceName(name) && !isHugePage(name);
const standardContainerResources = new Set(['cpu', 'memory', 'ephemeral-storage']);
const standardResources = new Set([
  ...standardContainerResources,
  'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage',
  'pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps', 'persistentvolumeclaims',
  'requests.storage', 'services.nodeports', 'services.loadbalancers',
]);

/** validateResourceName: a qualified name, and a standard one when it has no domain. */
export function validateResourceName(name: string, p: Path): FieldError[] {
  const errs = validateQualifiedName(name, p);
  if (errs.length) return errs;
  if (!name.includes('/') && !standardResources.has(name) && !isHugePage(name)) {
    return [invalid(p, name, 'must be a standard resource type or fully qualified')];
  }
  return [];
}

export function validateContainerResourceName(name: string, p: Path): FieldError[] {
  const errs = validateResourceName(name, p);
  if (!name.includes('/')) {
    if (!standardContainerResources.has(name) && !isHugePage(name)) errs.push(invalid(p, name, 'must be a standard resource for containers'));
  } else if (!isNativeResourceName(name) && !isExtendedResourceName(name)) {
    errs.push(invalid(p, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** A quantity field's value, or an Invalid error when it does not parse. */
export function quantityAt(value: unknown, p: Path, errs: FieldError[]): Quantity | undefined {
  try {
    return Quantity.from(value as string | number);
  } catch (e) {
    errs.push(invalid(p, value, (e as Error).message));
    return undefined;
  }
}

/** Counted resources (helper.IsIntegerResourceName, with the extended ones). */
const integerResources = new Set([
  'pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims',
  'services.nodeports', 'services.loadbalancers',
]);

/** ValidateResourceQuantityValue: non-negative, and whole for integer (counted or extended) resources. */
export function validateResourceQuantity(name: string, q: Quantity, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (q.sign() < 0) errs.push(invalid(p, q.toString(), isNegativeErrorMsg));
  if ((integerResources.has(name) || isExtendedResourceName(name)) && q.milliValue() % 1000n !== 0n) errs.push(invalid(p, rawValue(q.toString()), 'must be an integer'));
  return errs;
}

function validateResourceRequirements(r: unknown, p: Path): FieldError[] {
  const res = isObj(r) ? r : {};
  const errs: FieldError[] = [];
  const limPath = p.child('limits');
  const reqPath = p.child('requests');
  const limits = new Map<string, Quantity>();
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, raw] of Object.entries(isObj(res.limits) ? res.limits : {})) {
    const fp = limPath.key(name);
    errs.push(...validateContainerResourceName(name, fp));
    const q = quantityAt(raw, fp, errs);
    if (!q) continue;
    limits.set(name, q);
    errs.push(...validateResourceQuantity(name, q, fp));
    if (isHugePage(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  for (const [name, raw] of Object.entries(isObj(res.requests) ? res.requests : {})) {
    const fp = reqPath.key(name);
    errs.push(...validateContainerResourceName(name, fp));
    const q = quantityAt(raw, fp, errs);
    if (!q) continue;
    errs.push(...validateResourceQuantity(name, q, fp));
    const lim = limits.get(name);
    if (lim) {
      // Resources that cannot be overcommitted need request == limit.
      if (q.cmp(lim) !== 0 && !overcommitAllowed(name)) {
        errs.push(invalid(reqPath, q.toString(), `must be equal to ${name} limit of ${lim.toString()}`));
      } else if (q.cmp(lim) > 0) {
        errs.push(invalid(reqPath, q.toString(), `must be less than or equal to ${name} limit of ${lim.toString()}`));
      }
    } else if (!overcommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePage(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) errs.push(forbidden(p, 'HugePages require cpu or memory'));
  return errs;
}

// ---- volumes ----

const volumeSourceNames = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile',
  'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume',
  'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
];
const hostPathTypes = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'];

function validatePathNoBacksteps(target: string, p: Path): FieldError[] {
  return target.split('/').includes('..') ? [invalid(p, target, "must not contain '..'")] : [];
}

function validateLocalDescendingPath(target: string, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (target.startsWith('/')) errs.push(invalid(p, target, 'must be a relative path'));
  return [...errs, ...validatePathNoBacksteps(target, p)];
}

function validateLocalNonReservedPath(target: string, p: Path): FieldError[] {
  const errs = validateLocalDescendingPath(target, p);
  if (target.startsWith('..') && !target.startsWith('../')) errs.push(invalid(p, target, "must not start with '..'"));
  return errs;
}

function validateMode(mode: unknown, p: Path): FieldError[] {
  return typeof mode === 'number' && (mode > 0o777 || mode < 0) ? [invalid(p, mode, fileModeErrorMsg)] : [];
}

function validateKeyToPaths(items: unknown, p: Path): FieldError[] {
  return arr(items).flatMap((kp, i) => {
    const ip = p.index(i);
    const errs: FieldError[] = [];
    if (!str(kp?.key)) errs.push(required(ip.child('key'), ''));
    if (!str(kp?.path)) errs.push(required(ip.child('path'), ''));
    errs.push(...validateLocalNonReservedPath(str(kp?.path), ip.child('path')));
    errs.push(...validateMode(kp?.mode, ip.child('mode')));
    return errs;
  });
}

const downwardVolumeFieldPaths = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];
const downwardEnvFieldPaths = [
  'metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName',
  'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs',
];
const convertibleFieldPaths = new Set([
  'metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName',
  'spec.restartPolicy', 'spec.serviceAccountName', 'spec.schedulerName', 'status.phase', 'status.hostIP', 'status.hostIPs',
  'status.podIP', 'status.podIPs',
]);

function validateObjectFieldSelector(fs: Obj, allowed: string[], p: Path): FieldError[] {
  const apiVersion = str(fs.apiVersion);
  const fieldPath = str(fs.fieldPath);
  if (!apiVersion) return [required(p.child('apiVersion'), '')];
  if (!fieldPath) return [required(p.child('fieldPath'), '')];
  const sub = /^(metadata\.(?:labels|annotations)|[^[]+)\['(.*)'\]$/.exec(fieldPath);
  const path = sub ? sub[1]! : fieldPath;
  if (apiVersion !== 'v1') return [invalid(p.child('fieldPath'), fieldPath, `error converting fieldPath: unsupported pod version: ${apiVersion}`)];
  if (!sub && !convertibleFieldPaths.has(path)) return [invalid(p.child('fieldPath'), fieldPath, `error converting fieldPath: field label not supported: ${fieldPath}`)];
  if (sub) {
    if (path === 'metadata.annotations') return validateQualifiedName(sub[2]!.toLowerCase(), p);
    if (path === 'metadata.labels') return validateQualifiedName(sub[2]!, p);
    return [invalid(p, path, 'does not support subscript')];
  }
  return allowed.includes(path) ? [] : [notSupported(p.child('fieldPath'), path, [...allowed].sort())];
}

const resourceFieldRefs = [
  'limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory',
];
const memoryDivisors = ['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei'];

function validateResourceFieldSelector(rf: Obj, p: Path, inVolume: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (inVolume && !str(rf.containerName)) errs.push(required(p.child('containerName'), ''));
  const resource = str(rf.resource);
  if (!resource) return [...errs, required(p.child('resource'), '')];
  const huge = /^(limits|requests)\.hugepages-/.test(resource);
  if (!resourceFieldRefs.includes(resource) && !huge) return [...errs, notSupported(p.child('resource'), resource, resourceFieldRefs)];
  if (rf.divisor == null) return errs;
  const d = quantityAt(rf.divisor, p.child('divisor'), errs);
  if (!d || d.isZero()) return errs;
  const text = d.toString();
  // Upstream reports the resource name, not the divisor, as the bad value.
  if (resource.endsWith('.cpu')) {
    if (text !== '1m' && text !== '1') errs.push(invalid(p.child('divisor'), resource, "only divisor's values 1m and 1 are supported with the cpu resource"));
  } else if (!memoryDivisors.includes(text)) {
    const what = resource.endsWith('.memory') ? 'memory' : huge ? 'hugepages' : 'local ephemeral storage';
    errs.push(invalid(p.child('divisor'), resource, `only divisor's values ${memoryDivisors.join(', ')} are supported with the ${what} resource`));
  }
  return errs;
}

function validateDownwardAPIFiles(items: unknown, p: Path): FieldError[] {
  return arr(items).flatMap((f, i) => {
    const ip = p.index(i);
    const errs: FieldError[] = [];
    if (!str(f?.path)) errs.push(required(ip.child('path'), ''));
    errs.push(...validateLocalNonReservedPath(str(f?.path), ip.child('path')));
    errs.push(...validateMode(f?.mode, ip.child('mode')));
    if (isObj(f?.fieldRef)) {
      errs.push(...validateObjectFieldSelector(f.fieldRef, downwardVolumeFieldPaths, ip.child('fieldRef')));
      if (isObj(f.resourceFieldRef)) errs.push(invalid(ip, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
    } else if (isObj(f?.resourceFieldRef)) {
      errs.push(...validateResourceFieldSelector(f.resourceFieldRef, ip.child('resourceFieldRef'), true));
    } else {
      errs.push(required(ip, 'one of fieldRef and resourceFieldRef is required'));
    }
    return errs;
  });
}

function validateProjected(proj: Obj, p: Path): FieldError[] {
  const errs = validateMode(proj.defaultMode, p.child('defaultMode'));
  arr(proj.sources).forEach((s, i) => {
    const sp = p.child('sources').index(i);
    const kinds = ['secret', 'downwardAPI', 'configMap', 'serviceAccountToken', 'clusterTrustBundle'].filter((k) => s?.[k] != null);
    if (kinds.length === 0) errs.push(required(sp, 'must specify exactly one volume projection source'));
    for (const k of kinds.slice(1)) errs.push(forbidden(sp.child(k), 'may not specify more than 1 volume type per source'));
    if (isObj(s?.secret) || isObj(s?.configMap)) {
      const key = isObj(s.secret) ? 'secret' : 'configMap';
      if (!str(s[key].name)) errs.push(required(sp.child(key, 'name'), ''));
      errs.push(...validateKeyToPaths(s[key].items, sp.child(key, 'items')));
    }
    if (isObj(s?.downwardAPI)) errs.push(...validateDownwardAPIFiles(s.downwardAPI.items, sp.child('downwardAPI', 'items')));
    if (isObj(s?.serviceAccountToken)) {
      const t = s.serviceAccountToken;
      const tp = sp.child('serviceAccountToken');
      if (typeof t.expirationSeconds === 'number') {
        if (t.expirationSeconds < 600) errs.push(invalid(tp.child('expirationSeconds'), t.expirationSeconds, 'may not specify a duration less than 10 minutes'));
        if (t.expirationSeconds > 2 ** 32) errs.push(invalid(tp.child('expirationSeconds'), t.expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
      }
      if (!str(t.path)) errs.push(required(tp.child('path'), ''));
    }
  });
  return errs;
}

function validateVolumeSource(v: Obj, p: Path): FieldError[] {
  const present = volumeSourceNames.filter((s) => v[s] != null);
  if (present.length === 0) return [required(p, 'must specify a volume type')];
  const errs = present.slice(1).map((s) => forbidden(p.child(s), 'may not specify more than 1 volume type'));
  const src = v[present[0]!];
  const sp = p.child(present[0]!);
  if (!isObj(src)) return errs;
  switch (present[0]) {
    case 'hostPath':
      if (!str(src.path)) errs.push(required(sp.child('path'), ''));
      else errs.push(...validatePathNoBacksteps(src.path, sp.child('path')));
      if (src.type != null && !hostPathTypes.includes(src.type)) errs.push(notSupported(sp.child('type'), src.type, hostPathTypes));
      break;
    case 'emptyDir':
      if (src.sizeLimit != null) {
        const q = quantityAt(src.sizeLimit, sp.child('sizeLimit'), errs);
        if (q && q.sign() < 0) errs.push(forbidden(sp.child('sizeLimit'), 'SizeLimit field must be a valid resource quantity'));
      }
      break;
    case 'secret':
      if (!str(src.secretName)) errs.push(required(sp.child('secretName'), ''));
      errs.push(...validateMode(src.defaultMode, sp.child('defaultMode')));
      errs.push(...validateKeyToPaths(src.items, sp.child('items')));
      break;
    case 'configMap':
      if (!str(src.name)) errs.push(required(sp.child('name'), ''));
      errs.push(...validateMode(src.defaultMode, sp.child('defaultMode')));
      errs.push(...validateKeyToPaths(src.items, sp.child('items')));
      break;
    case 'persistentVolumeClaim':
      if (!str(src.claimName)) errs.push(required(sp.child('claimName'), ''));
      break;
    case 'downwardAPI':
      errs.push(...validateMode(src.defaultMode, sp.child('defaultMode')));
      errs.push(...validateDownwardAPIFiles(src.items, sp.child('items')));
      break;
    case 'projected':
      errs.push(...validateProjected(src, sp));
      break;
    case 'nfs':
      if (!str(src.server)) errs.push(required(sp.child('server'), ''));
      if (!str(src.path)) errs.push(required(sp.child('path'), ''));
      else if (!src.path.startsWith('/')) errs.push(invalid(sp.child('path'), src.path, 'must be an absolute path'));
      break;
    case 'ephemeral':
      if (!isObj(src.volumeClaimTemplate)) errs.push(required(sp.child('volumeClaimTemplate'), ''));
      break;
  }
  return errs;
}

/** ValidateVolumes: returns the valid volumes by name, for mounts to refer to. */
function validateVolumes(volumes: unknown, p: Path): { names: Set<string>; errs: FieldError[] } {
  const names = new Set<string>();
  const errs: FieldError[] = [];
  arr(volumes).forEach((v, i) => {
    const ip = p.index(i);
    const vol = isObj(v) ? v : {};
    const name = str(vol.name);
    const el = validateVolumeSource(vol, ip);
    if (!name) el.push(required(ip.child('name'), ''));
    else el.push(...validateDNS1123Label(name, ip.child('name')));
    if (names.has(name)) el.push(duplicate(ip.child('name'), name));
    if (el.length === 0) names.add(name);
    else errs.push(...el);
  });
  return { names, errs };
}

// ---- containers ----

function validateEnv(env: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  arr(env).forEach((ev, i) => {
    const ip = p.index(i);
    const name = str(ev?.name);
    if (!name) errs.push(required(ip.child('name'), ''));
    else errs.push(...invalidEach(ip.child('name'), name, envVarNameErrors(name)));
    const from = ev?.valueFrom;
    if (!isObj(from)) return;
    const fp = ip.child('valueFrom');
    let sources = 0;
    if (isObj(from.fieldRef)) {
      sources++;
      errs.push(...validateObjectFieldSelector(from.fieldRef, downwardEnvFieldPaths, fp.child('fieldRef')));
    }
    if (isObj(from.resourceFieldRef)) {
      sources++;
      errs.push(...validateResourceFieldSelector(from.resourceFieldRef, fp.child('resourceFieldRef'), false));
    }
    for (const key of ['configMapKeyRef', 'secretKeyRef'] as const) {
      const ref = from[key];
      if (!isObj(ref)) continue;
      sources++;
      const rp = fp.child(key);
      errs.push(...invalidEach(rp.child('name'), str(ref.name), nameIsDNSSubdomain(str(ref.name), false)));
      if (!str(ref.key)) errs.push(required(rp.child('key'), ''));
      else errs.push(...invalidEach(rp.child('key'), ref.key, configMapKeyErrors(ref.key)));
    }
    if (sources === 0) errs.push(invalid(fp, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    else if (str(ev.value)) errs.push(invalid(fp, '', 'may not be specified when `value` is not empty'));
    else if (sources > 1) errs.push(invalid(fp, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateEnvFrom(envFrom: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  arr(envFrom).forEach((ef, i) => {
    const ip = p.index(i);
    if (str(ef?.prefix)) errs.push(...invalidEach(ip.child('prefix'), ef.prefix, envVarNameErrors(ef.prefix)));
    let sources = 0;
    for (const key of ['configMapRef', 'secretRef'] as const) {
      if (!isObj(ef?.[key])) continue;
      sources++;
      const name = str(ef[key].name);
      if (!name) errs.push(required(ip.child(key, 'name'), ''));
      else errs.push(...invalidEach(ip.child(key, 'name'), name, nameIsDNSSubdomain(name, true)));
    }
    if (sources === 0) errs.push(invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) errs.push(invalid(p, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateVolumeMounts(c: Obj, volumes: Set<string>, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  const devices = arr(c.volumeDevices);
  arr(c.volumeMounts).forEach((m, i) => {
    const ip = p.index(i);
    const name = str(m?.name);
    const mountPath = str(m?.mountPath);
    if (!name) errs.push(required(ip.child('name'), ''));
    if (!volumes.has(name)) errs.push(notFound(ip.child('name'), name));
    if (!mountPath) errs.push(required(ip.child('mountPath'), ''));
    if (mountPoints.has(mountPath)) errs.push(invalid(ip.child('mountPath'), mountPath, 'must be unique'));
    mountPoints.add(mountPath);
    if (devices.some((d) => d?.name === name)) errs.push(invalid(ip.child('name'), name, 'must not already exist in volumeDevices'));
    if (devices.some((d) => d?.devicePath === mountPath)) errs.push(invalid(ip.child('mountPath'), mountPath, 'must not already exist as a path in volumeDevices'));
    // Upstream reports sub-path problems at the list's path, not the item's.
    if (str(m?.subPath)) errs.push(...validateLocalDescendingPath(m.subPath, p.child('subPath')));
    if (str(m?.subPathExpr)) {
      if (str(m.subPath)) errs.push(invalid(ip.child('subPathExpr'), m.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      errs.push(...validateLocalDescendingPath(m.subPathExpr, p.child('subPathExpr')));
    }
    if (m?.mountPropagation != null) {
      const valid = ['Bidirectional', 'HostToContainer', 'None'];
      if (!valid.includes(m.mountPropagation)) errs.push(notSupported(p.child('mountPropagation'), m.mountPropagation, valid));
      else if (m.mountPropagation === 'Bidirectional' && c.securityContext?.privileged !== true) {
        errs.push(forbidden(p.child('mountPropagation'), 'Bidirectional mount propagation is available only to privileged containers'));
      }
    }
    if (m?.recursiveReadOnly != null) {
      const rp = p.child('recursiveReadOnly');
      const valid = ['Disabled', 'IfPossible', 'Enabled'];
      if (!valid.includes(m.recursiveReadOnly)) errs.push(notSupported(rp, m.recursiveReadOnly, valid));
      else if (m.recursiveReadOnly !== 'Disabled' && m.readOnly !== true) errs.push(forbidden(rp, 'may only be specified when readOnly is true'));
    }
  });
  return errs;
}

function validateContainerPorts(ports: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  arr(ports).forEach((port, i) => {
    const ip = p.index(i);
    const name = str(port?.name);
    if (name) {
      const msgs = portNameErrors(name);
      if (msgs.length) errs.push(...invalidEach(ip.child('name'), name, msgs));
      else if (names.has(name)) errs.push(duplicate(ip.child('name'), name));
      else names.add(name);
    }
    if (!port?.containerPort) errs.push(required(ip.child('containerPort'), ''));
    else errs.push(...invalidEach(ip.child('containerPort'), port.containerPort, portNumErrors(port.containerPort)));
    if (port?.hostPort) errs.push(...invalidEach(ip.child('hostPort'), port.hostPort, portNumErrors(port.hostPort)));
    const protocol = str(port?.protocol);
    if (!protocol) errs.push(required(ip.child('protocol'), ''));
    else if (!supportedProtocols.includes(protocol)) errs.push(notSupported(ip.child('protocol'), protocol, supportedProtocols));
  });
  return errs;
}

/** Host ports must be unique per (hostIP, protocol, port) across the given containers. */
function checkHostPortConflicts(containers: Obj[], p: Path, indexOffset = 0): FieldError[] {
  const seen = new Set<string>();
  const errs: FieldError[] = [];
  containers.forEach((c, ci) => {
    arr(c.ports).forEach((port, pi) => {
      if (!port?.hostPort) return;
      const key = `${str(port.protocol)}/${str(port.hostIP)}/${port.hostPort}`;
      if (seen.has(key)) errs.push(duplicate(p.index(ci + indexOffset).child('ports').index(pi).child('hostPort'), key));
      seen.add(key);
    });
  });
  return errs;
}

function validatePortNumOrName(port: unknown, p: Path): FieldError[] {
  if (typeof port === 'number') return invalidEach(p, port, portNumErrors(port));
  if (typeof port === 'string') return invalidEach(p, port, portNameErrors(port));
  return [invalid(p, port ?? null, 'must be an integer or a port name')];
}

/** validateHandler: exactly one action, each checked. */
function validateHandler(h: Obj, gracePeriod: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  let handlers = 0;
  const check = (key: string, fn: (v: Obj, hp: Path) => FieldError[]) => {
    if (!isObj(h[key])) return;
    if (handlers > 0) errs.push(forbidden(p.child(key), 'may not specify more than 1 handler type'));
    else {
      handlers++;
      errs.push(...fn(h[key], p.child(key)));
    }
  };
  check('exec', (v, hp) => (arr(v.command).length === 0 ? [required(hp.child('command'), '')] : []));
  check('httpGet', (v, hp) => {
    const e: FieldError[] = [];
    if (!str(v.path)) e.push(required(hp.child('path'), ''));
    e.push(...validatePortNumOrName(v.port, hp.child('port')));
    if (!['HTTP', 'HTTPS'].includes(v.scheme)) e.push(notSupported(hp.child('scheme'), v.scheme ?? '', ['HTTP', 'HTTPS']));
    for (const header of arr(v.httpHeaders)) e.push(...invalidEach(hp.child('httpHeaders'), str(header?.name), httpHeaderNameErrors(str(header?.name))));
    return e;
  });
  check('tcpSocket', (v, hp) => validatePortNumOrName(v.port, hp.child('port')));
  check('grpc', (v, hp) => validatePortNumOrName(typeof v.port === 'number' ? v.port : 0, hp.child('port')));
  check('sleep', (v, hp) => {
    const seconds = typeof v.seconds === 'number' ? v.seconds : 0;
    if (typeof gracePeriod === 'number' && (seconds < 0 || seconds > gracePeriod)) {
      return [invalid(hp, seconds, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`)];
    }
    return [];
  });
  if (handlers === 0) errs.push(required(p, 'must specify a handler type'));
  return errs;
}

function validateLifecycle(l: unknown, gracePeriod: unknown, p: Path): FieldError[] {
  if (!isObj(l)) return [];
  const errs: FieldError[] = [];
  for (const key of ['postStart', 'preStop']) {
    if (!isObj(l[key])) continue;
    errs.push(...validateHandler(l[key], gracePeriod, p.child(key)));
  }
  return errs;
}

type ProbeKind = 'liveness' | 'readiness' | 'startup';

function validateProbe(probe: unknown, kind: ProbeKind, gracePeriod: unknown, p: Path): FieldError[] {
  if (!isObj(probe)) return [];
  const errs = validateHandler(probe, gracePeriod, p);
  for (const k of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    errs.push(...validateNonnegative(probe[k], p.child(k)));
  }
  const tgps = probe.terminationGracePeriodSeconds;
  if (typeof tgps === 'number' && tgps <= 0) errs.push(invalid(p.child('terminationGracePeriodSeconds'), tgps, 'must be greater than 0'));
  if (kind === 'readiness' && tgps != null) errs.push(invalid(p.child('terminationGracePeriodSeconds'), tgps, 'must not be set for readinessProbes'));
  if (kind !== 'readiness' && probe.successThreshold !== 1) errs.push(invalid(p.child('successThreshold'), probe.successThreshold ?? 0, 'must be 1'));
  return errs;
}

function validateProbesAndLifecycle(c: Obj, gracePeriod: unknown, p: Path): FieldError[] {
  return [
    ...validateLifecycle(c.lifecycle, gracePeriod, p.child('lifecycle')),
    ...validateProbe(c.livenessProbe, 'liveness', gracePeriod, p.child('livenessProbe')),
    ...validateProbe(c.readinessProbe, 'readiness', gracePeriod, p.child('readinessProbe')),
    ...validateProbe(c.startupProbe, 'startup', gracePeriod, p.child('startupProbe')),
  ];
}

const pullPolicies = ['Always', 'IfNotPresent', 'Never'];

function validateResizePolicy(policies: unknown, p: Path, podRestartPolicy: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  const check = (value: string, valid: string[]) => {
    if (!value) errs.push(required(p, ''));
    else if (!valid.includes(value)) errs.push(notSupported(p, value, valid));
  };
  arr(policies).forEach((rp, i) => {
    const name = str(rp?.resourceName);
    if (seen.has(name)) errs.push(duplicate(p.index(i), name));
    seen.add(name);
    check(name, ['cpu', 'memory']);
    const policy = str(rp?.restartPolicy);
    check(policy, ['NotRequired', 'RestartContainer']);
    if (podRestartPolicy === 'Never' && policy !== 'NotRequired') errs.push(invalid(p, policy, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
  });
  return errs;
}

function validateSecurityContext(sc: unknown, p: Path): FieldError[] {
  if (!isObj(sc)) return [];
  const errs: FieldError[] = [];
  for (const k of ['runAsUser', 'runAsGroup']) {
    if (typeof sc[k] === 'number' && (sc[k] < 0 || sc[k] > maxInt32)) errs.push(invalid(p.child(k), sc[k], inclusiveRangeError(0, maxInt32)));
  }
  if (sc.allowPrivilegeEscalation === false && sc.privileged === true) {
    errs.push(invalid(p, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
  }
  return errs;
}

/** validateContainerCommon: what regular, init and ephemeral containers share. */
function validateContainerCommon(c: Obj, volumes: Set<string>, podRestartPolicy: string, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(c.name);
  if (!name) errs.push(required(p.child('name'), ''));
  else errs.push(...validateDNS1123Label(name, p.child('name')));
  if (!str(c.image)) errs.push(required(p.child('image'), ''));
  const policy = str(c.terminationMessagePolicy);
  if (!policy) errs.push(required(p.child('terminationMessagePolicy'), ''));
  else if (policy !== 'File' && policy !== 'FallbackToLogsOnError') {
    errs.push(notSupported(p.child('terminationMessagePolicy'), policy, ['File', 'FallbackToLogsOnError']));
  }
  errs.push(...validateContainerPorts(c.ports, p.child('ports')));
  errs.push(...validateEnv(c.env, p.child('env')));
  errs.push(...validateEnvFrom(c.envFrom, p.child('envFrom')));
  errs.push(...validateVolumeMounts(c, volumes, p.child('volumeMounts')));
  const pull = str(c.imagePullPolicy);
  if (!pull) errs.push(required(p.child('imagePullPolicy'), ''));
  else if (!pullPolicies.includes(pull)) errs.push(notSupported(p.child('imagePullPolicy'), pull, pullPolicies));
  errs.push(...validateResourceRequirements(c.resources, p.child('resources')));
  errs.push(...validateResizePolicy(c.resizePolicy, p.child('resizePolicy'), podRestartPolicy));
  errs.push(...validateSecurityContext(c.securityContext, p.child('securityContext')));
  return errs;
}

/** Pods (not templates, which may use " " as a placeholder) may not have images with surrounding whitespace. */
function validateImageWhitespace(c: Obj, p: Path): FieldError[] {
  const image = str(c.image);
  return image.length !== image.trim().length ? [invalid(p.child('image'), image, 'must not have leading or trailing whitespace')] : [];
}

function validateContainers(containers: Obj[], volumes: Set<string>, gracePeriod: unknown, podRestartPolicy: string, p: Path): FieldError[] {
  if (containers.length === 0) return [required(p, '')];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const ip = p.index(i);
    errs.push(...validateContainerCommon(c, volumes, podRestartPolicy, ip));
    if (names.has(str(c.name))) errs.push(duplicate(ip.child('name'), str(c.name)));
    else names.add(str(c.name));
    errs.push(...validateProbesAndLifecycle(c, gracePeriod, ip));
    if (c.restartPolicy != null) errs.push(forbidden(ip.child('restartPolicy'), 'may not be set for non-init containers'));
  });
  return [...errs, ...checkHostPortConflicts(containers, p)];
}

function validateInitContainers(inits: Obj[], regular: Obj[], volumes: Set<string>, gracePeriod: unknown, podRestartPolicy: string, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(regular.map((c) => str(c.name)));
  inits.forEach((c, i) => {
    const ip = p.index(i);
    errs.push(...validateContainerCommon(c, volumes, podRestartPolicy, ip));
    let sidecar = false;
    if (c.restartPolicy != null) {
      if (c.restartPolicy !== 'Always') errs.push(notSupported(ip.child('restartPolicy'), c.restartPolicy, ['Always']));
      sidecar = c.restartPolicy === 'Always';
    }
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(ip.child('name'), name));
    else if (name) names.add(name);
    // Init containers run one at a time, so each is checked on its own.
    errs.push(...checkHostPortConflicts([c], p, i));
    if (sidecar) errs.push(...validateProbesAndLifecycle(c, gracePeriod, ip));
    else {
      const notSidecar = 'may not be set for init containers without restartPolicy=Always';
      if (c.lifecycle != null) errs.push(forbidden(ip.child('lifecycle'), notSidecar));
      if (c.livenessProbe != null) errs.push(forbidden(ip.child('livenessProbe'), notSidecar));
      if (c.readinessProbe != null) errs.push(forbidden(ip.child('readinessProbe'), notSidecar));
      if (c.startupProbe != null) errs.push(forbidden(ip.child('startupProbe'), notSidecar));
    }
  });
  return errs;
}

function validateEphemeralContainers(ephemeral: Obj[], spec: Obj, volumes: Set<string>, podRestartPolicy: string, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const others = new Set([...arr(spec.containers), ...arr(spec.initContainers)].map((c) => str(c?.name)));
  const names = new Set<string>();
  ephemeral.forEach((c, i) => {
    const ip = p.index(i);
    errs.push(...validateContainerCommon(c, volumes, podRestartPolicy, ip));
    errs.push(...validateImageWhitespace(c, ip));
    const name = str(c.name);
    if (others.has(name) || names.has(name)) errs.push(duplicate(ip.child('name'), name));
    names.add(name);
    if (str(c.targetContainerName) && !others.has(c.targetContainerName)) {
      errs.push(notFound(ip.child('targetContainerName'), c.targetContainerName));
    }
    for (const field of ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resizePolicy', 'restartPolicy']) {
      if (c[field] != null && !(Array.isArray(c[field]) && c[field].length === 0)) {
        errs.push(forbidden(ip.child(field), 'cannot be set for an Ephemeral Container'));
      }
    }
    if (isObj(c.resources) && Object.values(c.resources).some((v) => isObj(v) && Object.keys(v).length > 0)) {
      errs.push(forbidden(ip.child('resources'), 'cannot be set for an Ephemeral Container'));
    }
    // Sub-paths are bind mounts that outlive the container, so ephemeral containers may not use them.
    arr(c.volumeMounts).forEach((m, j) => {
      for (const field of ['subPath', 'subPathExpr']) {
        if (str(m?.[field])) errs.push(forbidden(ip.child('volumeMounts').index(j).child(field), 'cannot be set for an Ephemeral Container'));
      }
    });
  });
  return errs;
}

// ---- scheduling fields ----

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function validateTaintEffect(effect: string, allowEmpty: boolean, p: Path): FieldError[] {
  if (!allowEmpty && !effect) return [required(p, '')];
  return taintEffects.includes(effect) ? [] : [notSupported(p, effect, taintEffects)];
}

export function validateTolerations(tolerations: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  arr(tolerations).forEach((t, i) => {
    const ip = p.index(i);
    const key = str(t?.key);
    const op = str(t?.operator);
    const effect = str(t?.effect);
    if (key) errs.push(...validateQualifiedName(key, ip.child('key')));
    if (!key && op !== 'Exists') {
      errs.push(invalid(ip.child('operator'), op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t?.tolerationSeconds != null && effect !== 'NoExecute') {
      errs.push(invalid(ip.child('effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (op) {
      case 'Equal':
      case '': {
        const valueErrs = labelValueErrors(str(t?.value));
        if (valueErrs.length) errs.push(invalid(ip.child('operator'), str(t?.value), valueErrs.join(';')));
        break;
      }
      case 'Exists':
        if (str(t?.value)) errs.push(invalid(ip.child('operator'), t.value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(ip.child('operator'), op, ['Equal', 'Exists']));
    }
    if (effect) errs.push(...validateTaintEffect(effect, true, ip.child('effect')));
  });
  return errs;
}

function validateNodeSelectorRequirement(r: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const values = arr(r.values);
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(p.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbidden(p.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) errs.push(required(p.child('values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(invalid(p.child('operator'), str(r.operator), 'not a valid selector operator'));
  }
  errs.push(...validateQualifiedName(str(r.key), p.child('key')));
  values.forEach((v, i) => errs.push(...invalidEach(p.child('values').index(i), v, labelValueErrors(str(v)))));
  return errs;
}

/** Node field selectors: only metadata.name, with one node name. */
function validateNodeFieldSelectorRequirement(r: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (r.operator === 'In' || r.operator === 'NotIn') {
    if (arr(r.values).length !== 1) errs.push(required(p.child('values'), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else {
    errs.push(invalid(p.child('operator'), str(r.operator), 'not a valid selector operator'));
  }
  if (r.key !== 'metadata.name') errs.push(invalid(p.child('key'), str(r.key), 'not a valid field selector key'));
  else arr(r.values).forEach((v, i) => errs.push(...invalidEach(p.child('values').index(i), v, nameIsDNSSubdomain(str(v), false))));
  return errs;
}

function validateNodeSelectorTerm(term: unknown, p: Path): FieldError[] {
  const t = isObj(term) ? term : {};
  return [
    ...arr(t.matchExpressions).flatMap((r, i) => validateNodeSelectorRequirement(isObj(r) ? r : {}, p.child('matchExpressions').index(i))),
    ...arr(t.matchFields).flatMap((r, i) => validateNodeFieldSelectorRequirement(isObj(r) ? r : {}, p.child('matchFields').index(i))),
  ];
}

const validateWeight = (w: unknown, p: Path): FieldError[] =>
  typeof w === 'number' && w >= 1 && w <= 100 ? [] : [invalid(p, w ?? 0, 'must be in the range 1-100')];

function validatePodAffinityTerm(term: unknown, p: Path): FieldError[] {
  const t = isObj(term) ? term : {};
  const errs = [...validateLabelSelector(t.labelSelector, p.child('labelSelector')), ...validateLabelSelector(t.namespaceSelector, p.child('namespaceSelector'))];
  for (const ns of arr(t.namespaces)) errs.push(...invalidEach(p.child('namespace'), ns, dns1123LabelErrors(str(ns))));
  if (!str(t.topologyKey)) errs.push(required(p.child('topologyKey'), 'can not be empty'));
  else errs.push(...validateQualifiedName(t.topologyKey, p.child('topologyKey')));
  return errs;
}

function validateAffinity(affinity: unknown, p: Path): FieldError[] {
  if (!isObj(affinity)) return [];
  const errs: FieldError[] = [];
  const na = affinity.nodeAffinity;
  if (isObj(na)) {
    const np = p.child('nodeAffinity');
    const req = na.requiredDuringSchedulingIgnoredDuringExecution;
    if (isObj(req)) {
      const tp = np.child('requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms');
      if (arr(req.nodeSelectorTerms).length === 0) errs.push(required(tp, 'must have at least one node selector term'));
      else arr(req.nodeSelectorTerms).forEach((t, i) => errs.push(...validateNodeSelectorTerm(t, tp.index(i))));
    }
    arr(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
      const ip = np.child('preferredDuringSchedulingIgnoredDuringExecution').index(i);
      errs.push(...validateWeight(t?.weight, ip.child('weight')));
      errs.push(...validateNodeSelectorTerm(t?.preference, ip.child('preference')));
    });
  }
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const pa = affinity[kind];
    if (!isObj(pa)) continue;
    const kp = p.child(kind);
    arr(pa.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) =>
      errs.push(...validatePodAffinityTerm(t, kp.child('requiredDuringSchedulingIgnoredDuringExecution').index(i))),
    );
    arr(pa.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
      const ip = kp.child('preferredDuringSchedulingIgnoredDuringExecution').index(i);
      errs.push(...validateWeight(t?.weight, ip.child('weight')));
      errs.push(...validatePodAffinityTerm(t?.podAffinityTerm, ip.child('podAffinityTerm')));
    });
  }
  return errs;
}

function validateTopologySpreadConstraints(constraints: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(constraints).forEach((c, i) => {
    const ip = p.index(i);
    if (typeof c?.maxSkew !== 'number' || c.maxSkew <= 0) errs.push(invalid(ip.child('maxSkew'), c?.maxSkew ?? 0, 'must be greater than zero'));
    if (!str(c?.topologyKey)) errs.push(required(ip.child('topologyKey'), 'can not be empty'));
    else errs.push(...validateQualifiedName(c.topologyKey, ip.child('topologyKey')));
    const when = str(c?.whenUnsatisfiable);
    if (!when) errs.push(required(ip.child('whenUnsatisfiable'), ''));
    else if (when !== 'DoNotSchedule' && when !== 'ScheduleAnyway') errs.push(notSupported(ip.child('whenUnsatisfiable'), when, ['DoNotSchedule', 'ScheduleAnyway']));
    const pair = `${str(c?.topologyKey)}/${when}`;
    if (seen.has(pair)) errs.push(duplicate(ip, rawValue(`{${str(c?.topologyKey)}, ${when}}`)));
    seen.add(pair);
    errs.push(...validateLabelSelector(c?.labelSelector, ip.child('labelSelector')));
  });
  return errs;
}

function validateSchedulingGates(gates: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(gates).forEach((g, i) => {
    const name = str(g?.name);
    errs.push(...validateQualifiedName(name, p.index(i)));
    if (seen.has(name)) errs.push(duplicate(p.index(i), name));
    seen.add(name);
  });
  return errs;
}

function validateDNSConfig(config: unknown, dnsPolicy: string, p: Path): FieldError[] {
  if (dnsPolicy === 'None') {
    if (!isObj(config)) return [required(p, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (arr(config.nameservers).length === 0) return [required(p.child('nameservers'), 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (!isObj(config)) return [];
  const errs: FieldError[] = [];
  const nameservers = arr(config.nameservers).map(str);
  if (nameservers.length > 3) errs.push(invalid(p.child('nameservers'), nameservers, 'must not have more than 3 nameservers'));
  nameservers.forEach((ns, i) => errs.push(...ipErrors(p.child('nameservers').index(i), ns)));
  const searches = arr(config.searches).map(str);
  if (searches.length > 32) errs.push(invalid(p.child('searches'), searches, 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048) errs.push(invalid(p.child('searches'), searches, 'must not have more than 2048 characters (including spaces) in the search list'));
  searches.forEach((search, i) => {
    if (search === '.') return;
    const domain = search.replace(/\.$/, '');
    errs.push(...invalidEach(p.child('searches').index(i), domain, dns1123SubdomainWithUnderscoreErrors(domain)));
  });
  arr(config.options).forEach((o, i) => {
    if (!str(o?.name)) errs.push(required(p.child('options').index(i), 'must not be empty'));
  });
  return errs;
}

function validateHostAliases(aliases: unknown, p: Path): FieldError[] {
  return arr(aliases).flatMap((a, i) => {
    const ip = p.index(i);
    const errs = ipErrors(ip.child('ip'), str(a?.ip));
    arr(a?.hostnames).forEach((h, j) => errs.push(...invalidEach(ip.child('hostnames').index(j), h, dns1123SubdomainErrors(str(h)))));
    return errs;
  });
}

const restartPolicies = ['Always', 'OnFailure', 'Never'];
const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

/**
 * ValidatePodSpec. `isPod` is upstream's ResourceIsPod: templates skip the checks that defaulting at
 * pod creation will satisfy (host ports under hostNetwork).
 */
export function validatePodSpec(spec: unknown, p: Path, isPod: boolean): FieldError[] {
  const s = isObj(spec) ? spec : {};
  const gracePeriod = s.terminationGracePeriodSeconds;
  const tgpsErrs = gracePeriod == null ? [required(p.child('terminationGracePeriodSeconds'), '')] : [];
  const containers = arr(s.containers).map((c) => (isObj(c) ? c : {}));
  const inits = arr(s.initContainers).map((c) => (isObj(c) ? c : {}));
  const restartPolicy = str(s.restartPolicy);
  const { names: volumes, errs: volumeErrs } = validateVolumes(s.volumes, p.child('volumes'));
  const errs = [...tgpsErrs, ...volumeErrs];
  errs.push(...validateContainers(containers, volumes, gracePeriod, restartPolicy, p.child('containers')));
  errs.push(...validateInitContainers(inits, containers, volumes, gracePeriod, restartPolicy, p.child('initContainers')));
  errs.push(...validateEphemeralContainers(arr(s.ephemeralContainers).map((c) => (isObj(c) ? c : {})), s, volumes, restartPolicy, p.child('ephemeralContainers')));
  if (isPod) {
    containers.forEach((c, i) => errs.push(...validateImageWhitespace(c, p.child('containers').index(i))));
    inits.forEach((c, i) => errs.push(...validateImageWhitespace(c, p.child('initContainers').index(i))));
    if (!str(s.serviceAccountName)) {
      arr(s.volumes).forEach((v, vi) =>
        arr(v?.projected?.sources).forEach((src, si) => {
          if (src?.serviceAccountToken != null) {
            errs.push(forbidden(p.child('volumes').index(vi).child('projected', 'sources').index(si).child('serviceAccountToken'), 'must not be specified when serviceAccountName is not set'));
          }
        }),
      );
    }
  }
  if (s.hostNetwork === true) {
    containers.forEach((c, ci) =>
      arr(c.ports).forEach((port, pi) => {
        // A template's ports get their host ports when the pod is defaulted; a pod's must match already.
        if (port?.hostPort !== port?.containerPort && (isPod || port?.hostPort)) {
          errs.push(invalid(p.child('containers').index(ci).child('ports').index(pi).child('hostPort'), port?.hostPort ?? 0, 'must match `containerPort` when `hostNetwork` is true'));
        }
      }),
    );
  }
  if (!restartPolicy) errs.push(required(p.child('restartPolicy'), ''));
  else if (!restartPolicies.includes(restartPolicy)) errs.push(notSupported(p.child('restartPolicy'), restartPolicy, restartPolicies));
  const dnsPolicy = str(s.dnsPolicy);
  if (!dnsPolicy) errs.push(required(p.child('dnsPolicy'), ''));
  else if (!dnsPolicies.includes(dnsPolicy)) errs.push(notSupported(p.child('dnsPolicy'), dnsPolicy, dnsPolicies));
  errs.push(...validateLabels(s.nodeSelector, p.child('nodeSelector')));
  arr(s.imagePullSecrets).forEach((ref, i) => {
    if (isObj(ref) && Object.keys(ref).some((k) => k !== 'name')) errs.push(invalid(p.child('imagePullSecrets').index(i), ref, 'only name may be set'));
  });
  errs.push(...validateAffinity(s.affinity, p.child('affinity')));
  errs.push(...validateDNSConfig(s.dnsConfig, dnsPolicy, p.child('dnsConfig')));
  arr(s.readinessGates).forEach((g, i) => errs.push(...validateQualifiedName(str(g?.conditionType), p.child('readinessGates').index(i).child('conditionType'))));
  errs.push(...validateSchedulingGates(s.schedulingGates, p.child('schedulingGates')));
  errs.push(...validateTopologySpreadConstraints(s.topologySpreadConstraints, p.child('topologySpreadConstraints')));
  if (str(s.serviceAccountName)) errs.push(...invalidEach(p.child('serviceAccountName'), s.serviceAccountName, nameIsDNSSubdomain(s.serviceAccountName, false)));
  if (str(s.nodeName)) errs.push(...invalidEach(p.child('nodeName'), s.nodeName, nameIsDNSSubdomain(s.nodeName, false)));
  if (typeof s.activeDeadlineSeconds === 'number' && (s.activeDeadlineSeconds < 1 || s.activeDeadlineSeconds > maxInt32)) {
    errs.push(invalid(p.child('activeDeadlineSeconds'), s.activeDeadlineSeconds, inclusiveRangeError(1, maxInt32)));
  }
  if (str(s.hostname)) errs.push(...validateDNS1123Label(s.hostname, p.child('hostname')));
  if (str(s.subdomain)) errs.push(...validateDNS1123Label(s.subdomain, p.child('subdomain')));
  errs.push(...validateTolerations(s.tolerations, p.child('tolerations')));
  errs.push(...validateHostAliases(s.hostAliases, p.child('hostAliases')));
  if (str(s.priorityClassName)) errs.push(...invalidEach(p.child('priorityClassName'), s.priorityClassName, nameIsDNSSubdomain(s.priorityClassName, false)));
  if (s.preemptionPolicy != null && s.preemptionPolicy !== 'Never' && s.preemptionPolicy !== 'PreemptLowerPriority') {
    errs.push(notSupported(p.child('preemptionPolicy'), s.preemptionPolicy, ['Never', 'PreemptLowerPriority']));
  }
  if (s.runtimeClassName != null) errs.push(...invalidEach(p.child('runtimeClassName'), s.runtimeClassName, nameIsDNSSubdomain(str(s.runtimeClassName), false)));
  for (const [name, raw] of Object.entries(isObj(s.overhead) ? s.overhead : {})) {
    const fp = p.child('overhead').key(name);
    errs.push(...validateResourceName(name, fp));
    const q = quantityAt(raw, fp, errs);
    if (q) errs.push(...validateResourceQuantity(name, q, fp));
  }
  if (isObj(s.os) && s.os.name !== 'linux' && s.os.name !== 'windows') errs.push(notSupported(p.child('os', 'name'), s.os.name ?? '', ['linux', 'windows']));
  return errs;
}

/** ValidatePodTemplateSpec: a workload's pod template (labels and annotations at the template's own path). */
export function validatePodTemplateSpec(template: unknown, p: Path): FieldError[] {
  const t = isObj(template) ? template : {};
  const meta = isObj(t.metadata) ? t.metadata : {};
  const errs = [...validateLabels(meta.labels, p.child('labels')), ...validateAnnotations(meta.annotations, p.child('annotations'))];
  errs.push(...validatePodSpec(t.spec, p.child('spec'), false));
  if (arr(t.spec?.ephemeralContainers).length > 0) errs.push(forbidden(p.child('spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  return errs;
}
