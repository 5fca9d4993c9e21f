// labelSelector and fieldSelector query parameters → a Selection, checked against the
// resource's supported field labels.
import { parseLabelSelector } from '../../api/labels.js';
import { checkFieldLabels, FieldSelector, parseFieldSelector } from '../../api/fields.js';
import { badRequest, isStatusError } from '../../api/errors.js';
import { Selection } from '../registry/selection.js';
import { query, type ResourceRequest } from './context.js';

function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (isStatusError(err)) throw err;
    throw badRequest((err as Error).message);
  }
}

/** A watch or get on one name selects it by metadata.name, as upstream does. */
export function selectionFor(r: ResourceRequest, name?: string): Selection {
  const labels = parsed(() => parseLabelSelector(query(r, 'labelSelector') ?? ''));
  let fields = parsed(() => parseFieldSelector(query(r, 'fieldSelector') ?? ''));
  const allowed = Object.keys(r.registry.strategy.selectableFields({ metadata: {} }));
  checkFieldLabels(fields, allowed);
  if (name !== undefined) fields = new FieldSelector([...fields.requirements, { field: 'metadata.name', operator: '=', value: name }]);
  return new Selection(labels, fields);
}
