// What a per-kind printer is: column definitions plus a function from one object to its cells.
// Column names, types, formats, priorities and descriptions follow upstream's
// pkg/printers/internalversion; descriptions are the API field docs the columns show.
import type { StoredObject } from '../../api/meta.js';
import { humanDurationSince } from '../../api/duration.js';
import { labelSelectorAsSelector, selectorFromSet } from '../../api/labels.js';
import type { Container } from '../../api/types.js';

export interface TableColumnDefinition {
  name: string;
  /** OpenAPI type of the cells: string, integer, number, boolean, date. */
  type: string;
  /** 'name' marks the column kubectl treats as the object's name. */
  format: string;
  description: string;
  /** kubectl shows priority > 0 columns only with -o wide. */
  priority: number;
}

export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface PrintedRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
}

export interface Printer {
  columns: readonly TableColumnDefinition[];
  /** Always every column's cell, the wide ones included: kubectl hides what it does not show. */
  print(obj: StoredObject, now: number): PrintedRow;
}

/** A printer for one kind, typed by that kind (stored objects of it are cast once, here). */
export function printer<T>(columns: readonly TableColumnDefinition[], print: (obj: T & StoredObject, now: number) => PrintedRow): Printer {
  return { columns, print: (obj, now) => print(obj as T & StoredObject, now) };
}

export function column(name: string, type: string, description: string, opts: { priority?: number; format?: string } = {}): TableColumnDefinition {
  return { name, type, format: opts.format ?? '', description, priority: opts.priority ?? 0 };
}

/** Priority-1 column (-o wide). */
export const wide = (name: string, type: string, description: string) => column(name, type, description, { priority: 1 });

const nameDoc =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const creationTimestampDoc =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export const nameColumn = column('Name', 'string', nameDoc, { format: 'name' });
export const ageColumn = column('Age', 'string', creationTimestampDoc);
export const containersColumn = wide('Containers', 'string', 'Names of each container in the template.');
export const imagesColumn = wide('Images', 'string', 'Images referenced by each container in the template.');

/** The AGE cell: time since creation, "<unknown>" without a creationTimestamp. */
export const age = (obj: StoredObject, now: number): string => humanDurationSince(obj.metadata.creationTimestamp, now);

/** labels.FormatLabels: "a=1,b=2" sorted by key, "<none>" when empty. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  return selectorFromSet(labels).toString() || '<none>';
}

/** metav1.FormatLabelSelector: "<none>" for no selector or an empty one, "<error>" for an invalid one. */
export function formatLabelSelector(selector: Parameters<typeof labelSelectorAsSelector>[0]): string {
  try {
    return labelSelectorAsSelector(selector).toString() || '<none>';
  } catch {
    return '<error>';
  }
}

/** The CONTAINERS and IMAGES cells of a pod template: names and images, comma-separated. */
export function containerCells(containers: readonly Container[] | undefined): [names: string, images: string] {
  const list = containers ?? [];
  return [list.map((c) => c.name).join(','), list.map((c) => c.image ?? '').join(',')];
}

/** The trailing columns of a pod template's owner: AGE, then -o wide CONTAINERS, IMAGES and SELECTOR (`selectorDoc` its field doc). */
export const templateColumns = (selectorDoc: string): TableColumnDefinition[] => [ageColumn, containersColumn, imagesColumn, wide('Selector', 'string', selectorDoc)];

/** The cells of templateColumns; `selector` already formatted (upstream formats label selectors and RC's map selectors differently). */
export const templateCells = (obj: StoredObject, now: number, containers: readonly Container[] | undefined, selector: string): unknown[] => [
  age(obj, now),
  ...containerCells(containers),
  selector,
];

/** The first three items, then " + N more..." with N counted over all; `empty` when there are none. */
export function listWithMore(items: readonly string[], empty: string): string {
  if (items.length > 3) return `${items.slice(0, 3).join(',')} + ${items.length - 3} more...`;
  return items.join(',') || empty;
}
