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

/** A set of field paths, as a tree: `members` are paths ending here, `children` continue below. */
export class FieldSet {
  readonly members = new Set<PathElement>();
  readonly children = new Map<PathElement, FieldSet>();

  static of(paths: Iterable<FieldPath>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Parses FieldsV1 JSON; throws on a malformed document. */
  static fromFieldsV1(v: unknown): FieldSet {
    if (!isObject(v)) throw new Error('FieldsV1 must be a JSON object');
    const s = new FieldSet();
    for (const [pe, sub] of Object.entries(v)) {
      if (pe === '.') continue;
      if (!/^[fkvi]:/.test(pe) || !isObject(sub)) throw new Error(`invalid FieldsV1 element ${JSON.stringify(pe)}`);
      const keys = Object.keys(sub);
      if (keys.length === 0 || keys.includes('.')) s.members.add(pe);
      if (keys.some((k) => k !== '.')) s.children.set(pe, FieldSet.fromFieldsV1(sub));
    }
    return s;
  }

  /** FieldsV1 JSON: a leaf is `{}`; a member that also has children is marked with `".": {}`. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    const elements = [...new Set([...this.members, ...this.children.keys()])].sort(comparePathElements);
    for (const pe of elements) {
      const child = this.children.get(pe);
      if (!child) {
        out[pe] = {};
        continue;
      }
      out[pe] = this.members.has(pe) ? { '.': {}, ...child.toFieldsV1() } : child.toFieldsV1();
    }
    return out;
  }

  insert(path: FieldPath): void {
    if (path.length === 0) return;
    const [head, ...rest] = path as [PathElement, ...PathElement[]];
    if (rest.length === 0) {
      this.members.add(head);
      return;
    }
    let c = this.children.get(head);
    if (!c) this.children.set(head, (c = new FieldSet()));
    c.insert(rest);
  }

  has(path: FieldPath): boolean {
    const [head, ...rest] = path;
    if (head === undefined) return false;
    return rest.length === 0 ? this.members.has(head) : !!this.children.get(head)?.has(rest);
  }

  isEmpty(): boolean {
    return this.members.size === 0 && [...this.children.values()].every((c) => c.isEmpty());
  }

  union(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of [...this.members, ...o.members]) out.members.add(m);
    for (const pe of new Set([...this.children.keys(), ...o.children.keys()])) {
      const a = this.children.get(pe);
      const b = o.children.get(pe);
      out.children.set(pe, a && b ? a.union(b) : (a ?? b)!.union(new FieldSet()));
    }
    return out;
  }

  /** Paths of this set not in `o` (exact paths only; descendants of o's members stay). */
  difference(o: FieldSet): FieldSet {
    return this.combine((pe) => !o.members.has(pe), (pe, c) => {
      const oc = o.children.get(pe);
      return oc ? c.difference(oc) : c;
    });
  }

  /** Like difference, but also drops everything below a member of `o`. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.combine((pe) => !o.members.has(pe), (pe, c) => {
      if (o.members.has(pe)) return undefined;
      const oc = o.children.get(pe);
      return oc ? c.recursiveDifference(oc) : c;
    });
  }

  intersection(o: FieldSet): FieldSet {
    return this.combine((pe) => o.members.has(pe), (pe, c) => {
      const oc = o.children.get(pe);
      return oc ? c.intersection(oc) : undefined;
    });
  }

  private combine(keepMember: (pe: PathElement) => boolean, child: (pe: PathElement, c: FieldSet) => FieldSet | undefined): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (keepMember(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const r = child(pe, c);
      if (r && !r.isEmpty()) out.children.set(pe, r === c ? c.union(new FieldSet()) : r);
    }
    return out;
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

export function managerKey(m: Pick<ManagerFields, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([m.manager, m.operation, m.operation === 'Apply' ? '' : m.apiVersion, m.subresource ?? '']);
}

/** Decodes metadata.managedFields; throws on entries upstream would refuse to decode. */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): Managers {
  const out: Managers = new Map();
  for (const e of entries ?? []) {
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error(`unsupported operation ${JSON.stringify(e.operation)}`);
    if (e.fieldsType !== 'FieldsV1') throw new Error(`unsupported FieldsV1 version: ${JSON.stringify(e.fieldsType)}`);
    const m: ManagerFields = {
      manager: e.manager ?? '',
      operation: e.operation,
      apiVersion: e.apiVersion ?? '',
      set: FieldSet.fromFieldsV1(e.fieldsV1 ?? {}),
    };
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
  const seconds = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...managers.values()]
    .filter((m) => !m.set.isEmpty())
    .sort(
      (p, q) =>
        cmp(p.operation, q.operation) ||
        seconds(p.time) - seconds(q.time) ||
        cmp(p.manager, q.manager) ||
        cmp(p.apiVersion, q.apiVersion) ||
        cmp(p.subresource ?? '', q.subresource ?? ''),
    )
    .map((m) => {
      const e: ManagedFieldsEntry = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion };
      if (m.time) e.time = m.time;
      e.fieldsType = 'FieldsV1';
      e.fieldsV1 = m.set.toFieldsV1();
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
