// The typed client every component uses to reach the API server (client-go's role): one
// ResourceClient per resource and namespace, REST paths built from the resource catalog, plus the
// subresources the scheduler and kubelet need (binding, eviction, log).
import type { DeleteOptions, ListMeta, Status } from 'kubernetes-types/meta/v1.js';
import type { Binding, Pod } from 'kubernetes-types/core/v1.js';
import type { Eviction } from 'kubernetes-types/policy/v1.js';
import { apiVersionOf, type ObjectMeta } from '../api/meta.js';
import { findResource, type ResourceInfo } from '../api/resources.js';
import type { PodLogOptions } from '../api/validation/podlogoptions.js';
import type { MetaObject } from './indexer.js';
import { loadKubeconfig } from './kubeconfig.js';
import { patchContentTypes, RestClient, type PatchType, type Query, type WatchEvent } from './rest.js';
import { resourceNamed, type ResourceName, type ResourceTypes } from '../api/kinds.js';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
}

export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
}

export interface PatchOptions extends WriteOptions {
  /** Server-side apply: take ownership of conflicting fields. */
  force?: boolean;
  subresource?: string;
}

/** PodLogOptions as query parameters; follow is streamLog's. */
export type LogOptions = Omit<PodLogOptions, 'follow' | 'insecureSkipTLSVerifyBackend'>;

/** meta.k8s.io/v1 PartialObjectMetadata: an object's type and metadata, nothing else. */
export interface PartialObjectMetadata extends MetaObject {
  metadata: ObjectMeta;
}

// The metadata-only forms (client-go's metadata client): a list answers PartialObjectMetadataList,
// watch events carry PartialObjectMetadata.
const partialListAccept = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const partialAccept = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

function writeQuery(opts: WriteOptions | undefined): Query {
  return { dryRun: opts?.dryRun ? 'All' : undefined, fieldManager: opts?.fieldManager };
}

function objectName(obj: MetaObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('resource name may not be empty');
  return name;
}

export class ResourceClient<T extends MetaObject = MetaObject> {
  constructor(
    private readonly rest: RestClient,
    readonly info: ResourceInfo,
    readonly ns?: string,
  ) {}

  /** The same resource in namespace ns (ignored for cluster-scoped resources). */
  namespace(ns: string | undefined): ResourceClient<T> {
    return new ResourceClient<T>(this.rest, this.info, ns);
  }

  /** The REST path: /api/v1[/namespaces/ns]/pods[/name[/sub]]; a namespaced resource without a namespace spans all namespaces. */
  path(name?: string, subresource?: string, ns = this.ns): string {
    const { group, version, resource, namespaced } = this.info;
    let p = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    if (namespaced && ns) p += `/namespaces/${encodeURIComponent(ns)}`;
    else if (namespaced && name !== undefined) throw new Error(`an empty namespace may not be set when a resource name is provided`);
    p += `/${resource}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }

  // Writes take the namespace from the object when the client has none.
  private objectPath(obj: MetaObject, subresource?: string, withName = true): string {
    const ns = this.ns ?? obj.metadata?.namespace;
    if (!withName && this.info.namespaced && !ns) throw new Error('an empty namespace may not be set during creation');
    return this.path(withName ? objectName(obj) : undefined, subresource, ns);
  }

  async get(name: string, opts: { resourceVersion?: string } = {}, signal?: AbortSignal): Promise<T> {
    return this.rest.request<T>({ path: this.path(name), query: { ...opts }, signal });
  }

  async list(opts: ListOptions = {}, signal?: AbortSignal): Promise<ObjectList<T>> {
    return this.rest.request<ObjectList<T>>({ path: this.path(), query: { ...opts }, signal });
  }

  async create(obj: T, opts?: WriteOptions): Promise<T> {
    return this.rest.request<T>({ method: 'POST', path: this.objectPath(obj, undefined, false), query: writeQuery(opts), body: this.typed(obj), signal: opts?.signal });
  }

  /** Replaces the object; metadata.resourceVersion makes it a compare-and-swap. */
  async update(obj: T, opts?: WriteOptions): Promise<T> {
    return this.rest.request<T>({ method: 'PUT', path: this.objectPath(obj), query: writeQuery(opts), body: this.typed(obj), signal: opts?.signal });
  }

  async updateStatus(obj: T, opts?: WriteOptions): Promise<T> {
    return this.rest.request<T>({ method: 'PUT', path: this.objectPath(obj, 'status'), query: writeQuery(opts), body: this.typed(obj), signal: opts?.signal });
  }

  async patch(name: string, type: PatchType, body: unknown, opts: PatchOptions = {}): Promise<T> {
    if (type === 'apply' && !opts.fieldManager) throw new Error('fieldManager is required for apply patches');
    return this.rest.request<T>({
      method: 'PATCH',
      path: this.path(name, opts.subresource),
      query: { ...writeQuery(opts), force: opts.force },
      body,
      contentType: patchContentTypes[type],
      signal: opts.signal,
    });
  }

  /** Resolves with the deleted object (or the object pending finalizers), or a Success Status. */
  async delete(name: string, opts?: DeleteOptions): Promise<T | Status> {
    const body = opts ? { apiVersion: 'v1', kind: 'DeleteOptions', ...opts } : undefined;
    return this.rest.request<T | Status>({ method: 'DELETE', path: this.path(name), body });
  }

  /** A watch stream; it ends when the server closes it or the signal aborts. */
  async *watch(opts: WatchOptions = {}, signal?: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    yield* this.rest.watch<T>({ path: this.path(), query: { ...opts, watch: true }, signal });
  }

  /** The objects' metadata only (PartialObjectMetadataList), as the garbage collector's informers need. */
  async listMetadata(opts: ListOptions = {}, signal?: AbortSignal): Promise<ObjectList<PartialObjectMetadata>> {
    return this.rest.request<ObjectList<PartialObjectMetadata>>({ path: this.path(), query: { ...opts }, accept: partialListAccept, signal });
  }

  /** A watch whose events carry PartialObjectMetadata. */
  async *watchMetadata(opts: WatchOptions = {}, signal?: AbortSignal): AsyncGenerator<WatchEvent<PartialObjectMetadata>> {
    yield* this.rest.watch<PartialObjectMetadata>({ path: this.path(), query: { ...opts, watch: true }, accept: partialAccept, signal });
  }

  /** GETs or POSTs a subresource whose response is not this resource's kind (e.g. eviction, scale). */
  async subresource<R>(method: 'GET' | 'POST' | 'PUT', name: string, subresource: string, body?: unknown): Promise<R> {
    return this.rest.request<R>({ method, path: this.path(name, subresource), body });
  }

  private typed(obj: T): T {
    return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(this.info.group, this.info.version), kind: obj.kind ?? this.info.kind };
  }
}

export class Client {
  constructor(readonly rest: RestClient) {}

  /** A client for a kubeconfig's current (or named) context, e.g. DATA/admin.kubeconfig. */
  static async fromKubeconfig(file: string, context?: string): Promise<Client> {
    return new Client(new RestClient(await loadKubeconfig(file, context)));
  }

  /** Closes pooled connections (open watches end). */
  close(): void {
    this.rest.close();
  }

  /** A served resource by name ("pods", "leases.coordination.k8s.io"), typed by it. */
  resource<R extends ResourceName>(name: R): ResourceClient<ResourceTypes[R]>;
  resource<T extends MetaObject = MetaObject>(info: ResourceInfo): ResourceClient<T>;
  resource<T extends MetaObject = MetaObject>(group: string, version: string, resource: string): ResourceClient<T>;
  resource<T extends MetaObject = MetaObject>(a: ResourceInfo | string, version?: string, resource?: string): ResourceClient<T> {
    const info = typeof a !== 'string' ? a : version === undefined ? resourceNamed(a as ResourceName) : findResource(a, version, resource!);
    if (!info) throw new Error(`the server doesn't have a resource type "${resource}" in ${apiVersionOf(a as string, version!)}`);
    return new ResourceClient<T>(this.rest, info);
  }

  private pods(ns: string): ResourceClient<Pod> {
    return this.resource('pods').namespace(ns);
  }

  /** Assigns a pod to a node through pods/binding, as the scheduler does. */
  async bind(pod: Pod, nodeName: string, opts?: WriteOptions): Promise<void> {
    const { name, namespace, uid } = pod.metadata ?? {};
    const binding: Binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace, uid },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    };
    await this.rest.request({
      method: 'POST',
      path: this.pods(namespace ?? '').path(name ?? '', 'binding'),
      query: writeQuery(opts),
      body: binding,
    });
  }

  /** Asks for a pod's eviction (policy/v1 Eviction); a PodDisruptionBudget may refuse it with 429. */
  async evict(namespace: string, name: string, deleteOptions?: DeleteOptions): Promise<void> {
    const eviction: Eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions };
    await this.pods(namespace).subresource('POST', name, 'eviction', eviction);
  }

  async getLog(namespace: string, name: string, opts: LogOptions = {}, signal?: AbortSignal): Promise<string> {
    return this.rest.requestText({ path: this.pods(namespace).path(name, 'log'), query: { ...opts }, signal });
  }

  /** The log as it is written (follow=true): ends when the container stops or the signal aborts. */
  async *streamLog(namespace: string, name: string, opts: LogOptions = {}, signal?: AbortSignal): AsyncGenerator<string> {
    yield* this.rest.stream({ path: this.pods(namespace).path(name, 'log'), query: { ...opts, follow: true }, signal });
  }
}
