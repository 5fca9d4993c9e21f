// Refusals worded as upstream's admission.NewForbidden.
import type { StatusError } from '../../api/errors.js';
import { newForbidden } from '../authz/forbidden.js';
import type { AdmissionAttributes } from './interface.js';

/**
 * 403 `<resource> "<name>" is forbidden: <why>`, naming the incoming object (its generateName before a
 * name is generated, "Unknown" without an object, e.g. on delete), as upstream.
 */
export function admissionForbidden(a: AdmissionAttributes, why: string): StatusError {
  const meta = a.object?.metadata;
  const name = meta?.name || meta?.generateName || 'Unknown';
  return newForbidden({ group: a.resource.group, resource: a.resource.resource }, name, why);
}
