// PATCH: JSON patch, JSON merge patch, strategic merge patch and server-side apply, each applied
// to the current object inside the registry's compare-and-swap loop.
import type { KubeObject, StoredObject } from '../../api/meta.js';
import { apiVersionOf } from '../../api/meta.js';
import { schemaForKind } from '../../api/schema.js';
import { applyDefaults } from '../../api/defaults/index.js';
import { checkObject } from '../../api/decode.js';
import { duplicateFields } from '../../api/jsonscan.js';
import { invalid as invalidField, Path } from '../../api/field.js';
import { badRequest, invalid, notFound, unsupportedMediaType } from '../../api/errors.js';
import { parseJson, parseYaml, readBody } from '../http/body.js';
import { mediaType } from '../http/negotiation.js';
import { applyJsonPatch } from '../../api/patch/jsonpatch.js';
import { applyMergePatch } from '../../api/patch/mergepatch.js';
import { applyStrategicMergePatch } from '../../api/patch/strategic.js';
import { applyPatch, validatePatchOptions } from '../../api/patch/apply.js';
import { goFormat, type JsonObject } from '../../api/patch/json.js';
import { dryRunOf, optionalBoolQuery, query, type ResourceRequest } from './context.js';
import { fieldValidationOf, prepareInput, writeOptions, writeServed } from './crud.js';
import { resetFieldsFor } from './managed.js';
import { rfc3339 } from '../../api/time.js';

const patchTypes: Record<string, 'json' | 'merge' | 'strategic' | 'apply'> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

/** The object a patch produced keeps the current resourceVersion only if the patch pinned one. */
function pinnedVersion(patched: KubeObject, current: StoredObject, patchBody: unknown): void {
  const meta = (patched.metadata ??= {});
  const fromPatch = typeof patchBody === 'object' && patchBody !== null && !Array.isArray(patchBody)
    ? ((patchBody as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion as string | undefined)
    : meta.resourceVersion !== current.metadata.resourceVersion
      ? meta.resourceVersion
      : undefined;
  if (fromPatch) meta.resourceVersion = fromPatch;
  else delete meta.resourceVersion;
}

export async function handlePatch(r: ResourceRequest, subresource = ''): Promise<void> {
  const type = patchTypes[mediaType(r.req.headers['content-type'])];
  if (!type) {
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: ${Object.keys(patchTypes).join(', ')}`,
    );
  }
  const force = optionalBoolQuery(r, 'force');
  const fieldManager = query(r, 'fieldManager');
  const optsErr = validatePatchOptions(type === 'apply', { fieldManager, force });
  if (optsErr) throw optsErr;
  const dryRun = dryRunOf(r.url.searchParams.getAll('dryRun'));
  const body = await readBody(r.req);
  const patch = type === 'apply' ? parseYaml(body) : parseJson(body);
  const { group, version, kind } = r.resource;
  const schema = schemaForKind(group, version, kind);
  const name = r.info.name;
  let warnings: string[] = [];

  if (type === 'apply') {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw badRequest('error decoding patch: apply patch must be an object');
    const applied = patch as JsonObject;
    warnings = checkObject(group, version, kind, applied, fieldValidationOf(r)).warnings;
    const appliedName = (applied.metadata as { name?: string } | undefined)?.name;
    if (appliedName !== undefined && appliedName !== name) {
      throw badRequest(`the name of the object (${appliedName}) does not match the name on the URL (${name})`);
    }
    const result = await r.registry.update(
      r.info.namespace,
      name,
      (current) => {
        const out = applyPatch(current as JsonObject | undefined, applied, {
          manager: fieldManager!,
          force: force ?? false,
          apiVersion: apiVersionOf(group, version),
          kind,
          now: rfc3339(r.clock.now()),
          schema,
          subresource: subresource || undefined,
          resetFields: resetFieldsFor(r, subresource, applied),
        });
        const obj = out.object as KubeObject;
        applyDefaults(group, kind, obj);
        if (current) pinnedVersion(obj, current, applied);
        else {
          obj.metadata ??= {};
          obj.metadata.name = name;
        }
        return obj;
      },
      { dryRun, user: r.user, subresource, allowCreate: subresource === '', warnings, annotate: r.annotate },
    );
    writeServed(r, result.created ? 201 : 200, result.object, warnings);
    return;
  }

  // Upstream decodes the patch body strictly for Strict and Warn; JSON patch errors name the operation list.
  const validation = fieldValidationOf(r);
  const strictErrors = validation === 'Ignore' ? [] : duplicateFields(patch).map((p) => `${type === 'json' ? 'json patch ' : ''}duplicate field "${p}"`);
  const admissionWarnings: string[] = [];
  const result = await r.registry.update(
    r.info.namespace,
    name,
    (current) => {
      if (!current) throw notFound({ group, resource: r.resource.resource }, name);
      let patched: JsonObject;
      if (type === 'json') patched = applyJsonPatch(current as JsonObject, patch);
      else if (type === 'merge') patched = applyMergePatch(current as JsonObject, patch);
      else patched = applyStrategicMergePatch(current as JsonObject, patch, schema);
      if (strictErrors.length && validation === 'Strict') {
        // The bad value is the patched object (the patch map, in Go's rendering, for a strategic merge patch).
        const value = type === 'strategic' ? goFormat(patch) : JSON.stringify(patched);
        throw invalid('', '', '', [invalidField(Path.root('patch'), value, `strict decoding error: ${strictErrors.join(', ')}`)]);
      }
      pinnedVersion(patched, current, type === 'json' ? undefined : patch);
      warnings = [...strictErrors, ...prepareInput(r, patched, name)];
      return patched;
    },
    writeOptions(r, dryRun, subresource, admissionWarnings),
  );
  writeServed(r, 200, result.object, [...warnings, ...admissionWarnings]);
}
