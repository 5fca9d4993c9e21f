// The admission contract: mutating plugins run first in order, then validating ones.
// A plugin refuses a request by throwing a StatusError (usually Forbidden or Invalid).
import type { KubeObject } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import type { UserInfo } from '../authn/user.js';

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

/** Reads the plugins need, served from the API server's own caches (no HTTP round trip). */
export interface AdmissionLookups {
  getNamespace(name: string): Promise<KubeObject | undefined>;
  getPriorityClass(name: string): Promise<KubeObject | undefined>;
  listPriorityClasses(): Promise<KubeObject[]>;
}
