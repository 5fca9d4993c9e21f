// Pod create, update and status-update validation as upstream's ValidatePodCreate, ValidatePodUpdate
// and ValidatePodStatusUpdate.
import { duplicate, forbidden, invalid, Path, rawValue, required, type FieldError } from '../field.js';
import { arr, deepEqual, isObj, str, validateImmutable, validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName, type Obj } from './meta.js';
import { inclusiveRangeError, invalidEach, ipErrors, isIPv4, nameIsDNSSubdomain } from './names.js';
import { validatePodSpec, validateTolerations } from './podspec.js';

const specPath = Path.root('spec');
const maxInt32 = 2147483647;

function podSpec(pod: Obj): Obj {
  return isObj(pod.spec) ? pod.spec : {};
}

export function validatePodCreate(pod: Obj): FieldError[] {
  const errs = validateObjectMeta(pod.metadata, true, nameIsDNSSubdomain);
  errs.push(...validatePodSpec(pod.spec, specPath, true));
  const spec = podSpec(pod);
  if (arr(spec.ephemeralContainers).length > 0) errs.push(forbidden(specPath.child('ephemeralContainers'), 'cannot be set on create'));
  if (str(spec.nodeName) && arr(spec.schedulingGates).length > 0) {
    errs.push(forbidden(specPath.child('nodeName'), 'cannot be set until all schedulingGates have been cleared'));
  }
  return errs;
}

/** ValidateContainerUpdates: the same number of containers, each still with an image. Returns whether to stop. */
function validateContainerUpdates(next: unknown, prev: unknown, p: Path, errs: FieldError[]): boolean {
  const n = arr(next);
  if (n.length !== arr(prev).length) {
    errs.push(forbidden(p, 'pod updates may not add or remove containers'));
    return true;
  }
  n.forEach((c, i) => {
    const image = str(c?.image);
    if (!image) errs.push(required(p.index(i).child('image'), ''));
    if (image.trim().length !== image.length) errs.push(invalid(p.index(i).child('image'), image, 'must not have leading or trailing whitespace'));
  });
  return false;
}

/** Existing tolerations may only change their tolerationSeconds; new ones may be added. */
function validateOnlyAddedTolerations(next: unknown, prev: unknown, p: Path): FieldError[] {
  const n = arr(next);
  for (const old of arr(prev)) {
    if (!n.some((t) => deepEqual({ ...old, tolerationSeconds: t?.tolerationSeconds }, t))) {
      return [forbidden(p, 'existing toleration can not be modified except its tolerationSeconds')];
    }
  }
  return validateTolerations(next, p);
}

function validateOnlyDeletedSchedulingGates(next: unknown, prev: unknown, p: Path): FieldError[] {
  const old = new Set(arr(prev).map((g) => str(g?.name)));
  const errs: FieldError[] = [];
  arr(next).forEach((g, i) => {
    const name = str(g?.name);
    if (!old.has(name)) errs.push(forbidden(p.index(i).child('name'), `only deletion is allowed, but found new scheduling gate '${name}'`));
  });
  return errs;
}

/** Leaf-level differences between two JSON values, as `path: value` pairs. */
function diffLines(a: unknown, b: unknown, path: string, out: string[]): void {
  if (deepEqual(a, b)) return;
  if (isObj(a) && isObj(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) diffLines(a[k], b[k], path ? `${path}.${k}` : k, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => diffLines(x, b[i], `${path}[${i}]`, out));
    return;
  }
  out.push(`- \t${path}: ${JSON.stringify(a ?? null)}`, `+ \t${path}: ${JSON.stringify(b ?? null)}`);
}

/** A diff in the spirit of the go-cmp text upstream appends: removed lines "-", added lines "+". */
function specDiff(old: Obj, next: Obj): string {
  const lines: string[] = [];
  diffLines(old, next, '', lines);
  return ['  core.PodSpec{', ...lines, '  }'].join('\n');
}

export function validatePodUpdate(pod: Obj, old: Obj): FieldError[] {
  const metaPath = Path.root('metadata');
  const errs = validateObjectMetaUpdate(pod.metadata, old.metadata, metaPath);
  errs.push(...validateObjectMeta(pod.metadata, true, nameIsDNSSubdomain));
  errs.push(...validatePodSpec(pod.spec, specPath, true));
  const spec = podSpec(pod);
  const oldSpec = podSpec(old);
  if (validateContainerUpdates(spec.containers, oldSpec.containers, specPath.child('containers'), errs)) return errs;
  if (validateContainerUpdates(spec.initContainers, oldSpec.initContainers, specPath.child('initContainers'), errs)) return errs;

  // activeDeadlineSeconds may be set, or lowered, never raised or removed.
  const ads = spec.activeDeadlineSeconds;
  const adsPath = specPath.child('activeDeadlineSeconds');
  if (typeof ads === 'number') {
    if (ads < 0 || ads > maxInt32) return [...errs, invalid(adsPath, ads, inclusiveRangeError(0, maxInt32))];
    if (typeof oldSpec.activeDeadlineSeconds === 'number' && oldSpec.activeDeadlineSeconds < ads) {
      return [...errs, invalid(adsPath, ads, 'must be less than or equal to previous value')];
    }
  } else if (typeof oldSpec.activeDeadlineSeconds === 'number') {
    errs.push(invalid(adsPath, null, 'must not update from a positive integer to nil value'));
  }
  errs.push(...validateOnlyAddedTolerations(spec.tolerations, oldSpec.tolerations, specPath.child('tolerations')));
  errs.push(...validateOnlyDeletedSchedulingGates(spec.schedulingGates, oldSpec.schedulingGates, specPath.child('schedulingGates')));
  if (deepEqual(spec, oldSpec)) return errs;

  // Everything but the mutable fields must be unchanged: compare with those fields taken from the old spec.
  const munged: Obj = { ...spec };
  munged.containers = arr(spec.containers).map((c, i) => ({ ...c, image: arr(oldSpec.containers)[i]?.image }));
  munged.initContainers = arr(spec.initContainers).map((c, i) => ({ ...c, image: arr(oldSpec.initContainers)[i]?.image }));
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.schedulingGates = oldSpec.schedulingGates;
  munged.tolerations = oldSpec.tolerations;
  // A negative grace period (stored by old clients) may be raised to 1.
  if (typeof oldSpec.terminationGracePeriodSeconds === 'number' && oldSpec.terminationGracePeriodSeconds < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = oldSpec.terminationGracePeriodSeconds;
  }
  // A pod still gated from scheduling may gain node selector entries.
  if (arr(oldSpec.schedulingGates).length > 0 && !deepEqual(munged.nodeSelector, oldSpec.nodeSelector)) {
    const oldSel: Obj = isObj(oldSpec.nodeSelector) ? oldSpec.nodeSelector : {};
    const newSel: Obj = isObj(munged.nodeSelector) ? munged.nodeSelector : {};
    if (Object.entries(oldSel).some(([k, v]) => newSel[k] !== v)) {
      errs.push(invalid(specPath.child('nodeSelector'), newSel, 'only additions to spec.nodeSelector are allowed (no mutations or deletions)'));
    }
    munged.nodeSelector = oldSpec.nodeSelector;
  }
  if (!deepEqual(munged, oldSpec)) {
    errs.push(
      forbidden(
        specPath,
        'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n' +
          specDiff(oldSpec, munged),
      ),
    );
  }
  return errs;
}

/** Containers that may not restart must not leave the terminated state. */
function validateContainerStateTransition(next: unknown, prev: unknown, p: Path, restartPolicy: string, sidecars = new Set<string>()): FieldError[] {
  if (restartPolicy === 'Always') return [];
  const errs: FieldError[] = [];
  arr(prev).forEach((old, i) => {
    const terminated = old?.state?.terminated;
    if (!isObj(terminated) || sidecars.has(str(old.name))) return;
    if (terminated.exitCode !== 0 && restartPolicy === 'OnFailure') return;
    for (const s of arr(next)) {
      if (s?.name === old.name && !isObj(s?.state?.terminated)) errs.push(forbidden(p.index(i).child('state'), 'may not be transitioned to non-terminated state'));
    }
  });
  return errs;
}

/** Status IPs: each valid, no duplicates, at most one per family. `kind` names the Go type duplicates print as. */
function validateIPList(list: unknown, p: Path, kind: 'PodIP' | 'HostIP'): FieldError[] {
  const ips = arr(list).map((x) => str(x?.ip));
  const errs = ips.flatMap((ip, i) => ipErrors(p.index(i), ip));
  if (ips.length > 1) {
    if (ips.length > 2 || ips.filter(isIPv4).length !== 1) errs.push(invalid(p, rawValue(goIPList(kind, ips)), 'may specify no more than one IP for each IP family'));
    ips.forEach((ip, i) => {
      if (ips.indexOf(ip) !== i) errs.push(duplicate(p.index(i), rawValue(`core.${kind}{IP:${JSON.stringify(ip)}}`)));
    });
  }
  return errs;
}

const goIPList = (kind: string, ips: string[]) => `[]core.${kind}{${ips.map((ip) => `core.${kind}{IP:${JSON.stringify(ip)}}`).join(', ')}}`;

const systemPodConditions = new Set(['PodScheduled', 'Ready', 'Initialized']);

export function validatePodStatusUpdate(pod: Obj, old: Obj): FieldError[] {
  const metaPath = Path.root('metadata');
  const errs = validateObjectMetaUpdate(pod.metadata, old.metadata, metaPath);
  const status = isObj(pod.status) ? pod.status : {};
  // Upstream reports condition types under metadata, with a capitalized "Type".
  arr(status.conditions).forEach((c, i) => {
    if (!systemPodConditions.has(str(c?.type))) errs.push(...validateQualifiedName(str(c?.type), metaPath.child('conditions').index(i).child('Type')));
  });
  const statusPath = Path.root('status');
  if (str(podSpec(pod).nodeName) !== str(podSpec(old).nodeName)) errs.push(forbidden(statusPath.child('nodeName'), 'may not be changed directly'));
  const nominated = str(status.nominatedNodeName);
  if (nominated && nominated !== str(old.status?.nominatedNodeName)) {
    errs.push(...invalidEach(statusPath.child('nominatedNodeName'), nominated, nameIsDNSSubdomain(nominated, false)));
  }
  errs.push(...validateImmutable(str(status.qosClass), str(old.status?.qosClass), statusPath.child('qosClass')));
  const oldSpec = podSpec(old);
  const restartPolicy = str(oldSpec.restartPolicy);
  errs.push(...validateContainerStateTransition(status.containerStatuses, old.status?.containerStatuses, statusPath.child('containerStatuses'), restartPolicy));
  const sidecars = new Set(arr(oldSpec.initContainers).filter((c) => c?.restartPolicy === 'Always').map((c) => str(c.name)));
  errs.push(...validateContainerStateTransition(status.initContainerStatuses, old.status?.initContainerStatuses, statusPath.child('initContainerStatuses'), restartPolicy, sidecars));
  errs.push(...validateContainerStateTransition(status.ephemeralContainerStatuses, old.status?.ephemeralContainerStatuses, statusPath.child('ephemeralContainerStatuses'), 'Never'));
  errs.push(...validateIPList(status.podIPs, statusPath.child('podIPs'), 'PodIP'));
  const hostIPs = arr(status.hostIPs);
  if (hostIPs.length > 0 && str(status.hostIP) !== str(hostIPs[0]?.ip)) {
    errs.push(invalid(statusPath.child('hostIPs').index(0).child('ip'), str(hostIPs[0]?.ip), 'must be equal to `hostIP`'));
  }
  errs.push(...validateIPList(status.hostIPs, statusPath.child('hostIPs'), 'HostIP'));
  return errs;
}

