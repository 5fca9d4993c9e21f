// The admission contract: mutating plugins run first in order, then validating ones.
// A plugin refuses a request by throwing a StatusError (usually Forbidden or Invalid).
import type { KubeObject } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import type { UserInfo } from '../authn/user.js';
import type { AddAuditAnnotation } from '../audit/policy.js';
import type { ResourceName, ResourceTypes } from '../../api/kinds.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  resource: ResourceInfo;
  /** '' for the main resource, else 'status', 'binding', ... */
  subresource: string;
  namespace: string;
  name: string;
  /** The incoming object (CREATE/UPDATE); mutating plugins change it in place. */
  object?: KubeObject;
  /** The stored object (UPDATE/DELETE). */
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
  /** Where plugins add warnings for the client (HTTP Warning headers); absent when nobody listens. */
  warnings?: string[];
  /** A pod write's timeline: the chain times each plugin that ran, a mutating one names what it set. */
  timeline?: AdmissionTrace;
  /** Adds an audit annotation (upstream's attributes' AddAnnotation); absent when nobody audits. */
  annotate?: AddAuditAnnotation;
}

export type AdmissionPhase = 'mutating' | 'validating';

/** What admission tells a traced pod write (the API server's PodRequestTrace). */
export interface AdmissionTrace {
  /** A high-resolution mark for timing a plugin. */
  mark(): number;
  /**
   * A mutating plugin set the field at `path` (`spec.tolerations`, `spec.containers[0].volumeMounts`):
   * each plugin names what it sets as it sets it, so a traced write costs no copy or walk of the object.
   */
  mutated(path: string): void;
  /** One plugin ran between two marks; takes the paths it named. */
  admitted(plugin: string, phase: AdmissionPhase, start: number, end: number): void;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Whether the plugin has anything to say about this request. */
  handles(a: AdmissionAttributes): boolean;
}

export interface MutatingAdmissionPlugin extends AdmissionPlugin {
  admit(a: AdmissionAttributes): Promise<void>;
}

export interface ValidatingAdmissionPlugin extends AdmissionPlugin {
  validate(a: AdmissionAttributes): Promise<void>;
}

/**
 * What plugins read, by group and resource (upstream's shared informers' listers): served from the
 * registries' watch caches, with a live read on a miss (etcd's watch can lag a create by a moment).
 */
export interface AdmissionLookups {
  /** One object ('' namespace for cluster-scoped ones), typed by its resource's name; undefined when it does not exist. */
  get<R extends ResourceName>(resource: R, namespace: string, name: string): Promise<ResourceTypes[R] | undefined>;
  /** Every object of the resource, from the cache. */
  list<R extends ResourceName>(resource: R): Promise<ResourceTypes[R][]>;
}
