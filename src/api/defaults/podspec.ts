// Upstream's core/v1 defaulters for everything under a pod spec (SetDefaults_PodSpec, _Container,
// _Probe, _Volume, ...). Objects arrive straight from decoding, so fields are read loosely.
import { Quantity } from '../quantity.js';

export type Obj = Record<string, any>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** o[key] as an object, made empty when absent. */
export const child = (o: Obj, key: string): Obj => (isObj(o[key]) ? o[key] : (o[key] = {}));
const each = (v: unknown, fn: (o: Obj) => void) => {
  if (Array.isArray(v)) for (const x of v) if (isObj(x)) fn(x);
};
const setIfUnset = (o: Obj, key: string, value: unknown) => {
  if (o[key] === undefined || o[key] === null || o[key] === '') o[key] = value;
};

// distribution/reference's grammar, enough to tell a tag from a registry port and reject bad names.
const pathComponent = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[0-9a-fA-F:.]+\\])(?::[0-9]+)?`;
const referenceRe = new RegExp(
  `^(?:${domain}/)?${pathComponent}(?:/${pathComponent})*(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

/**
 * The tag the runtime will pull (parsers.ParseImageName): "latest" when the reference has neither tag
 * nor digest, undefined when it is not a valid reference.
 */
export function imageTag(image: string): string | undefined {
  const m = referenceRe.exec(image);
  if (!m || /^[a-f0-9]{64}$/.test(image)) return undefined;
  const [, tag, digest] = m;
  return tag ?? (digest ? '' : 'latest');
}

/**
 * A quantity as upstream re-encodes it after decoding: canonical, optionally rounded up to 10^scale.
 * A malformed one is left for decoding to report.
 */
function canonicalQuantity(v: unknown, roundTo?: number): unknown {
  if (typeof v !== 'string' && typeof v !== 'number') return v;
  try {
    const q = Quantity.from(v);
    return (roundTo === undefined ? q : q.roundUp(roundTo)).toString();
  } catch {
    return v;
  }
}

/** SetDefaults_ResourceList: quantities rounded up to milli-units. */
export function defaultResourceList(list: unknown): void {
  if (!isObj(list)) return;
  for (const [k, v] of Object.entries(list)) list[k] = canonicalQuantity(v, -3);
}

function defaultHTTPGet(h: unknown): void {
  if (!isObj(h)) return;
  setIfUnset(h, 'path', '/');
  setIfUnset(h, 'scheme', 'HTTP');
}

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  // Zero counts as unset, as Go's zero value does.
  for (const [k, v] of [['timeoutSeconds', 1], ['periodSeconds', 10], ['successThreshold', 1], ['failureThreshold', 3]] as const) {
    if (!p[k]) p[k] = v;
  }
  defaultHTTPGet(p.httpGet);
  if (isObj(p.grpc) && p.grpc.service == null) p.grpc.service = '';
}

function defaultLifecycle(l: unknown): void {
  if (!isObj(l)) return;
  for (const h of [l.postStart, l.preStop]) if (isObj(h)) defaultHTTPGet(h.httpGet);
}

function defaultFieldRef(ref: unknown): void {
  if (isObj(ref)) setIfUnset(ref, 'apiVersion', 'v1');
}

/** SetDefaults_Container (also used for ephemeral containers). */
function defaultContainer(c: Obj): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(typeof c.image === 'string' ? c.image : '') === 'latest' ? 'Always' : 'IfNotPresent';
  setIfUnset(c, 'terminationMessagePath', '/dev/termination-log');
  setIfUnset(c, 'terminationMessagePolicy', 'File');
  // ResourceRequirements is a non-pointer struct upstream, so it always serializes, at least as {}.
  if (!isObj(c.resources)) c.resources = {};
  defaultResourceList(c.resources.limits);
  defaultResourceList(c.resources.requests);
  each(c.ports, (p) => setIfUnset(p, 'protocol', 'TCP'));
  each(c.env, (e) => {
    defaultFieldRef(e.valueFrom?.fieldRef);
    const rf = e.valueFrom?.resourceFieldRef;
    if (isObj(rf) && rf.divisor != null) rf.divisor = canonicalQuantity(rf.divisor);
  });
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultLifecycle(c.lifecycle);
}

const volumeSources = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile',
  'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume',
  'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
];

function defaultDownwardAPIItems(items: unknown): void {
  each(items, (i) => {
    defaultFieldRef(i.fieldRef);
    if (isObj(i.resourceFieldRef) && i.resourceFieldRef.divisor != null) i.resourceFieldRef.divisor = canonicalQuantity(i.resourceFieldRef.divisor);
  });
}

/** SetDefaults_Volume and the per-source defaulters. */
function defaultVolume(v: Obj): void {
  if (!volumeSources.some((s) => v[s] != null)) v.emptyDir = {};
  if (isObj(v.hostPath) && v.hostPath.type == null) v.hostPath.type = '';
  if (isObj(v.secret) && v.secret.defaultMode == null) v.secret.defaultMode = 0o644;
  if (isObj(v.configMap) && v.configMap.defaultMode == null) v.configMap.defaultMode = 0o644;
  if (isObj(v.downwardAPI)) {
    if (v.downwardAPI.defaultMode == null) v.downwardAPI.defaultMode = 0o644;
    defaultDownwardAPIItems(v.downwardAPI.items);
  }
  if (isObj(v.projected)) {
    if (v.projected.defaultMode == null) v.projected.defaultMode = 0o644;
    each(v.projected.sources, (s) => {
      if (isObj(s.serviceAccountToken) && s.serviceAccountToken.expirationSeconds == null) s.serviceAccountToken.expirationSeconds = 3600;
      if (isObj(s.downwardAPI)) defaultDownwardAPIItems(s.downwardAPI.items);
    });
  }
  if (isObj(v.emptyDir) && v.emptyDir.sizeLimit != null) v.emptyDir.sizeLimit = canonicalQuantity(v.emptyDir.sizeLimit);
  if (isObj(v.iscsi)) setIfUnset(v.iscsi, 'iscsiInterface', 'default');
  if (isObj(v.rbd)) {
    setIfUnset(v.rbd, 'pool', 'rbd');
    setIfUnset(v.rbd, 'user', 'admin');
    setIfUnset(v.rbd, 'keyring', '/etc/ceph/keyring');
  }
  if (isObj(v.azureDisk)) {
    setIfUnset(v.azureDisk, 'cachingMode', 'ReadWrite');
    setIfUnset(v.azureDisk, 'fsType', 'ext4');
    if (v.azureDisk.readOnly == null) v.azureDisk.readOnly = false;
    setIfUnset(v.azureDisk, 'kind', 'Shared');
  }
  if (isObj(v.scaleIO)) {
    setIfUnset(v.scaleIO, 'storageMode', 'ThinProvisioned');
    setIfUnset(v.scaleIO, 'fsType', 'xfs');
  }
  const claimSpec = v.ephemeral?.volumeClaimTemplate?.spec;
  if (isObj(claimSpec)) setIfUnset(claimSpec, 'volumeMode', 'Filesystem');
}

function containerLists(spec: Obj): unknown[] {
  return [spec.containers, spec.initContainers, spec.ephemeralContainers];
}

/** hostNetwork pods publish each container port on the same host port. */
function defaultHostNetworkPorts(containers: unknown): void {
  each(containers, (c) => each(c.ports, (p) => {
    if (!p.hostPort) p.hostPort = p.containerPort;
  }));
}

/** SetDefaults_PodSpec plus the defaulters of everything it contains: pod specs in templates get exactly these. */
function defaultPodSpec(spec: unknown): void {
  if (!isObj(spec)) return;
  setIfUnset(spec, 'dnsPolicy', 'ClusterFirst');
  setIfUnset(spec, 'restartPolicy', 'Always');
  if (!isObj(spec.securityContext)) spec.securityContext = {};
  if (spec.terminationGracePeriodSeconds == null) spec.terminationGracePeriodSeconds = 30;
  setIfUnset(spec, 'schedulerName', 'default-scheduler');
  for (const list of containerLists(spec)) each(list, defaultContainer);
  each(spec.volumes, defaultVolume);
  if (isObj(spec.overhead)) defaultResourceList(spec.overhead);
}

/** Requests default to limits for every resource with a limit and no request. */
function requestsFromLimits(c: Obj): void {
  const limits = c.resources?.limits;
  if (!isObj(limits)) return;
  const requests = isObj(c.resources.requests) ? c.resources.requests : (c.resources.requests = {});
  for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
}

/** In-place resize policy: NotRequired for cpu and memory that have a request or limit (InPlacePodVerticalScaling, on in 1.33). */
function defaultResizePolicy(c: Obj): void {
  const r = c.resources ?? {};
  if (!isObj(r.requests) && !isObj(r.limits)) return;
  const specified = new Set<string>();
  each(c.resizePolicy, (p) => specified.add(p.resourceName));
  for (const name of ['cpu', 'memory']) {
    if (specified.has(name)) continue;
    if ((isObj(r.requests) && name in r.requests) || (isObj(r.limits) && name in r.limits)) {
      c.resizePolicy = [...(Array.isArray(c.resizePolicy) ? c.resizePolicy : []), { resourceName: name, restartPolicy: 'NotRequired' }];
    }
  }
}

/** SetDefaults_Pod: what only pods (not templates) get, after the pod spec defaults. */
export function defaultPod(pod: Obj): void {
  if (!isObj(pod.spec)) pod.spec = {};
  const spec = pod.spec;
  defaultPodSpec(spec);
  each(spec.containers, (c) => {
    requestsFromLimits(c);
    if (isObj(c.resources.requests)) defaultResizePolicy(c);
  });
  each(spec.initContainers, (c) => {
    requestsFromLimits(c);
    if (c.restartPolicy === 'Always' && isObj(c.resources.requests)) defaultResizePolicy(c);
  });
  if (spec.enableServiceLinks == null) spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    defaultHostNetworkPorts(spec.containers);
    defaultHostNetworkPorts(spec.initContainers);
  }
}

/** Defaults for a PodTemplateSpec held by a workload. */
export function defaultPodTemplate(template: unknown): void {
  if (isObj(template)) defaultPodSpec(template.spec);
}
