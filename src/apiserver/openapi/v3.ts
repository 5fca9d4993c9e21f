// /openapi/v3: the root index and one document per served group/version, shaped like upstream's.
// kubectl reads them to learn that PATCH takes `fieldValidation` (so it validates server-side) and
// for `explain`. PATCH operations declare no strategic-merge-patch request body on purpose: kubectl
// then computes apply's strategic merge patch from /openapi/v2 (v2.ts), which lists it as upstream's does.
// Documents are built and serialized once; the hash is upstream's ETag: SHA-512 of the body, upper-case hex.
import { kubernetesVersion } from '../version.js';
import { createHash } from 'node:crypto';
import type { GroupVersionKind } from '../../api/meta.js';
import { groupVersions, resources, type ResourceInfo, type SubresourceInfo } from '../../api/resources.js';
import { componentSchemas, refName, schemaNameForKind, type RawSchema } from '../../api/schema.js';

/** The Kubernetes version the documents describe (info.version). */
export const KUBERNETES_VERSION = `v${kubernetesVersion.major}.${kubernetesVersion.minor}.${kubernetesVersion.patch}`;
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const JSON_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const WATCH_TYPES = [...JSON_TYPES, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
// No application/strategic-merge-patch+json: see the header.
const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json'];

export type Json = Record<string, unknown>;

/** The one security scheme, as both documents declare it. */
export const BEARER_TOKEN = { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' };

export interface OpenAPIDoc {
  hash: string;
  body: string;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function param(name: string, type: 'string' | 'integer' | 'boolean', description: string, where: 'query' | 'path' = 'query'): Json {
  const schema: Json = { type, uniqueItems: true };
  return { description, in: where, name, ...(where === 'path' ? { required: true } : {}), schema };
}

const p = {
  pretty: param('pretty', 'string', "If 'true', then the output is pretty printed."),
  dryRun: param('dryRun', 'string', 'When present, the request is processed without persisting anything. The only valid value is All.'),
  fieldManager: param('fieldManager', 'string', 'A name for the actor making these changes, recorded in managedFields.'),
  fieldValidation: param(
    'fieldValidation',
    'string',
    'How to treat unknown or duplicate fields in the request body: Ignore drops them, Warn drops them and returns a warning for each, Strict fails the request.',
  ),
  force: param('force', 'boolean', 'Force an apply request through conflicts with other field managers. Only valid for apply patches.'),
  gracePeriodSeconds: param('gracePeriodSeconds', 'integer', 'Seconds the object is given before deletion; zero deletes immediately.'),
  ignoreStoreReadError: param(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'Delete an object that cannot be read from storage (corrupt or undecodable). Unsafe.',
  ),
  orphanDependents: param('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: param('propagationPolicy', 'string', 'How dependents are garbage collected: Orphan, Background or Foreground.'),
  allowWatchBookmarks: param('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK watch events.'),
  continue: param('continue', 'string', 'The continue token of a previous paged list.'),
  fieldSelector: param('fieldSelector', 'string', 'Restrict the returned objects by their fields.'),
  labelSelector: param('labelSelector', 'string', 'Restrict the returned objects by their labels.'),
  limit: param('limit', 'integer', 'The maximum number of objects in one page of a list.'),
  resourceVersion: param('resourceVersion', 'string', 'Which resource versions the request may be served from.'),
  resourceVersionMatch: param('resourceVersionMatch', 'string', 'How resourceVersion applies to list calls: Exact or NotOlderThan.'),
  sendInitialEvents: param('sendInitialEvents', 'boolean', 'Begin a watch with synthetic events for the current state.'),
  timeoutSeconds: param('timeoutSeconds', 'integer', 'Time limit of a list or watch call.'),
  watch: param('watch', 'boolean', 'Watch for changes instead of listing.'),
  name: (kind: string) => param('name', 'string', `name of the ${kind}`, 'path'),
  namespace: param('namespace', 'string', 'object name and auth scope, such as for teams and projects', 'path'),
};
const listParams = [
  p.allowWatchBookmarks,
  p.continue,
  p.fieldSelector,
  p.labelSelector,
  p.limit,
  p.resourceVersion,
  p.resourceVersionMatch,
  p.sendInitialEvents,
  p.timeoutSeconds,
  p.watch,
];
const writeParams = [p.dryRun, p.fieldManager, p.fieldValidation];
const deleteParams = [p.dryRun, p.gracePeriodSeconds, p.ignoreStoreReadError, p.orphanDependents, p.propagationPolicy];

/** Parameters of the connect subresources, as their *Options kinds define them. */
const connectParams: Record<string, Json[]> = {
  log: [
    param('container', 'string', 'The container whose logs to stream; may be omitted for single-container pods.'),
    param('follow', 'boolean', 'Follow the log stream.'),
    param('insecureSkipTLSVerifyBackend', 'boolean', "Skip verifying the kubelet's serving certificate."),
    param('limitBytes', 'integer', 'Stop after this many bytes.'),
    param('previous', 'boolean', 'Logs of the previous terminated container.'),
    param('sinceSeconds', 'integer', 'Only logs newer than this many seconds.'),
    param('stream', 'string', 'Which stream to return: All, Stdout or Stderr.'),
    param('tailLines', 'integer', 'Only this many lines from the end.'),
    param('timestamps', 'boolean', 'Prefix every line with its RFC3339 timestamp.'),
  ],
  exec: [
    param('command', 'string', 'The command to run, one argument per parameter.'),
    param('container', 'string', 'The container to run it in.'),
    param('stderr', 'boolean', 'Redirect standard error.'),
    param('stdin', 'boolean', 'Redirect standard input.'),
    param('stdout', 'boolean', 'Redirect standard output.'),
    param('tty', 'boolean', 'Allocate a terminal.'),
  ],
  attach: [
    param('container', 'string', 'The container to attach to.'),
    param('stderr', 'boolean', 'Redirect standard error.'),
    param('stdin', 'boolean', 'Redirect standard input.'),
    param('stdout', 'boolean', 'Redirect standard output.'),
    param('tty', 'boolean', 'Allocate a terminal.'),
  ],
  portforward: [param('ports', 'integer', 'The pod ports to forward.')],
};

function content(types: string[], schema: Json): Json {
  return Object.fromEntries(types.map((t) => [t, { schema }]));
}

function responses(codes: number[], types: string[], schema: Json): Json {
  const text: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted' };
  const out: Json = {};
  for (const c of codes) out[c] = { content: content(types, schema), description: text[c] };
  out[401] = { description: 'Unauthorized' };
  return out;
}

/** upstream's operationId pieces: `listCoreV1NamespacedPod`, tag `core_v1`. */
function groupWord(group: string): string {
  const first = group === '' ? 'core' : group.split('.')[0];
  return first[0].toUpperCase() + first.slice(1);
}

interface OpSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  action: string;
  id: string;
  description: string;
  params?: Json[];
  body?: Json;
  responses: Json;
}

class PathBuilder {
  readonly paths: Record<string, Json> = {};

  constructor(private readonly tag: string) {}

  add(path: string, pathParams: Json[], gvk: GroupVersionKind, ops: OpSpec[]): void {
    const item: Json = (this.paths[path] ??= { parameters: pathParams });
    for (const op of ops) {
      item[op.method] = {
        description: op.description,
        operationId: op.id,
        ...(op.params?.length ? { parameters: op.params } : {}),
        ...(op.body ? { requestBody: op.body } : {}),
        responses: op.responses,
        tags: [this.tag],
        'x-kubernetes-action': op.action,
        'x-kubernetes-group-version-kind': { group: gvk.group, kind: gvk.kind, version: gvk.version },
      };
    }
  }
}

function schemaRef(group: string, version: string, kind: string): Json {
  const name = schemaNameForKind(group, version, kind);
  if (!name) throw new Error(`no schema for ${group}/${version} ${kind}`);
  return ref(name);
}

const byName = (a: Json, b: Json) => ((a.name as string) < (b.name as string) ? -1 : 1);
const requestBody = (schema: Json, types = ['*/*']) => ({ content: content(types, schema), required: true });
const status = ref(`${META}.Status`);
const deleteOptions = requestBody(ref(`${META}.DeleteOptions`));

/** Operations as upstream names them: `id` is the operationId without its verb, e.g. CoreV1NamespacedPod. */
const op = {
  read: (id: string, what: string, obj: Json): OpSpec => ({
    method: 'get',
    action: 'get',
    id: `read${id}`,
    description: `read ${what}`,
    responses: responses([200], JSON_TYPES, obj),
  }),
  create: (id: string, what: string, obj: Json): OpSpec => ({
    method: 'post',
    action: 'post',
    id: `create${id}`,
    description: `create ${what}`,
    params: writeParams,
    body: requestBody(obj),
    responses: responses([200, 201, 202], JSON_TYPES, obj),
  }),
  replace: (id: string, what: string, obj: Json): OpSpec => ({
    method: 'put',
    action: 'put',
    id: `replace${id}`,
    description: `replace ${what}`,
    params: writeParams,
    body: requestBody(obj),
    responses: responses([200, 201], JSON_TYPES, obj),
  }),
  patch: (id: string, what: string, obj: Json): OpSpec => ({
    method: 'patch',
    action: 'patch',
    id: `patch${id}`,
    description: `partially update ${what}`,
    params: [p.dryRun, p.fieldManager, p.fieldValidation, p.force],
    body: requestBody(ref(`${META}.Patch`), PATCH_TYPES),
    responses: responses([200, 201], JSON_TYPES, obj),
  }),
  delete: (id: string, kind: string): OpSpec => ({
    method: 'delete',
    action: 'delete',
    id: `delete${id}`,
    description: `delete a ${kind}`,
    params: deleteParams,
    body: deleteOptions,
    responses: responses([200, 202], JSON_TYPES, status),
  }),
  deleteCollection: (id: string, kind: string): OpSpec => ({
    method: 'delete',
    action: 'deletecollection',
    id: `delete${id}`,
    description: `delete collection of ${kind}`,
    params: [...listParams.filter((x) => x !== p.watch && x !== p.allowWatchBookmarks), ...deleteParams].sort(byName),
    body: deleteOptions,
    responses: responses([200], JSON_TYPES, status),
  }),
  list: (id: string, kind: string, list: Json): OpSpec => ({
    method: 'get',
    action: 'list',
    id: `list${id}`,
    description: `list or watch objects of kind ${kind}`,
    params: listParams,
    responses: responses([200], WATCH_TYPES, list),
  }),
  watch: (action: 'watch' | 'watchlist', id: string, kind: string): OpSpec => ({
    method: 'get',
    action,
    id: `watch${id}`,
    description:
      action === 'watch'
        ? `watch changes to an object of kind ${kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`
        : `watch individual changes to a list of ${kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
    params: listParams,
    responses: responses([200], WATCH_TYPES, ref(`${META}.WatchEvent`)),
  }),
};

function resourcePaths(b: PathBuilder, r: ResourceInfo, prefix: string): void {
  const gv = `${groupWord(r.group)}${r.version[0].toUpperCase()}${r.version.slice(1)}`;
  const nsKind = `${r.namespaced ? 'Namespaced' : ''}${r.kind}`;
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const obj = schemaRef(r.group, r.version, r.kind);
  const list = schemaRef(r.group, r.version, r.listKind);
  const has = (verb: string) => r.verbs.includes(verb);
  const scope = r.namespaced ? `namespaces/{namespace}/` : '';
  const scopeParams = r.namespaced ? [p.namespace, p.pretty] : [p.pretty];
  const itemParams = [p.name(r.kind), ...scopeParams];
  const the = `the specified ${r.kind}`;

  const collection: OpSpec[] = [];
  if (has('list')) collection.push(op.list(`${gv}${nsKind}`, r.kind, list));
  if (has('create')) collection.push(op.create(`${gv}${nsKind}`, `a ${r.kind}`, obj));
  if (has('deletecollection')) collection.push(op.deleteCollection(`${gv}Collection${nsKind}`, r.kind));
  if (collection.length) b.add(`${prefix}/${scope}${r.resource}`, scopeParams, gvk, collection);

  const item: OpSpec[] = [];
  if (has('get')) item.push(op.read(`${gv}${nsKind}`, the, obj));
  if (has('update')) item.push(op.replace(`${gv}${nsKind}`, the, obj));
  if (has('patch')) item.push(op.patch(`${gv}${nsKind}`, the, obj));
  if (has('delete')) item.push(op.delete(`${gv}${nsKind}`, r.kind));
  if (item.length) b.add(`${prefix}/${scope}${r.resource}/{name}`, itemParams, gvk, item);

  if (has('list') && r.namespaced) b.add(`${prefix}/${r.resource}`, [p.pretty], gvk, [op.list(`${gv}${r.kind}ForAllNamespaces`, r.kind, list)]);
  if (has('watch')) {
    b.add(`${prefix}/watch/${scope}${r.resource}`, scopeParams, gvk, [op.watch('watchlist', `${gv}${nsKind}List`, r.kind)]);
    if (r.namespaced) b.add(`${prefix}/watch/${r.resource}`, [p.pretty], gvk, [op.watch('watchlist', `${gv}${r.kind}ListForAllNamespaces`, r.kind)]);
    b.add(`${prefix}/watch/${scope}${r.resource}/{name}`, itemParams, gvk, [op.watch('watch', `${gv}${nsKind}`, r.kind)]);
  }
  for (const s of r.subresources) subresourcePaths(b, r, s, `${prefix}/${scope}${r.resource}/{name}/${s.name}`, [gv, nsKind], itemParams);
}

/** `ids` is the operationId's group-version and kind parts, e.g. ['CoreV1', 'NamespacedPod']. */
function subresourcePaths(b: PathBuilder, r: ResourceInfo, s: SubresourceInfo, path: string, ids: [string, string], itemParams: Json[]): void {
  const suffix = s.name[0].toUpperCase() + s.name.slice(1);
  const id = `${ids.join('')}${suffix}`;
  const gvk = { group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind };
  const what = `${s.name} of the specified ${r.kind}`;
  const ops: OpSpec[] = [];
  const connect = connectParams[s.name];
  if (s.name === 'log') {
    // A read whose answer is the log text, not an object.
    const types = ['text/plain', 'application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
    ops.push({ ...op.read(id, what, {}), params: connect, responses: responses([200], types, { type: 'string' }) });
  } else if (connect) {
    for (const verb of s.verbs) {
      const [method, word] = verb === 'create' ? (['post', 'Post'] as const) : (['get', 'Get'] as const);
      ops.push({
        method,
        action: 'connect',
        id: `connect${ids[0]}${word}${ids[1]}${suffix}`,
        description: `connect ${method.toUpperCase()} requests to ${what}`,
        params: connect,
        responses: responses([200], ['*/*'], { type: 'string' }),
      });
    }
  } else {
    const obj = schemaRef(gvk.group, gvk.version, gvk.kind);
    for (const verb of s.verbs) {
      if (verb === 'get') ops.push(op.read(id, what, obj));
      if (verb === 'update') ops.push(op.replace(id, what, obj));
      if (verb === 'patch') ops.push(op.patch(id, what, obj));
      if (verb === 'create') ops.push(op.create(id, what, obj));
    }
  }
  b.add(path, itemParams, gvk, ops);
}

/** Every component that `root` references, directly or not, in name order. */
export function referencedSchemas(root: unknown): Record<string, RawSchema> {
  const seen = new Set<string>();
  const visit = (s: unknown): void => {
    if (!s || typeof s !== 'object') return;
    const name = refName(s as RawSchema);
    if (name && !seen.has(name)) {
      seen.add(name);
      visit(componentSchemas[name]);
    }
    for (const v of Object.values(s)) visit(v);
  };
  visit(root);
  return Object.fromEntries([...seen].sort().map((name) => [name, componentSchemas[name]]));
}

/** `api/v1` or `apis/apps/v1`: the key of a group/version in the root index and its URL. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** The paths of one group/version's resources, in path order: shared by the v3 document and v2's. */
export function groupVersionPaths(group: string, version: string): Record<string, Json> {
  const tag = `${group === '' ? 'core' : group.split('.')[0]}_${version}`;
  const b = new PathBuilder(tag);
  for (const r of resources.filter((x) => x.group === group && x.version === version)) resourcePaths(b, r, `/${groupVersionPath(group, version)}`);
  return Object.fromEntries(Object.entries(b.paths).sort(([x], [y]) => (x < y ? -1 : 1)));
}

function buildDoc(group: string, version: string): string {
  const paths = groupVersionPaths(group, version);
  const doc = {
    components: {
      schemas: referencedSchemas(paths),
      securitySchemes: { BearerToken: BEARER_TOKEN },
    },
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION },
    openapi: '3.0.0',
    paths,
    security: [{ BearerToken: [] }],
  };
  return JSON.stringify(doc);
}

let docs: Map<string, OpenAPIDoc> | undefined;

function allDocs(): Map<string, OpenAPIDoc> {
  if (!docs) {
    docs = new Map();
    for (const { group, version } of groupVersions()) {
      const body = buildDoc(group, version);
      docs.set(groupVersionPath(group, version), { hash: createHash('sha512').update(body).digest('hex').toUpperCase(), body });
    }
  }
  return docs;
}

/** GET /openapi/v3: one entry per served group/version, its URL carrying the document's hash. */
export function openapiV3Root(): { paths: Record<string, { serverRelativeURL: string }> } {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [gvPath, doc] of allDocs()) paths[gvPath] = { serverRelativeURL: `/openapi/v3/${gvPath}?hash=${doc.hash}` };
  return { paths };
}

/** GET /openapi/v3/<gvPath> (e.g. `apis/apps/v1`): the serialized document and its hash (for ETag), or undefined. */
export function openapiV3Doc(gvPath: string): OpenAPIDoc | undefined {
  return allDocs().get(gvPath);
}
