// Field ownership as structured-merge-diff records it: sets of field paths in the FieldsV1 form that
// metadata.managedFields stores, one set per manager, and the conflict error an apply reports.
import type { ManagedFieldsEntry } from 'kubernetes-types/meta/v1.js';
import { StatusError } from '../errors.js';
import { isObject, type JsonObject } from './json.js';

/**
 * A path element in its FieldsV1 spelling: `f:<field>`, `k:<json of the key fields>` (list-map item),
 * `v:<json value>` (set item) or `i:<index>`. The spelling doubles as the element's identity.
 */
export type PathElement = string;
export type FieldPath = readonly PathElement[];

const typeRank: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

// Upstream orders elements by kind (field, key, value, index), then by content.
function comparePathElements(a: PathElement, b: PathElement): number {
  const ra = typeRank[a[0]!] ?? 4;
  const rb = typeRank[b[0]!] ?? 4;
  if (ra !== rb) return ra - rb;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

const isEmptyObject = (v: unknown) => isObject(v) && Object.keys(v).length === 0;

/**
 * Decodes FieldsV1, noting whether the JSON is exactly what toFieldsV1 writes for the set (elements in
 * order, `"."` only leading a member's children), so that it can stand for the set's encoding.
 */
function decodeFieldsV1(v: unknown, top: boolean): { set: FieldSet; canonical: boolean } {
  if (!isObject(v)) throw new Error('FieldsV1 must be a JSON object');
  return decodeFieldsV1Keys(v, Object.keys(v), top);
}

const isPathElement = (pe: string) => pe[1] === ':' && (pe[0] === 'f' || pe[0] === 'k' || pe[0] === 'v' || pe[0] === 'i');

function decodeFieldsV1Keys(v: JsonObject, elements: readonly string[], top: boolean): { set: FieldSet; canonical: boolean } {
  const set = new FieldSet();
  let canonical = true;
  let prev: PathElement | undefined;
  for (const pe of elements) {
    if (pe === '.') {
      if (top) canonical = false;
      continue;
    }
    const sub = v[pe];
    if (!isPathElement(pe) || !isObject(sub)) throw new Error(`invalid FieldsV1 element ${JSON.stringify(pe)}`);
    if (prev !== undefined && !(comparePathElements(prev, pe) < 0)) canonical = false;
    prev = pe;
    const keys = Object.keys(sub);
    const dot = keys.indexOf('.');
    if (keys.length === 0 || dot >= 0) set.members.add(pe);
    if (keys.length > (dot >= 0 ? 1 : 0)) {
      const child = decodeFieldsV1Keys(sub, keys, false);
      set.children.set(pe, child.set);
      if (!child.canonical) canonical = false;
    }
    if (dot >= 0 && (dot !== 0 || keys.length === 1 || !isEmptyObject(sub['.']))) canonical = false;
  }
  return { set, canonical };
}

/**
 * A set of field paths, as a tree: `members` are paths ending here, `children` continue below.
 * Immutable once built: only the code constructing a set adds to it, so the set operations may return
 * an operand or share its unchanged subtrees (and their `members`/`children`) instead of copying them.
 */
export class FieldSet {
  constructor(
    readonly members = new Set<PathElement>(),
    readonly children = new Map<PathElement, FieldSet>(),
  ) {}

  static of(paths: Iterable<FieldPath>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Parses FieldsV1 JSON; throws on a malformed document. */
  static fromFieldsV1(v: unknown): FieldSet {
    return decodeFieldsV1(v, true).set;
  }

  /** FieldsV1 JSON: a leaf is `{}`; a member that also has children is marked with `".": {}`. */
  toFieldsV1(): JsonObject {
    return this.writeFieldsV1({});
  }

  private writeFieldsV1(out: JsonObject): JsonObject {
    const elements = [...this.members];
    for (const pe of this.children.keys()) if (!this.members.has(pe)) elements.push(pe);
    elements.sort(comparePathElements);
    for (const pe of elements) {
      const child = this.children.get(pe);
      out[pe] = child ? child.writeFieldsV1(this.members.has(pe) ? { '.': {} } : {}) : {};
    }
    return out;
  }

  /** Adds a path; only while building the set (see the class comment). */
  insert(path: FieldPath): void {
    if (path.length === 0) return;
    let { children, members } = this as FieldSet;
    const last = path.length - 1;
    for (let i = 0; i < last; i++) {
      const pe = path[i]!;
      let c = children.get(pe);
      if (!c) children.set(pe, (c = new FieldSet()));
      ({ children, members } = c);
    }
    members.add(path[last]!);
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let { children, members } = this as FieldSet;
    const last = path.length - 1;
    for (let i = 0; i < last; i++) {
      const c = children.get(path[i]!);
      if (!c) return false;
      ({ children, members } = c);
    }
    return members.has(path[last]!);
  }

  /** Whether both sets hold the same paths. */
  equals(o: FieldSet): boolean {
    if (o === this) return true;
    if (this.members.size !== o.members.size || this.children.size !== o.children.size) return false;
    for (const m of this.members) if (!o.members.has(m)) return false;
    for (const [pe, c] of this.children) {
      const oc = o.children.get(pe);
      if (!oc || !c.equals(oc)) return false;
    }
    return true;
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }

  union(o: FieldSet): FieldSet {
    if (o === this || o.isEmpty()) return this;
    if (this.isEmpty()) return o;
    let members = this.members;
    for (const m of o.members) {
      if (members.has(m)) continue;
      if (members === this.members) members = new Set(members);
      members.add(m);
    }
    let children = this.children;
    for (const [pe, b] of o.children) {
      const a = this.children.get(pe);
      const r = a ? a.union(b) : b;
      if (r === a) continue;
      if (children === this.children) children = new Map(children);
      children.set(pe, r);
    }
    return members === this.members && children === this.children ? this : new FieldSet(members, children);
  }

  /** Paths of this set not in `o` (exact paths only; descendants of o's members stay). */
  difference(o: FieldSet): FieldSet {
    if (this.isEmpty() || o.isEmpty()) return this;
    return this.combine((pe) => !o.members.has(pe), (pe, c) => {
      const oc = o.children.get(pe);
      return oc ? c.difference(oc) : c;
    });
  }

  /** Like difference, but also drops everything below a member of `o`. */
  recursiveDifference(o: FieldSet): FieldSet {
    if (this.isEmpty() || o.isEmpty()) return this;
    return this.combine((pe) => !o.members.has(pe), (pe, c) => {
      if (o.members.has(pe)) return undefined;
      const oc = o.children.get(pe);
      return oc ? c.recursiveDifference(oc) : c;
    });
  }

  intersection(o: FieldSet): FieldSet {
    if (this.isEmpty()) return this;
    if (o.isEmpty()) return o;
    return this.combine((pe) => o.members.has(pe), (pe, c) => {
      const oc = o.children.get(pe);
      return oc ? c.intersection(oc) : undefined;
    });
  }

  /** The members `keepMember` keeps and the non-empty results of `child`; `this` when that is everything. */
  private combine(keepMember: (pe: PathElement) => boolean, child: (pe: PathElement, c: FieldSet) => FieldSet | undefined): FieldSet {
    let members = this.members;
    for (const m of this.members) {
      if (keepMember(m)) continue;
      if (members === this.members) members = new Set(members);
      members.delete(m);
    }
    let children = this.children;
    for (const [pe, c] of this.children) {
      let r = child(pe, c);
      if (r?.isEmpty()) r = undefined;
      if (r === c) continue;
      if (children === this.children) children = new Map(children);
      if (r) children.set(pe, r);
      else children.delete(pe);
    }
    return members === this.members && children === this.children ? this : new FieldSet(members, children);
  }

  /** Every path, in upstream's iteration order: this level's members, then each child's paths. */
  paths(prefix: FieldPath = []): PathElement[][] {
    const out: PathElement[][] = [...this.members].sort(comparePathElements).map((m) => [...prefix, m]);
    for (const pe of [...this.children.keys()].sort(comparePathElements)) out.push(...this.children.get(pe)!.paths([...prefix, pe]));
    return out;
  }
}

/** A path as upstream prints it in conflicts: `.spec.containers[name="nginx"].image`. */
export function pathString(path: FieldPath): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const key = JSON.parse(body) as JsonObject;
          return `[${Object.entries(key).map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
        }
        case 'v':
          return `[=${valueString(JSON.parse(body))}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}

function valueString(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (isObject(v)) return `{${Object.entries(v).map(([k, x]) => `${k}=${valueString(x)}`).join(',')}}`;
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

export type Operation = 'Apply' | 'Update';

/** One manager's entry with its field set decoded. */
export interface ManagerFields {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

/** Managers keyed by identity: appliers by (manager, subresource), updaters also by apiVersion, as upstream. */
export type Managers = Map<string, ManagerFields>;

/** Orders entry times by whole seconds, as upstream compares its second-precision metav1.Time. */
export function compareTimes(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  const seconds = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  return seconds(a) - seconds(b);
}

export function managerKey(m: Pick<ManagerFields, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([m.manager, m.operation, m.operation === 'Apply' ? '' : m.apiVersion, m.subresource ?? '']);
}

/**
 * Decoded sets whose FieldsV1 JSON is already what toFieldsV1 would write: a manager whose set a write
 * leaves alone keeps its entry's JSON instead of encoding it again (sets are immutable, so identity suffices).
 */
const encodedFieldsV1 = new WeakMap<FieldSet, JsonObject>();

/** Decodes metadata.managedFields; throws on entries upstream would refuse to decode. */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): Managers {
  const out: Managers = new Map();
  for (const e of entries ?? []) {
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error(`unsupported operation ${JSON.stringify(e.operation)}`);
    if (e.fieldsType !== 'FieldsV1') throw new Error(`unsupported FieldsV1 version: ${JSON.stringify(e.fieldsType)}`);
    const { set, canonical } = decodeFieldsV1(e.fieldsV1 ?? {}, true);
    if (canonical) encodedFieldsV1.set(set, e.fieldsV1 as JsonObject);
    const m: ManagerFields = { manager: e.manager ?? '', operation: e.operation, apiVersion: e.apiVersion ?? '', set };
    if (e.subresource) m.subresource = e.subresource;
    if (e.time) m.time = e.time;
    const key = managerKey(m);
    const prev = out.get(key);
    out.set(key, prev ? { ...m, set: prev.set.union(m.set) } : m);
  }
  return out;
}

/** Encodes managers in upstream's order: Apply before Update, then by time, manager, apiVersion, subresource. */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...managers.values()]
    .filter((m) => !m.set.isEmpty())
    .sort(
      (p, q) =>
        cmp(p.operation, q.operation) ||
        compareTimes(p.time, q.time) ||
        cmp(p.manager, q.manager) ||
        cmp(p.apiVersion, q.apiVersion) ||
        cmp(p.subresource ?? '', q.subresource ?? ''),
    )
    .map((m) => {
      const e: ManagedFieldsEntry = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion };
      if (m.time) e.time = m.time;
      e.fieldsType = 'FieldsV1';
      e.fieldsV1 = encodedFieldsV1.get(m.set) ?? m.set.toFieldsV1();
      if (m.subresource) e.subresource = m.subresource;
      return e;
    });
}

/** How upstream names a manager in conflict messages: updaters with the version they wrote. */
export function printManager(m: Pick<ManagerFields, 'manager' | 'operation' | 'apiVersion'>): string {
  const name = JSON.stringify(m.manager);
  return m.operation === 'Update' ? `${name} using ${m.apiVersion}` : name;
}

export interface Conflict {
  manager: ManagerFields;
  path: FieldPath;
}

/** The 409 an apply answers with, worded as upstream (one line for one conflict, grouped by manager otherwise). */
export function conflictError(conflicts: readonly Conflict[]): StatusError {
  const causes = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const name = printManager(c.manager);
      byManager.set(name, [...(byManager.get(name) ?? []), pathString(c.path)]);
    }
    const lines: string[] = [];
    for (const name of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${name}:`, ...byManager.get(name)!.map((p) => `- ${p}`));
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError(409, 'Conflict', message, { causes });
}
