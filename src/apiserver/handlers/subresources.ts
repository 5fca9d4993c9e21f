// Subresources: status, binding, eviction, scale, finalize, token, and the node-proxied ones
// (log, exec, attach, portforward) that the kubelet serves.
import type { KubeObject, StoredObject } from '../../api/meta.js';
import type { Pod } from '../../api/types.js';
import { invalid as invalidField, notSupported, Path, required, type FieldError } from '../../api/field.js';
import { labelSelectorAsSelector } from '../../api/labels.js';
import { badRequest, conflict, invalid, notFound, serviceUnavailable } from '../../api/errors.js';
import { decodeObjectBody, parseJson, readBody } from '../http/body.js';
import { writeObject } from '../http/respond.js';
import { mediaType } from '../http/negotiation.js';
import { applyMergePatch } from '../../api/patch/mergepatch.js';
import { applyJsonPatch } from '../../api/patch/jsonpatch.js';
import { applyStrategicMergePatch } from '../../api/patch/strategic.js';
import { schemaForKind } from '../../api/schema.js';
import type { JsonObject } from '../../api/patch/json.js';
import { dryRunOf, type ResourceRequest } from './context.js';
import { fieldValidationOf, handleGet, handleUpdate, render } from './crud.js';
import { checkObject } from '../../api/decode.js';
import { zeroNulls } from '../../api/zero.js';
import { handlePatch } from './patch.js';
import { rfc3339 } from '../../api/time.js';
import { withPodCondition } from '../../api/pod/conditions.js';
import type { KubeletClient } from '../kubeletclient/client.js';
import { servePodLog } from '../kubeletclient/podlog.js';
import { servePodStream } from '../kubeletclient/stream.js';
import { evict } from './eviction.js';
import { createToken, type TokenIssuer } from './tokenrequest.js';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';

const success = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
const pods = { group: '', resource: 'pods' };

/** A Binding, Eviction or Scale body, decoded as upstream decodes it into the subresource's kind. */
function decodeSubresourceBody<T>(r: ResourceRequest, body: Buffer): T {
  const obj = decodeObjectBody(r.req.headers['content-type'], body);
  const declared = r.resource.subresources.find((s) => s.name === r.info.subresource)!;
  const group = declared.group ?? r.resource.group;
  const version = declared.version ?? r.resource.version;
  checkObject(group, version, declared.kind, obj, fieldValidationOf(r));
  zeroNulls(group, version, declared.kind, obj);
  return obj as T;
}

/** A Binding or Eviction body, which must name the pod of the URL. */
async function subresourceBody<T extends { metadata?: { name?: string } }>(r: ResourceRequest, kind: string): Promise<T> {
  const body = decodeSubresourceBody<T>(r, await readBody(r.req));
  // Upstream's BindingREST and EvictionREST compare the names as they are: an empty one does not match either.
  if ((body.metadata?.name ?? '') !== r.info.name) throw badRequest(`name in URL does not match name in ${kind} object`);
  return body;
}

/** A subresource's REST handler; the router has checked that the subresource serves the verb. */
export type SubresourceHandler = (r: ResourceRequest) => Promise<void>;

/** status and approval: get, update and patch of the parent object, limited to their fields. */
const statusLike: SubresourceHandler = (r) => {
  if (r.info.verb === 'get') return handleGet(r);
  if (r.info.verb === 'update') return handleUpdate(r, r.info.subresource);
  return handlePatch(r, r.info.subresource);
};
const finalize: SubresourceHandler = (r) => handleUpdate(r, 'finalize');

/**
 * Each resource's subresources by name, as upstream's per-resource REST storage ("pods/binding",
 * "deployments/scale", ...), keyed by group/resource. kubelet: the API server's client to kubelets
 * for the node-proxied ones (absent: they answer 503); tokens: the service-account token issuer
 * (absent: serviceaccounts/token answers 503).
 */
export function subresourceStorage(kubelet?: KubeletClient, tokens?: TokenIssuer): ReadonlyMap<string, ReadonlyMap<string, SubresourceHandler>> {
  const log: SubresourceHandler = kubelet ? (r) => servePodLog(r, kubelet) : nodeProxied;
  const stream: SubresourceHandler = kubelet ? (r) => servePodStream(r, kubelet, r.upgrade) : nodeProxied;
  const token: SubresourceHandler = async (r) => {
    if (!tokens) throw serviceUnavailable('this API server has no service account signing key');
    await createToken(r, decodeSubresourceBody<TokenRequest>(r, await readBody(r.req)), tokens);
  };
  const table: [string, Record<string, SubresourceHandler>][] = [
    ['/namespaces', { status: statusLike, finalize }],
    ['/pods', { status: statusLike, binding: bind, eviction: evictPod, log, exec: stream, attach: stream, portforward: stream }],
    ['/nodes', { status: statusLike }],
    ['/services', { status: statusLike }],
    ['/serviceaccounts', { token }],
    ['/resourcequotas', { status: statusLike }],
    ['/replicationcontrollers', { status: statusLike, scale }],
    ['apps/deployments', { status: statusLike, scale }],
    ['apps/replicasets', { status: statusLike, scale }],
    ['apps/statefulsets', { status: statusLike, scale }],
    ['apps/daemonsets', { status: statusLike }],
    ['batch/jobs', { status: statusLike }],
    ['batch/cronjobs', { status: statusLike }],
    ['policy/poddisruptionbudgets', { status: statusLike }],
    ['autoscaling/horizontalpodautoscalers', { status: statusLike }],
    ['networking.k8s.io/servicecidrs', { status: statusLike }],
    ['networking.k8s.io/ingresses', { status: statusLike }],
    ['admissionregistration.k8s.io/validatingadmissionpolicies', { status: statusLike }],
    ['certificates.k8s.io/certificatesigningrequests', { status: statusLike, approval: statusLike }],
  ];
  return new Map(table.map(([key, subs]) => [key, new Map(Object.entries(subs))]));
}

async function bind(r: ResourceRequest): Promise<void> {
  const dryRun = dryRunOf(r.url.searchParams.getAll('dryRun'));
  const binding = await subresourceBody<{
    metadata?: { name?: string; annotations?: Record<string, string> };
    target?: { kind?: string; name?: string };
  }>(r, 'Binding');
  const target = binding.target?.name ?? '';
  // Upstream's ValidatePodBinding; its errors reach upstream's client as a 500 (a bare aggregate), a 422 here.
  const errs: FieldError[] = [];
  const kind = binding.target?.kind ?? '';
  if (kind !== '' && kind !== 'Node') errs.push(notSupported(Path.root('target').child('kind'), kind, ['Node', '<empty>']));
  if (!target) errs.push(required(Path.root('target').child('name'), ''));
  if (errs.length) throw invalid('Binding', '', r.info.name, errs);
  const now = rfc3339(r.clock.now());
  await r.registry.update(
    r.info.namespace,
    r.info.name,
    (current) => {
      if (!current) throw notFound(pods, r.info.name);
      const pod = current as unknown as Pod & StoredObject;
      const podRef = `${current.metadata.namespace}/${current.metadata.name}`;
      if (current.metadata.deletionTimestamp) throw conflict(pods, r.info.name, `pod ${podRef} is being deleted, cannot be assigned to a host`);
      if (pod.spec?.nodeName) throw conflict(pods, r.info.name, `pod ${podRef} is already assigned to node "${pod.spec.nodeName}"`);
      const spec = { ...pod.spec!, nodeName: target };
      const annotations = { ...current.metadata.annotations, ...binding.metadata?.annotations };
      return {
        ...current,
        metadata: { ...current.metadata, ...(Object.keys(annotations).length ? { annotations } : {}) },
        spec,
        status: withPodCondition(pod.status, { type: 'PodScheduled', status: 'True', lastProbeTime: null as never, lastTransitionTime: now }),
      } as KubeObject;
    },
    { dryRun, user: r.user, subresource: 'binding' },
  );
  writeObject(r.res, 201, { ...success, code: 201 });
}

async function evictPod(r: ResourceRequest): Promise<void> {
  await evict(r, await subresourceBody<Parameters<typeof evict>[1]>(r, 'Eviction'));
}

interface Scale {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

function scaleOf(obj: StoredObject): Scale {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: unknown };
  const status = (obj.status ?? {}) as { replicas?: number };
  const m = obj.metadata;
  let selector: string | undefined;
  try {
    // A ReplicationController's selector is a plain label map.
    const labelSelector = obj.kind === 'ReplicationController' ? { matchLabels: spec.selector } : spec.selector;
    selector = labelSelectorAsSelector(labelSelector as never).toString();
  } catch {
    selector = undefined;
  }
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

const scaleSchema = schemaForKind('autoscaling', 'v1', 'Scale');

async function scale(r: ResourceRequest): Promise<void> {
  if (r.info.verb === 'get') {
    writeObject(r.res, 200, scaleOf(await r.registry.get(r.info.namespace, r.info.name)));
    return;
  }
  const dryRun = dryRunOf(r.url.searchParams.getAll('dryRun'));
  const body = await readBody(r.req);
  const type = mediaType(r.req.headers['content-type']);
  const result = await r.registry.update(
    r.info.namespace,
    r.info.name,
    (current) => {
      if (!current) throw notFound({ group: r.resource.group, resource: r.resource.resource }, r.info.name);
      const before = scaleOf(current);
      let wanted: Scale;
      if (r.info.verb === 'update') wanted = decodeSubresourceBody<Scale>(r, body);
      else if (type === 'application/json-patch+json') wanted = applyJsonPatch(before as unknown as JsonObject, parseJson(body)) as unknown as Scale;
      // As upstream, a strategic merge patch applies against the Scale schema (its directives included).
      else if (type === 'application/strategic-merge-patch+json') wanted = applyStrategicMergePatch(before as unknown as JsonObject, parseJson(body), scaleSchema) as unknown as Scale;
      else wanted = applyMergePatch(before as unknown as JsonObject, parseJson(body)) as unknown as Scale;
      const replicas = wanted.spec?.replicas ?? 0;
      if (!Number.isInteger(replicas) || replicas < 0) {
        throw invalid('Scale', 'autoscaling', r.info.name, [invalidField(Path.root('spec').child('replicas'), replicas, 'must be greater than or equal to 0')]);
      }
      const rv = wanted.metadata?.resourceVersion as string | undefined;
      const out = structuredClone(current);
      out.spec = { ...(out.spec as object), replicas };
      if (rv && r.info.verb === 'update') out.metadata.resourceVersion = rv;
      else delete out.metadata.resourceVersion;
      return out;
    },
    { dryRun, user: r.user, subresource: '' },
  );
  writeObject(r.res, 200, scaleOf(result.object));
}

/** log, exec, attach and portforward are served by the pod's kubelet. */
async function nodeProxied(r: ResourceRequest): Promise<void> {
  const pod = await r.registries.read('pods', r.info.namespace, r.info.name);
  const node = pod.spec?.nodeName;
  if (!node) throw badRequest(`pod ${r.info.name} does not have a host assigned`);
  throw serviceUnavailable(`no kubelet serves node "${node}": the ${r.info.subresource} subresource needs a kite agent on that node`);
}

export { render };
