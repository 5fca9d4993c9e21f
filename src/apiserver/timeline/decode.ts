// Decoding a PodTimelineStepBatch from a request body: every value is read through own keys and
// copied into fresh objects field by field, sizes are bounded, step names come from the vocabulary
// and times must be MicroTimes; anything else is a 422 naming the field. A step that is already
// exactly what the copy would be (keepsAsSent) is kept as parsed.
import { invalid as invalidObject } from '../../api/errors.js';
import { invalid, notSupported, required, tooLong, tooMany, typeInvalid, Path, type FieldError } from '../../api/field.js';
import { microTime } from '../../api/time.js';
import {
  maxBatchRecords,
  maxBatchSteps,
  timelineGroup,
  timelineSteps,
  type SchedulingAttemptSummary,
  type TimelinePodRef,
  type TimelineStep,
  type TimelineStepName,
} from '../../api/timeline/types.js';
import { getOwn, setOwn } from '../../util/own.js';

const maxString = 4096;
const maxName = 253;
const maxAttributes = 64;
/** More than this and the answer lists no more: the first errors say what is wrong. */
const maxErrors = 20;

const stepNames: ReadonlySet<string> = new Set(timelineSteps);
const containerTypes = ['init', 'regular', 'ephemeral'];
const results = ['Scheduled', 'Unschedulable', 'Error'];

export interface DecodedRecord {
  pod: TimelinePodRef;
  steps: TimelineStep[];
}

class Errors {
  readonly list: FieldError[] = [];
  add(e: FieldError): void {
    if (this.list.length < maxErrors) this.list.push(e);
  }
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A bad value as the error shows it: an object or a list (of any depth: the body is not scanned) is not printed. */
const shown = (v: unknown): unknown => (typeof v === 'object' && v !== null ? '' : v);

/** RFC 3339 with an optional fraction and offset, as metav1.MicroTime parses it. */
const rfc3339Pattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const microTimeUTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A MicroTime in its one wire form (six digits, UTC), so stored steps sort as strings. */
function time(v: unknown, p: Path, errs: Errors, need: boolean): string | undefined {
  if (isWireTime(v)) return v;
  if (v === undefined || v === null) {
    if (need) errs.add(required(p));
    return undefined;
  }
  if (typeof v !== 'string' || !rfc3339Pattern.test(v) || Number.isNaN(Date.parse(v))) {
    errs.add(invalid(p, typeof v === 'string' ? v : shown(v), 'must be an RFC 3339 time with microseconds, e.g. 2026-01-01T00:00:00.000000Z'));
    return undefined;
  }
  return microTime(Date.parse(v));
}

const isWireTime = (v: unknown): v is string => typeof v === 'string' && microTimeUTC.test(v) && !Number.isNaN(Date.parse(v));

function str(v: unknown, p: Path, errs: Errors, max: number, need = false): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (need) errs.add(required(p));
    return undefined;
  }
  if (typeof v !== 'string') {
    errs.add(typeInvalid(p, shown(v), 'must be a string'));
    return undefined;
  }
  if (v.length > max) {
    errs.add(tooLong(p, '', max));
    return undefined;
  }
  return v;
}

function int(v: unknown, p: Path, errs: Errors, min = 0): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    errs.add(invalid(p, shown(v), `must be an integer of at least ${min}`));
    return undefined;
  }
  return v;
}

function list(v: unknown, p: Path, errs: Errors, max: number): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    errs.add(typeInvalid(p, '', 'must be a list'));
    return [];
  }
  if (v.length > max) {
    errs.add(tooMany(p, v.length, max));
    return [];
  }
  return v;
}

/** A map of string keys to numbers (plugin scores, reasons' counts). */
function numberMap(v: unknown, p: Path, errs: Errors): Record<string, number> {
  const out: Record<string, number> = {};
  if (v === undefined || v === null) return out;
  if (!isObject(v)) {
    errs.add(typeInvalid(p, '', 'must be an object'));
    return out;
  }
  const keys = Object.keys(v);
  if (keys.length > maxAttributes) errs.add(tooMany(p, keys.length, maxAttributes));
  for (const k of keys.slice(0, maxAttributes)) {
    const n = getOwn(v, k);
    if (k.length > maxName) errs.add(tooLong(p.key(k.slice(0, 16)), '', maxName));
    else if (typeof n !== 'number' || !Number.isFinite(n)) errs.add(invalid(p.key(k), shown(n), 'must be a number'));
    else setOwn(out, k, n);
  }
  return out;
}

function attributes(v: unknown, p: Path, errs: Errors): Record<string, string | number | boolean> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    errs.add(typeInvalid(p, '', 'must be an object'));
    return undefined;
  }
  const keys = Object.keys(v);
  if (keys.length > maxAttributes) {
    errs.add(tooMany(p, keys.length, maxAttributes));
    return undefined;
  }
  const out: Record<string, string | number | boolean> = {};
  for (const k of keys) {
    const a = getOwn(v, k);
    if (k.length > maxName) errs.add(tooLong(p.key(k.slice(0, 16)), '', maxName));
    else if (typeof a === 'string' && a.length > maxString) errs.add(tooLong(p.key(k), '', maxString));
    else if (typeof a === 'string' || typeof a === 'boolean' || (typeof a === 'number' && Number.isFinite(a))) setOwn(out, k, a);
    else errs.add(typeInvalid(p.key(k), shown(a), 'must be a string, a number or a boolean'));
  }
  return out;
}

function scheduling(v: unknown, p: Path, errs: Errors): SchedulingAttemptSummary | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    errs.add(typeInvalid(p, '', 'must be an object'));
    return undefined;
  }
  const result = getOwn(v, 'result');
  if (typeof result !== 'string' || !results.includes(result)) errs.add(notSupported(p.child('result'), shown(result), results));
  const out: SchedulingAttemptSummary = {
    result: result as SchedulingAttemptSummary['result'],
    nodes: int(getOwn(v, 'nodes'), p.child('nodes'), errs) ?? 0,
    feasible: int(getOwn(v, 'feasible'), p.child('feasible'), errs) ?? 0,
    plugins: list(getOwn(v, 'plugins'), p.child('plugins'), errs, 100).map((e, i) => {
      const q = p.child('plugins').index(i);
      const o = isObject(e) ? e : {};
      return {
        plugin: str(getOwn(o, 'plugin'), q.child('plugin'), errs, maxName, true) ?? '',
        rejected: int(getOwn(o, 'rejected'), q.child('rejected'), errs) ?? 0,
        reasons: numberMap(getOwn(o, 'reasons'), q.child('reasons'), errs),
      };
    }),
  };
  const rejected = getOwn(v, 'rejectedNodes');
  if (rejected !== undefined) {
    out.rejectedNodes = list(rejected, p.child('rejectedNodes'), errs, 20).map((e, i) => {
      const q = p.child('rejectedNodes').index(i);
      const o = isObject(e) ? e : {};
      return {
        node: str(getOwn(o, 'node'), q.child('node'), errs, maxName, true) ?? '',
        plugin: str(getOwn(o, 'plugin'), q.child('plugin'), errs, maxName) ?? '',
        reason: str(getOwn(o, 'reason'), q.child('reason'), errs, maxString) ?? '',
      };
    });
  }
  const top = getOwn(v, 'topScores');
  if (top !== undefined) {
    out.topScores = list(top, p.child('topScores'), errs, 5).map((e, i) => {
      const q = p.child('topScores').index(i);
      const o = isObject(e) ? e : {};
      const total = getOwn(o, 'total');
      if (typeof total !== 'number' || !Number.isFinite(total)) errs.add(invalid(q.child('total'), shown(total), 'must be a number'));
      return { node: str(getOwn(o, 'node'), q.child('node'), errs, maxName, true) ?? '', total: Number(total) || 0, plugins: numberMap(getOwn(o, 'plugins'), q.child('plugins'), errs) };
    });
  }
  const node = str(getOwn(v, 'node'), p.child('node'), errs, maxName);
  if (node) out.node = node;
  const message = str(getOwn(v, 'message'), p.child('message'), errs, maxString);
  if (message) out.message = message;
  return out;
}

function step(v: unknown, p: Path, errs: Errors): TimelineStep | undefined {
  if (!isObject(v)) {
    errs.add(typeInvalid(p, '', 'must be an object'));
    return undefined;
  }
  const name = getOwn(v, 'step');
  if (typeof name !== 'string' || !stepNames.has(name)) {
    errs.add(notSupported(p.child('step'), shown(name), [...timelineSteps]));
    return undefined;
  }
  const out: TimelineStep = {
    step: name as TimelineStepName,
    component: str(getOwn(v, 'component'), p.child('component'), errs, maxName, true) ?? '',
    start: time(getOwn(v, 'start'), p.child('start'), errs, true) ?? '',
  };
  const end = time(getOwn(v, 'end'), p.child('end'), errs, false);
  if (end) out.end = end;
  const container = str(getOwn(v, 'container'), p.child('container'), errs, maxName);
  if (container) out.container = container;
  const containerType = getOwn(v, 'containerType');
  if (containerType !== undefined) {
    if (typeof containerType === 'string' && containerTypes.includes(containerType)) out.containerType = containerType as TimelineStep['containerType'];
    else errs.add(notSupported(p.child('containerType'), shown(containerType), containerTypes));
  }
  const detail = str(getOwn(v, 'detail'), p.child('detail'), errs, maxString);
  if (detail) out.detail = detail;
  const attrs = attributes(getOwn(v, 'attributes'), p.child('attributes'), errs);
  if (attrs) out.attributes = attrs;
  const count = int(getOwn(v, 'count'), p.child('count'), errs, 1);
  if (count !== undefined) out.count = count;
  const lastTime = time(getOwn(v, 'lastTime'), p.child('lastTime'), errs, false);
  if (lastTime) out.lastTime = lastTime;
  const summary = scheduling(getOwn(v, 'scheduling'), p.child('scheduling'), errs);
  if (summary) out.scheduling = summary;
  return out;
}

const stepFields: ReadonlySet<string> = new Set(['step', 'component', 'start', 'end', 'container', 'containerType', 'detail', 'attributes', 'count', 'lastTime']);
const isPlain = (v: unknown): v is Record<string, unknown> => isObject(v) && Object.getPrototypeOf(v) === Object.prototype;
const isText = (v: unknown, max: number) => typeof v === 'string' && v !== '' && v.length <= max;

/** Attributes the copying decoder would keep as they are: bounded, scalar values (a parsed `__proto__` is an own key, as the copy's setOwn makes it). */
function keepsAttributes(v: unknown): boolean {
  if (!isPlain(v)) return false;
  const keys = Object.keys(v);
  if (keys.length > maxAttributes) return false;
  for (const k of keys) {
    if (k.length > maxName) return false;
    const a = getOwn(v, k);
    if (typeof a === 'string' ? a.length > maxString : typeof a !== 'boolean' && !(typeof a === 'number' && Number.isFinite(a))) return false;
  }
  return true;
}

/**
 * Whether a parsed step is already what the copying decoder would make of it (only known fields,
 * every value valid and in its wire form, no scheduling summary, nothing empty or null): such a
 * step, what every recorder sends, is kept as parsed instead of copied field by field.
 */
function keepsAsSent(v: unknown): v is TimelineStep {
  if (!isPlain(v)) return false;
  for (const k of Object.keys(v)) if (!stepFields.has(k)) return false;
  const name = getOwn(v, 'step');
  const end = getOwn(v, 'end');
  const lastTime = getOwn(v, 'lastTime');
  const container = getOwn(v, 'container');
  const containerType = getOwn(v, 'containerType');
  const detail = getOwn(v, 'detail');
  const attrs = getOwn(v, 'attributes');
  const count = getOwn(v, 'count');
  return (
    typeof name === 'string' &&
    stepNames.has(name) &&
    isText(getOwn(v, 'component'), maxName) &&
    isWireTime(getOwn(v, 'start')) &&
    (end === undefined || isWireTime(end)) &&
    (lastTime === undefined || isWireTime(lastTime)) &&
    (container === undefined || isText(container, maxName)) &&
    (containerType === undefined || (typeof containerType === 'string' && containerTypes.includes(containerType))) &&
    (detail === undefined || isText(detail, maxString)) &&
    (attrs === undefined || keepsAttributes(attrs)) &&
    (count === undefined || (typeof count === 'number' && Number.isSafeInteger(count) && count >= 1))
  );
}

/**
 * The batch's records; throws 422 Invalid (PodTimelineStepBatch) on the first errors found. With
 * `keep` (the default) a step already in wire form is kept as parsed; without, every step is copied
 * (the reference the kept ones are tested against).
 */
export function decodeStepBatch(obj: Record<string, unknown>, keep = true): DecodedRecord[] {
  const errs = new Errors();
  const records = list(getOwn(obj, 'records'), Path.root('records'), errs, maxBatchRecords);
  let total = 0;
  for (const r of records) {
    const steps = isObject(r) ? getOwn(r, 'steps') : undefined;
    if (Array.isArray(steps)) total += steps.length;
  }
  if (total > maxBatchSteps) errs.add(tooMany(Path.root('records').child('steps'), total, maxBatchSteps));
  const out: DecodedRecord[] = [];
  if (errs.list.length === 0) {
    records.forEach((r, i) => {
      const p = Path.root('records').index(i);
      if (!isObject(r)) return errs.add(typeInvalid(p, '', 'must be an object'));
      const podValue = getOwn(r, 'pod');
      const pp = p.child('pod');
      const pod = isObject(podValue) ? podValue : {};
      if (!isObject(podValue)) errs.add(required(pp));
      const ref: TimelinePodRef = {
        namespace: str(getOwn(pod, 'namespace'), pp.child('namespace'), errs, maxName, true) ?? '',
        name: str(getOwn(pod, 'name'), pp.child('name'), errs, maxName, true) ?? '',
        uid: str(getOwn(pod, 'uid'), pp.child('uid'), errs, 128, true) ?? '',
      };
      const steps: TimelineStep[] = [];
      list(getOwn(r, 'steps'), p.child('steps'), errs, maxBatchSteps).forEach((s, j) => {
        const decoded = keep && keepsAsSent(s) ? s : step(s, p.child('steps').index(j), errs);
        if (decoded) steps.push(decoded);
      });
      out.push({ pod: ref, steps });
    });
  }
  if (errs.list.length) throw invalidObject('PodTimelineStepBatch', timelineGroup, '', errs.list);
  return out;
}
