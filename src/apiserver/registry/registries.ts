// All served resources' registries, with one watch cache per storage prefix (shared by the
// core and events.k8s.io views of events).
import type { Store } from '../../storage/store.js';
import { TransformingStore } from '../../storage/value/store.js';
import type { Transformer } from '../../storage/value/transformer.js';
import type { Clock } from '../../util/clock.js';
import { resources, type ResourceInfo } from '../../api/resources.js';
import type { KubeObject, StoredObject } from '../../api/meta.js';
import { WatchCache } from '../watchcache/cache.js';
import { Registry, decodeStored, type Admitter } from './registry.js';
import type { ResourceStrategy } from './strategy.js';
import { podStrategy } from './strategies/pods.js';
import { namespaceStrategy } from './strategies/namespaces.js';
import { serviceStrategy } from './strategies/services.js';
import { ClusterIPAllocator, defaultServiceCIDRName } from './service/ipallocator.js';
import { defaultNodePortRange, NodePortAllocator, type PortRange } from './service/portallocator.js';
import { coreEventStrategy, eventsV1Strategy } from './strategies/events.js';
import {
  createOnUpdateStrategy,
  deploymentStrategy,
  endpointSliceStrategy,
  generationStrategy,
  nodeStrategy,
  plainStrategy,
  secretStrategy,
} from './strategies/others.js';
import { certificateSigningRequestStrategy } from './strategies/certificates.js';
import { daemonSetStrategy, replicatedStrategy, statefulSetStrategy } from './strategies/apps.js';
import { horizontalPodAutoscalerStrategy, horizontalPodAutoscalerV1Strategy } from './strategies/autoscaling.js';
import { jobStrategy } from './strategies/batch.js';
import { rbacStrategies } from './strategies/rbac.js';
import type { EscalationDeps } from '../authz/rbac/escalation.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import { resourceNamed, type ResourceName, type ResourceTypes } from '../../api/kinds.js';

/** A stored object of a named resource: its type, with the metadata storage always has. */
export type Typed<R extends ResourceName> = ResourceTypes[R] & StoredObject;

export interface RegistriesOptions {
  store: Store;
  clock: Clock;
  admitter: Admitter;
  synchronousWatch: boolean;
  /** `--service-node-port-range` (default 30000-32767). */
  nodePortRange?: PortRange;
  /** What RBAC writes are checked against for escalation (read at each write: the authorizer comes later). */
  escalation?: () => EscalationDeps | undefined;
  /** `--encryption-provider-config`: the transformer of the resources stored encrypted. */
  transformerFor?: (group: string, resource: string) => Transformer | undefined;
}

/** The API server's own identity for the writes it makes itself. */
export const systemUser = { name: 'system:apiserver', groups: ['system:masters'] };
const systemWrite = { dryRun: false, user: systemUser, subresource: '' };

export class Registries {
  private readonly byResource = new Map<string, Registry>();
  private readonly caches = new Map<string, WatchCache>();
  readonly clusterIPs: ClusterIPAllocator;
  readonly nodePorts: NodePortAllocator;

  constructor(opts: RegistriesOptions) {
    this.clusterIPs = new ClusterIPAllocator({
      serviceCIDRs: async () => {
        const cached = this.cachedList('servicecidrs.networking.k8s.io');
        if (cached.length > 0) return cached;
        // The cache may not have seen the default ServiceCIDR made a moment ago (etcd's watch lags).
        const live = await this.lookup('servicecidrs.networking.k8s.io', '', defaultServiceCIDRName);
        return live ? [live] : [];
      },
      known: (name) => this.cached('ipaddresses.networking.k8s.io', '', name) !== undefined,
      create: async (ip) => {
        try {
          await this.of('networking.k8s.io', 'ipaddresses').create('', ip as unknown as KubeObject, systemWrite);
          return true;
        } catch (err) {
          if (err instanceof StatusError && err.reason === 'AlreadyExists') return false;
          throw err;
        }
      },
      delete: async (name, owner) => {
        const ip = await this.lookup('ipaddresses.networking.k8s.io', '', name);
        const ref = ip?.spec?.parentRef;
        if (!ip || ref?.resource !== 'services' || ref.namespace !== owner.namespace || ref.name !== owner.name) return;
        await this.of('networking.k8s.io', 'ipaddresses').delete('', name, { preconditions: { uid: ip.metadata.uid } }, systemWrite);
      },
    });
    this.nodePorts = new NodePortAllocator(opts.store, opts.nodePortRange ?? defaultNodePortRange, () => opts.clock.now());
    const strategies: ResourceStrategy[] = [
      namespaceStrategy(),
      podStrategy(),
      nodeStrategy(),
      coreEventStrategy(),
      plainStrategy('', 'configmaps'),
      secretStrategy(),
      serviceStrategy({ clusterIPs: this.clusterIPs, nodePorts: this.nodePorts }),
      plainStrategy('', 'serviceaccounts'),
      plainStrategy('', 'resourcequotas'),
      plainStrategy('', 'limitranges'),
      createOnUpdateStrategy('', 'endpoints'),
      createOnUpdateStrategy('coordination.k8s.io', 'leases'),
      deploymentStrategy(),
      replicatedStrategy('apps', 'replicasets'),
      replicatedStrategy('', 'replicationcontrollers'),
      generationStrategy('', 'podtemplates'),
      daemonSetStrategy(),
      statefulSetStrategy(),
      plainStrategy('apps', 'controllerrevisions'),
      jobStrategy(),
      generationStrategy('batch', 'cronjobs'),
      generationStrategy('policy', 'poddisruptionbudgets'),
      horizontalPodAutoscalerStrategy(),
      horizontalPodAutoscalerV1Strategy(),
      endpointSliceStrategy(),
      generationStrategy('networking.k8s.io', 'networkpolicies'),
      plainStrategy('networking.k8s.io', 'servicecidrs'),
      plainStrategy('networking.k8s.io', 'ipaddresses'),
      generationStrategy('networking.k8s.io', 'ingresses'),
      plainStrategy('networking.k8s.io', 'ingressclasses'),
      plainStrategy('node.k8s.io', 'runtimeclasses'),
      ...rbacStrategies(() => opts.escalation?.()),
      generationStrategy('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'),
      generationStrategy('admissionregistration.k8s.io', 'validatingwebhookconfigurations'),
      generationStrategy('admissionregistration.k8s.io', 'validatingadmissionpolicies'),
      generationStrategy('admissionregistration.k8s.io', 'validatingadmissionpolicybindings'),
      eventsV1Strategy(),
      plainStrategy('scheduling.k8s.io', 'priorityclasses'),
      certificateSigningRequestStrategy(),
    ];
    // One store view per prefix: the views of a shared prefix (events) take the first one's transformer.
    const stores = new Map<string, Store>();
    for (const strategy of strategies) {
      let store = stores.get(strategy.storagePrefix);
      if (!store) {
        const transformer = opts.transformerFor?.(strategy.info.group, strategy.info.resource);
        store = transformer ? new TransformingStore(opts.store, transformer) : opts.store;
        stores.set(strategy.storagePrefix, store);
      }
      let cache = this.caches.get(strategy.storagePrefix);
      if (!cache) {
        cache = new WatchCache({ store, prefix: strategy.storagePrefix, decode: decodeStored, clock: opts.clock });
        this.caches.set(strategy.storagePrefix, cache);
      }
      const registry = new Registry({ store, cache, strategy, clock: opts.clock, admitter: opts.admitter, synchronousWatch: opts.synchronousWatch });
      this.byResource.set(keyOf(strategy.info), registry);
    }
    for (const r of resources) if (!this.byResource.has(keyOf(r))) throw new Error(`no registry for ${keyOf(r)}`);
  }

  /** Fills every watch cache; the server is ready once this resolves. */
  async start(): Promise<void> {
    await Promise.all([...this.caches.values()].map((c) => c.start()));
  }

  stop(): void {
    for (const c of this.caches.values()) c.stop();
  }

  get(group: string, version: string, resource: string): Registry | undefined {
    return this.byResource.get(`${group}/${version}/${resource}`);
  }

  /** The registry of a core or named-group resource, which must exist. */
  of(group: string, resource: string): Registry {
    const r = this.get(group, 'v1', resource);
    if (!r) throw new Error(`no registry for ${group}/${resource}`);
    return r;
  }

  /** The registry of a served resource by name ("pods", "leases.coordination.k8s.io"), in its preferred version. */
  private named(resource: ResourceName): Registry {
    const info = resourceNamed(resource);
    const r = this.get(info.group, info.version, info.resource);
    if (!r) throw new Error(`no registry for ${resource}`);
    return r;
  }

  /** One stored object, typed by its resource's name (a 404 StatusError when absent). */
  async read<R extends ResourceName>(resource: R, namespace: string, name: string): Promise<Typed<R>> {
    return (await this.named(resource).get(namespace, name)) as Typed<R>;
  }

  /** Reads from the watch cache of a registry (admission lookups, allocators). */
  cached<R extends ResourceName>(resource: R, namespace: string, name: string): Typed<R> | undefined {
    const reg = this.named(resource);
    return this.caches.get(reg.strategy.storagePrefix)?.get(reg.keyFor(namespace, name))?.object as Typed<R> | undefined;
  }

  /**
   * An object from the watch cache, else from storage: the cache may lag a write made a moment ago
   * (etcd's watch is asynchronous), as upstream's listers fall back to a live lookup.
   */
  async lookup<R extends ResourceName>(resource: R, namespace: string, name: string): Promise<Typed<R> | undefined> {
    const cached = this.cached(resource, namespace, name);
    if (cached) return cached;
    try {
      return await this.read(resource, namespace, name);
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined;
      throw err;
    }
  }

  /** Grows whenever the watch cache of resource changes: callers keep derived indexes until it moves. */
  cacheChanges(resource: ResourceName): number {
    return this.caches.get(this.named(resource).strategy.storagePrefix)?.changes ?? 0;
  }

  cachedList<R extends ResourceName>(resource: R): Typed<R>[] {
    const reg = this.named(resource);
    return (this.caches.get(reg.strategy.storagePrefix)?.snapshot(reg.strategy.storagePrefix).items.map((i) => i.object) ?? []) as Typed<R>[];
  }
}

function keyOf(r: ResourceInfo): string {
  return `${r.group}/${r.version}/${r.resource}`;
}
