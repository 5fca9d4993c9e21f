// Upstream's ListOptions validation for list and watch requests: the combinations of
// resourceVersion, resourceVersionMatch and sendInitialEvents that make sense, else 422 Invalid.
import { forbidden, notSupported, Path, type FieldError } from '../../api/field.js';
import { invalid } from '../../api/errors.js';
import { boolQuery, query, type ResourceRequest } from './context.js';

const matches = ['Exact', 'NotOlderThan'];

export function validateListOptions(r: ResourceRequest, watch: boolean): void {
  const rv = query(r, 'resourceVersion') ?? '';
  const match = query(r, 'resourceVersionMatch') ?? '';
  const sendInitialEvents = query(r, 'sendInitialEvents');
  const errs: FieldError[] = [];
  const matchPath = Path.root('resourceVersionMatch');
  if (sendInitialEvents !== undefined) {
    if (!watch) errs.push(forbidden(Path.root('sendInitialEvents'), 'sendInitialEvents is forbidden for list'));
    else {
      if (match !== 'NotOlderThan') errs.push(forbidden(matchPath, 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
      if (!boolQuery(r, 'allowWatchBookmarks')) errs.push(forbidden(Path.root('allowWatchBookmarks'), 'sendInitialEvents requires setting allowWatchBookmarks to true'));
    }
  } else if (match !== '') {
    if (watch) errs.push(forbidden(matchPath, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    else if (!matches.includes(match)) errs.push(notSupported(matchPath, match, matches));
    else if (rv === '') errs.push(forbidden(matchPath, 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    else if (match === 'Exact' && rv === '0') errs.push(forbidden(matchPath, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (errs.length) throw invalid('ListOptions', 'meta.k8s.io', '', errs);
}
