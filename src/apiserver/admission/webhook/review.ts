// The admission.k8s.io/v1 AdmissionReview a webhook receives, and the checks its answer must pass
// (upstream's request.CreateV1AdmissionReview and VerifyAdmissionResponse).
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import type { AdmissionAttributes } from '../interface.js';

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind: GroupVersionKind;
  requestResource: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: string;
  userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun: boolean;
  options?: { apiVersion: string; kind: string; dryRun?: string[] };
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request: AdmissionRequest;
}

/** What kite uses of a webhook's answer, after verification. */
export interface AdmissionResponse {
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string };
  /** The decoded JSON patch (mutating webhooks only). */
  patch?: unknown;
  warnings: string[];
  /** response.auditAnnotations: the string values only, as Go's map[string]string decodes them. */
  auditAnnotations: [string, string][];
}

/** The kind a request on `resource` (with `subresource`) carries: the subresource's own kind when it has one. */
function kindOf(resource: ResourceInfo, subresource: string): GroupVersionKind {
  const sub = subresource ? resource.subresources.find((s) => s.name === subresource) : undefined;
  if (sub) return { group: sub.group ?? resource.group, version: sub.version ?? resource.version, kind: sub.kind };
  return { group: resource.group, version: resource.version, kind: resource.kind };
}

const gvr = (r: ResourceInfo): GroupVersionResource => ({ group: r.group, version: r.version, resource: r.resource });

const optionsKinds: Partial<Record<AdmissionAttributes['operation'], string>> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/**
 * The review of request `a` as the webhook matched it (`as`: the request's resource or an equivalent
 * one), carrying `object` and `oldObject` in that resource's version.
 */
export function newAdmissionReview(a: AdmissionAttributes, as: ResourceInfo, object: KubeObject | undefined, oldObject: KubeObject | undefined): AdmissionReview {
  const request: AdmissionRequest = {
    uid: randomUUID(),
    kind: kindOf(as, a.subresource),
    resource: gvr(as),
    requestKind: kindOf(a.resource, a.subresource),
    requestResource: gvr(a.resource),
    operation: a.operation,
    userInfo: { username: a.user.name, uid: a.user.uid, groups: a.user.groups, extra: a.user.extra },
    dryRun: a.dryRun,
  };
  if (a.subresource) {
    request.subResource = a.subresource;
    request.requestSubResource = a.subresource;
  }
  if (a.name) request.name = a.name;
  if (a.namespace) request.namespace = a.namespace;
  if (object) request.object = object;
  if (oldObject) request.oldObject = oldObject;
  const optionsKind = optionsKinds[a.operation];
  if (optionsKind) request.options = { apiVersion: 'meta.k8s.io/v1', kind: optionsKind, ...(a.dryRun ? { dryRun: ['All'] } : {}) };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}

/** Thrown for an answer that breaks the protocol; the caller words it as upstream's "received invalid webhook response". */
export class InvalidResponseError extends Error {}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the answer to review `uid` as upstream does for admission.k8s.io/v1 and decodes its patch. */
export function verifyAdmissionResponse(uid: string, mutating: boolean, body: unknown): AdmissionResponse {
  const review = isRecord(body) ? body : {};
  const apiVersion = typeof review.apiVersion === 'string' ? review.apiVersion : '';
  const kind = typeof review.kind === 'string' ? review.kind : '';
  if (apiVersion !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
    throw new InvalidResponseError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${apiVersion || '/'}, Kind=${kind}`);
  }
  const r = review.response;
  if (!isRecord(r)) throw new InvalidResponseError('webhook response was absent');
  const gotUid = typeof r.uid === 'string' ? r.uid : '';
  if (gotUid !== uid) throw new InvalidResponseError(`expected response.uid="${uid}", got "${gotUid}"`);
  const patchText = typeof r.patch === 'string' ? r.patch : '';
  const patchType = typeof r.patchType === 'string' ? r.patchType : '';
  if (!mutating && patchText) throw new InvalidResponseError('validating webhook may not return response.patch');
  if (patchText && !patchType) throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
  if (patchType && !patchText) throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
  if (patchType && patchType !== 'JSONPatch') throw new InvalidResponseError(`webhook returned invalid response.patchType of "${patchType}"`);
  const response: AdmissionResponse = {
    allowed: r.allowed === true,
    warnings: Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === 'string') : [],
    auditAnnotations: isRecord(r.auditAnnotations) ? Object.entries(r.auditAnnotations).filter((e): e is [string, string] => typeof e[1] === 'string') : [],
  };
  if (isRecord(r.status)) {
    const s = r.status;
    response.status = {
      code: typeof s.code === 'number' ? s.code : undefined,
      reason: typeof s.reason === 'string' ? s.reason : undefined,
      message: typeof s.message === 'string' ? s.message : undefined,
    };
  }
  if (patchText) {
    try {
      response.patch = JSON.parse(Buffer.from(patchText, 'base64').toString('utf8'));
    } catch (err) {
      throw new InvalidResponseError(`response.patch is not a JSON patch: ${(err as Error).message}`);
    }
  }
  return response;
}
