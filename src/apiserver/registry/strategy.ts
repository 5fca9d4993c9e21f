// What differs between resources: how an object is prepared, validated, deleted and selected.
// The generic Registry does the rest, as upstream's genericregistry.Store does with its strategies.
import type { KubeObject, StoredObject } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import type { FieldError } from '../../api/field.js';
import type { UserInfo } from '../authn/user.js';

export interface StrategyContext {
  now: number;
  /** Who asked for the write (a CSR's requestor fields are set from it). */
  user?: UserInfo;
}

export interface DeleteDecision {
  /** Seconds to wait before the object may go; 0 deletes now (unless finalizers hold it). */
  gracePeriodSeconds: number;
}

/** Resources taken for one write: released (the old ones) on commit, given back (the new ones) on revert. */
export interface Allocation {
  commit(): Promise<void>;
  revert(): Promise<void>;
}

export interface ResourceStrategy {
  readonly info: ResourceInfo;
  /** Key prefix in storage, ending in '/'. Several served resources may share one (events). */
  readonly storagePrefix: string;
  /** Whether spec changes bump metadata.generation. */
  readonly tracksGeneration: boolean;
  /** PUT of a missing object creates it (leases, events, endpoints). */
  readonly allowCreateOnUpdate: boolean;
  /** A PUT without metadata.resourceVersion is accepted as an unconditional update. */
  readonly allowUnconditionalUpdate: boolean;
  /** Whether DELETE answers with the deleted object rather than a Status. */
  readonly returnDeletedObject: boolean;

  /** Server-set fields on create (status reset, derived fields). */
  prepareForCreate(obj: StoredObject, ctx: StrategyContext): void;
  /** Server-set fields on update of the main resource (keeps status where a status subresource exists). */
  prepareForUpdate(obj: StoredObject, old: StoredObject, ctx: StrategyContext): void;
  /** For a subresource that writes the object ('status', 'finalize'): keep everything it may not change. */
  prepareForSubresourceUpdate(subresource: string, obj: StoredObject, old: StoredObject, ctx: StrategyContext): void;

  /**
   * Refuses (throws 403) a valid write its user may not make whatever authorization said: RBAC's
   * escalation prevention, as upstream's policybased storages wrap the store.
   */
  authorizeWrite?(obj: StoredObject, old: StoredObject | undefined, user: UserInfo): Promise<void>;

  validate(obj: StoredObject): FieldError[];
  validateUpdate(obj: StoredObject, old: StoredObject): FieldError[];
  /** Validation of a write through a subresource ('status', 'finalize'). */
  validateSubresourceUpdate(subresource: string, obj: StoredObject, old: StoredObject): FieldError[];

  /** Grace period for a delete request; undefined means not graceful (immediate unless finalized). */
  gracefulDelete?(obj: StoredObject, requested: number | undefined): DeleteDecision | undefined;

  /** Upstream's DefaultGarbageCollectionPolicy when it orphans: a delete that names no policy orphans the dependents (core/v1 ReplicationControllers, batch/v1 Jobs). */
  readonly defaultGarbageCollectionPolicy?: 'Orphan';

  /** Whether something besides metadata.finalizers keeps a deleted object (a namespace's spec.finalizers). */
  holdsDeletion?(obj: StoredObject): boolean;
  /** Changes made when an object is marked for deletion (a namespace turns Terminating). */
  markDeleting?(obj: StoredObject): void;

  /** The field set that field selectors match against (metadata.name and metadata.namespace included). */
  selectableFields(obj: StoredObject): Record<string, string>;

  /**
   * What a create or update takes in other objects (a Service's cluster IPs and node ports), after
   * validation and admission, before the write: the registry commits it once the write is stored and
   * reverts it when the write fails. A dry run checks without taking anything.
   */
  allocate?(obj: StoredObject, old: StoredObject | undefined, dryRun: boolean): Promise<Allocation | undefined>;
  /** The object is gone from storage: what it held goes back (best effort; repair loops catch the rest). */
  afterDelete?(obj: StoredObject): Promise<void>;

  /** Converts a stored object to the served version of this resource (events.k8s.io views core events). */
  toServed?(obj: StoredObject): StoredObject;
  /** Converts a served object to its stored form. */
  toStored?(obj: KubeObject): KubeObject;
}
