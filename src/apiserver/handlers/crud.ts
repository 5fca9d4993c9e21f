// The verbs on a resource: get, list, create, update, patch, delete and deletecollection.
import type { KubeObject, StoredObject } from '../../api/meta.js';
import { apiVersionOf } from '../../api/meta.js';
import { applyDefaults } from '../../api/defaults/index.js';
import { checkObject } from '../../api/decode.js';
import { zeroNulls } from '../../api/zero.js';
import { toTable, type IncludeObject } from '../printers/table.js';
import { badRequest, hasStatusCode, invalid as invalidObject, notFound } from '../../api/errors.js';
import { invalid, notSupported, Path, type FieldError } from '../../api/field.js';
import { checkTypeMeta, decodeObjectBody, readBody } from '../http/body.js';
import { writeJson, writeObject } from '../http/respond.js';
import type { DeleteOptions, WriteOptions } from '../registry/registry.js';
import { optionalBoolQuery, dryRunOf, intQuery, objectJson, query, withTypeMeta, type ResourceRequest } from './context.js';
import { selectionFor } from './selectors.js';
import { validateListOptions } from './listoptions.js';
import { fieldManagerFor, trackManagedFields } from './managed.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function fieldValidationOf(r: Pick<ResourceRequest, 'url'>): FieldValidation {
  const v = query(r, 'fieldValidation') ?? 'Warn';
  if (v !== 'Strict' && v !== 'Warn' && v !== 'Ignore') {
    throw badRequest(`fieldValidation parameter unsupported: ${v}; expected one of: Ignore, Warn, Strict`);
  }
  return v;
}

/** Renders one object the way the client asked (object, Table row, or partial metadata). */
export function render(r: ResourceRequest, obj: StoredObject): unknown {
  const typed = withTypeMeta(r.resource, obj);
  if (r.output.kind === 'table') return toTable(r.resource, [typed], { includeObject: includeObjectOf(r), now: r.clock.now() });
  if (r.output.kind === 'partial') return partial(typed);
  return typed;
}

/** Answers with a written object; as plain JSON it is the text its watchers were sent. */
export function writeServed(r: ResourceRequest, code: number, obj: StoredObject, warnings: string[] = []): void {
  // An update that retried on a conflict ran admission again: its warnings are said once.
  warnings = [...new Set(warnings)];
  if (r.output.kind === 'object' && !r.output.yaml) writeJson(r.res, code, objectJson(r.resource, obj), warnings);
  else writeObject(r.res, code, render(r, obj), r.output.yaml, warnings);
}

/** Checked with the Accept header, before the handler ran (tableOptions). */
function includeObjectOf(r: ResourceRequest): IncludeObject {
  return r.output.includeObject ?? 'Metadata';
}

function partial(obj: StoredObject): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** `warnings` collects admission's warnings for the response. */
export function writeOptions(r: ResourceRequest, dryRun: boolean, subresource: string, warnings?: string[]): WriteOptions {
  const manager = fieldManagerFor(r);
  return { dryRun, user: r.user, subresource, track: trackManagedFields(r, manager, 'Update', subresource), warnings, timeline: r.timeline };
}

export async function handleGet(r: ResourceRequest): Promise<void> {
  // A get at a resourceVersion is served from state at least that fresh.
  await r.registry.awaitResourceVersion(query(r, 'resourceVersion'));
  const obj = await r.registry.get(r.info.namespace, r.info.name);
  writeObject(r.res, 200, render(r, obj), r.output.yaml);
}

export async function handleList(r: ResourceRequest): Promise<void> {
  validateListOptions(r, false);
  const selection = selectionFor(r);
  const limit = intQuery(r, 'limit');
  const result = await r.registry.list(r.info.namespace, {
    selection,
    limit,
    continueToken: query(r, 'continue') || undefined,
    resourceVersion: query(r, 'resourceVersion'),
    resourceVersionMatch: query(r, 'resourceVersionMatch'),
  });
  const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continueToken) metadata.continue = result.continueToken;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  const items = result.items.map((o) => withTypeMeta(r.resource, o));
  let body: unknown;
  if (r.output.kind === 'table') {
    body = { ...toTable(r.resource, items, { includeObject: includeObjectOf(r), now: r.clock.now() }), metadata };
  } else if (r.output.kind === 'partial') {
    body = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata, items: items.map(partial) };
  } else {
    body = { kind: r.resource.listKind, apiVersion: apiVersionOf(r.resource.group, r.resource.version), metadata, items };
  }
  writeObject(r.res, 200, body, r.output.yaml);
}

/** Decodes a create/update body: type meta checked, unknown fields per fieldValidation, defaults applied. */
export async function decodeInput(r: InputRequest, expectName?: string): Promise<{ obj: KubeObject; warnings: string[] }> {
  const body = await readBody(r.req);
  const obj = decodeObjectBody(r.req.headers['content-type'], body);
  const warnings = prepareInput(r, obj, expectName);
  return { obj, warnings };
}

/** What decoding a request's object reads: the body, the resource, the URL's namespace and fieldValidation. */
export type InputRequest = Pick<ResourceRequest, 'req' | 'url' | 'info' | 'resource'>;

/** Checks and defaults an object that came from a client (a body, or the result of a patch). */
export function prepareInput(r: InputRequest, obj: KubeObject, expectName?: string): string[] {
  const { group, version, kind } = r.resource;
  const want = apiVersionOf(group, version);
  // A patch result never went through the body decoder's type meta check; after it both are strings or null.
  checkTypeMeta(obj as Record<string, unknown>);
  // Go's decoder reads null as "", and "" takes the type meta of the request.
  if (obj.apiVersion && obj.apiVersion !== want) {
    throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${want})`);
  }
  if (obj.kind && obj.kind !== kind) {
    throw badRequest(`${obj.kind} in version "${version}" cannot be handled as a ${kind}: the object kind does not match the resource`);
  }
  obj.apiVersion = want;
  obj.kind = kind;
  const { warnings } = checkObject(group, version, kind, obj, fieldValidationOf(r));
  // Likewise a null name or namespace is "" (absent) below.
  zeroNulls(group, version, kind, obj as Record<string, unknown>);
  const meta = (obj.metadata ??= {});
  if (r.resource.namespaced && meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== r.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (expectName !== undefined && meta.name !== undefined && meta.name !== '' && meta.name !== expectName) {
    throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${expectName})`);
  }
  applyDefaults(group, kind, obj);
  return warnings;
}

export async function handleCreate(r: ResourceRequest): Promise<void> {
  if (r.resource.namespaced && !r.info.namespace) throw notFound({ group: '', resource: '' }, '');
  const dryRun = dryRunOf(r.url.searchParams.getAll('dryRun'));
  const { obj, warnings } = await decodeInput(r);
  const created = await r.registry.create(r.info.namespace, obj, writeOptions(r, dryRun, '', warnings));
  writeServed(r, 201, created, warnings);
}

export async function handleUpdate(r: ResourceRequest, subresource = ''): Promise<void> {
  const dryRun = dryRunOf(r.url.searchParams.getAll('dryRun'));
  const { obj, warnings } = await decodeInput(r, r.info.name);
  const result = await r.registry.update(r.info.namespace, r.info.name, () => obj, writeOptions(r, dryRun, subresource, warnings));
  writeServed(r, result.created ? 201 : 200, result.object, warnings);
}

/** DeleteOptions from the body (kubectl sends one) and the query (curl users do), as upstream's delete handler reads them. */
export async function deleteOptionsOf(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req);
  let opts: DeleteOptions = {};
  if (body.length > 0 && body.toString('utf8').trim() !== '') {
    const decoded = decodeObjectBody(r.req.headers['content-type'], body);
    if (decoded.kind && decoded.kind !== 'DeleteOptions') {
      throw badRequest(`DeleteOptions in body is not valid: kind ${JSON.stringify(decoded.kind)} is not DeleteOptions`);
    }
    // The decoder's type checks (preconditions must be an object, orphanDependents a bool, ...); it is
    // not a strict decoder, so unknown fields are dropped silently. A null is the field's zero value.
    checkObject('', 'v1', 'DeleteOptions', decoded, 'Ignore');
    zeroNulls('', 'v1', 'DeleteOptions', decoded);
    opts = decoded as DeleteOptions;
  }
  const grace = intQuery(r, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = grace;
  const policy = query(r, 'propagationPolicy');
  if (policy) opts.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = optionalBoolQuery(r, 'orphanDependents');
  if (orphan !== undefined) opts.orphanDependents = orphan;
  const dry = r.url.searchParams.getAll('dryRun');
  if (dry.length) opts.dryRun = dry;
  validateDeleteOptions(opts);
  // Upstream's rest.BeforeDelete: a negative grace period is read as 1 s.
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
  return opts;
}

/** Upstream's ValidateDeleteOptions: a 422 Invalid for DeleteOptions.meta.k8s.io. */
function validateDeleteOptions(opts: DeleteOptions): void {
  const errs: FieldError[] = [];
  const policyPath = Path.root('propagationPolicy');
  if (opts.orphanDependents !== undefined && opts.propagationPolicy !== undefined) {
    errs.push(invalid(policyPath, opts.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (opts.propagationPolicy !== undefined && !['Foreground', 'Background', 'Orphan'].includes(opts.propagationPolicy)) {
    errs.push(notSupported(policyPath, opts.propagationPolicy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (opts.dryRun?.some((v) => v !== 'All')) errs.push(notSupported(Path.root('dryRun'), opts.dryRun, ['All']));
  if (errs.length) throw invalidObject('DeleteOptions', 'meta.k8s.io', '', errs);
}

export async function handleDelete(r: ResourceRequest): Promise<void> {
  const options = await deleteOptionsOf(r);
  const dryRun = dryRunOf(options.dryRun ?? []);
  const { object, deleted } = await r.registry.delete(r.info.namespace, r.info.name, options, { dryRun, user: r.user, subresource: '', timeline: r.timeline });
  if (deleted && !r.registry.strategy.returnDeletedObject) {
    writeObject(r.res, 200, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: object.metadata.name, group: r.resource.group || undefined, kind: r.resource.resource, uid: object.metadata.uid },
    });
    return;
  }
  const code = !deleted && options.orphanDependents === false ? 202 : 200;
  writeObject(r.res, code, render(r, object), r.output.yaml);
}

export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const options = await deleteOptionsOf(r);
  const dryRun = dryRunOf(options.dryRun ?? []);
  const selection = selectionFor(r);
  const { items, resourceVersion } = await r.registry.list(r.info.namespace, { selection });
  const deleted: StoredObject[] = [];
  for (const item of items) {
    try {
      const out = await r.registry.delete(item.metadata.namespace ?? '', item.metadata.name!, options, { dryRun, user: r.user, subresource: '' });
      deleted.push(withTypeMeta(r.resource, out.object));
    } catch (err) {
      // Gone meanwhile: that is what was asked.
      if (!hasStatusCode(err, 404)) throw err;
    }
  }
  writeObject(r.res, 200, {
    kind: r.resource.listKind,
    apiVersion: apiVersionOf(r.resource.group, r.resource.version),
    metadata: { resourceVersion },
    items: deleted,
  });
}
