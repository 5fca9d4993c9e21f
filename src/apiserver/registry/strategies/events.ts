// Events: core/v1 and events.k8s.io/v1 are two views of one stored kind (core form in storage).
// Field selectors use the core field names for both, as upstream's field label conversion does.
import { findResource } from '../../../api/resources.js';
import type { KubeObject, StoredObject } from '../../../api/meta.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy, metadataFields } from './generic.js';

const storagePrefix = '/registry/events/';

/** core field name → events.k8s.io field name; the rest are the same in both. */
const renamed: [string, string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];

function rename(obj: KubeObject, pairs: [string, string][], apiVersion: string): StoredObject {
  const out: KubeObject = { ...obj, apiVersion, kind: 'Event' };
  for (const [from, to] of pairs) {
    delete out[from];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  return out as StoredObject;
}

export function coreEventFromEventsV1(obj: KubeObject): KubeObject {
  return rename(obj, renamed.map(([a, b]) => [b, a]), 'v1');
}

export function eventsV1FromCore(obj: StoredObject): StoredObject {
  return rename(obj, renamed, 'events.k8s.io/v1');
}

function coreFields(core: KubeObject, meta: Record<string, string>): Record<string, string> {
  const involved = (core.involvedObject ?? {}) as Record<string, string | undefined>;
  const source = (core.source ?? {}) as { component?: string };
  return {
    ...meta,
    'involvedObject.kind': involved.kind ?? '',
    'involvedObject.namespace': involved.namespace ?? '',
    'involvedObject.name': involved.name ?? '',
    'involvedObject.uid': involved.uid ?? '',
    'involvedObject.apiVersion': involved.apiVersion ?? '',
    'involvedObject.resourceVersion': involved.resourceVersion ?? '',
    'involvedObject.fieldPath': involved.fieldPath ?? '',
    reason: String(core.reason ?? ''),
    reportingComponent: String(core.reportingComponent ?? ''),
    source: source.component ?? '',
    type: String(core.type ?? ''),
  };
}

export function coreEventStrategy(): ResourceStrategy {
  return genericStrategy(findResource('', 'v1', 'events')!, {
    storagePrefix,
    allowCreateOnUpdate: true,
    selectableFields: (obj) => coreFields(obj, metadataFields(obj)),
  });
}

export function eventsV1Strategy(): ResourceStrategy {
  return genericStrategy(findResource('events.k8s.io', 'v1', 'events')!, {
    storagePrefix,
    allowCreateOnUpdate: true,
    toServed: eventsV1FromCore,
    toStored: coreEventFromEventsV1,
    selectableFields: (obj) => coreFields(coreEventFromEventsV1(obj), metadataFields(obj)),
  });
}
