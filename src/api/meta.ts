// The shapes every stored object shares. Kinds use kubernetes-types for their own fields.
import type { ObjectMeta as ReadonlyObjectMeta, Status, StatusCause } from 'kubernetes-types/meta/v1.js';

export type { Status, StatusCause };

/** Removes kubernetes-types' readonly marks: the server is the one that sets those fields. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export type ObjectMeta = Mutable<ReadonlyObjectMeta>;

/** Any API object: typed access to metadata, the rest left open. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** A KubeObject whose metadata is present (as every object read from storage is). */
export interface StoredObject extends KubeObject {
  metadata: ObjectMeta;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}
