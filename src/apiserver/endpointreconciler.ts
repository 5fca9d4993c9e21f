// The `kubernetes` Service's endpoints, as upstream's lease endpoint reconciler
// (--endpoint-reconciler-type=lease): every API server keeps a lease on its advertised address in
// storage (upstream's /masterleases/ keys, not API objects), renewed every 10 s and good for 15 s,
// and writes Endpoints default/kubernetes with the addresses of the leases still alive, then the
// EndpointSlice default/kubernetes made from them (upstream's EndpointsAdapter: labelled with the
// service name only, no controller owns it). A server that stops removes its lease and rewrites
// the endpoints without itself, unless it was the last one (upstream refuses to empty them).
import type { EndpointSubset, Endpoints } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { KubeObject } from '../api/meta.js';
import { hasStatusCode } from '../api/errors.js';
import { deepEqual } from '../api/validation/meta.js';
import { isStorageError, type Store } from '../storage/store.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { Registries } from './registry/registries.js';

/** Where the leases live, one key per server (upstream keys them by IP; kite by IP and port, so several servers may share a machine). */
export const MASTER_LEASES_PREFIX = '/masterleases/';
/** masterEndpointReconcileTTL: a lease not renewed for this long is gone. */
export const LEASE_TTL_MS = 15_000;
/** --endpoint-reconciler interval (upstream's EndpointReconcilerInterval). */
export const RECONCILE_INTERVAL_MS = 10_000;

const SERVICE_NAME = 'kubernetes';
const SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
const systemUser = { name: 'system:apiserver', groups: ['system:masters'] };

interface MasterLease {
  ip: string;
  port: number;
  /** ms since the epoch. */
  renewTime: number;
}

export interface LeaseEndpointReconcilerOptions {
  store: Store;
  registries: Registries;
  clock: Clock;
  logger: Logger;
  /** The address pods reach this server at, and its port. */
  ip: string;
  port: number;
}

export class LeaseEndpointReconciler {
  private timer?: Timer;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly opts: LeaseEndpointReconcilerOptions) {}

  private get key(): string {
    return `${MASTER_LEASES_PREFIX}${this.opts.ip}:${this.opts.port}`;
  }

  start(): void {
    this.tick();
  }

  private tick(): void {
    if (this.stopped) return;
    this.running = this.reconcile()
      .catch((err: unknown) => this.opts.logger.warn({ err }, 'reconciling the kubernetes Service endpoints failed'))
      .finally(() => {
        if (!this.stopped) this.timer = this.opts.clock.setTimer(RECONCILE_INTERVAL_MS, () => this.tick());
      });
  }

  /** Removes this server's lease and its address from the endpoints (upstream's RemoveEndpoints). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
    try {
      await this.opts.store.delete(this.key);
    } catch (err) {
      if (!isStorageError(err, 'NotFound')) throw err;
    }
    await this.writeEndpoints(await this.liveLeases()).catch((err: unknown) => this.opts.logger.info({ err }, 'kubernetes Service endpoints left as they are'));
  }

  /** Renews this server's lease, then writes the endpoints of every live lease. */
  async reconcile(): Promise<void> {
    const lease: MasterLease = { ip: this.opts.ip, port: this.opts.port, renewTime: this.opts.clock.now() };
    const value = JSON.stringify(lease);
    const current = await this.opts.store.get(this.key);
    if (current) await this.opts.store.update(this.key, value, current.modRevision);
    else await this.opts.store.create(this.key, value);
    await this.writeEndpoints(await this.liveLeases());
  }

  /** The leases not expired; expired ones are deleted (a lost race with another server is fine). */
  private async liveLeases(): Promise<MasterLease[]> {
    const now = this.opts.clock.now();
    const { items } = await this.opts.store.list({ prefix: MASTER_LEASES_PREFIX });
    const live: MasterLease[] = [];
    for (const kv of items) {
      const lease = parseLease(kv.value);
      if (lease && lease.renewTime + LEASE_TTL_MS >= now) {
        live.push(lease);
        continue;
      }
      await this.opts.store.delete(kv.key, kv.modRevision).catch(() => undefined);
    }
    return live;
  }

  private async writeEndpoints(leases: MasterLease[]): Promise<void> {
    if (leases.length === 0) throw new Error('no master IPs were listed in storage, refusing to erase all endpoints for the kubernetes service');
    const subsets = masterSubsets(leases);
    const endpoints = this.opts.registries.of('', 'endpoints');
    let current: Endpoints | undefined;
    try {
      current = (await endpoints.get('default', SERVICE_NAME)) as Endpoints;
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
    const desired: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      ...current,
      metadata: { ...(current?.metadata ?? { name: SERVICE_NAME, namespace: 'default' }), labels: { ...current?.metadata?.labels, [SKIP_MIRROR]: 'true' } },
      subsets,
    };
    const write = { dryRun: false, user: systemUser, subresource: '' };
    if (!current) {
      await endpoints.create('default', desired as KubeObject, write).catch((err: unknown) => {
        if (!hasStatusCode(err, 409)) throw err;
      });
    } else if (!deepEqual(current.subsets, subsets) || current.metadata?.labels?.[SKIP_MIRROR] !== 'true') {
      this.opts.logger.info({ service: SERVICE_NAME, addresses: leases.map((l) => l.ip) }, 'Resetting endpoints for master service');
      await endpoints.update('default', SERVICE_NAME, () => desired as KubeObject, write);
    }
    await this.ensureSlice(subsets[0]!);
  }

  /** EnsureEndpointSliceFromEndpoints: the slice of the first subset, rewritten when it differs. */
  private async ensureSlice(subset: EndpointSubset): Promise<void> {
    const slices = this.opts.registries.of('discovery.k8s.io', 'endpointslices');
    const desired: EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: SERVICE_NAME, namespace: 'default', labels: { 'kubernetes.io/service-name': SERVICE_NAME } },
      addressType: 'IPv4',
      endpoints: (subset.addresses ?? []).map((a) => ({ addresses: [a.ip], conditions: { ready: true } })),
      ports: (subset.ports ?? []).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
    };
    const write = { dryRun: false, user: systemUser, subresource: '' };
    let current: EndpointSlice | undefined;
    try {
      current = (await slices.get('default', SERVICE_NAME)) as unknown as EndpointSlice;
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
    if (!current) {
      await slices.create('default', desired as unknown as KubeObject, write).catch((err: unknown) => {
        if (!hasStatusCode(err, 409)) throw err;
      });
      return;
    }
    if (deepEqual(current.endpoints, desired.endpoints) && deepEqual(current.ports, desired.ports) && deepEqual(current.metadata?.labels, desired.metadata?.labels)) return;
    await slices.update('default', SERVICE_NAME, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: desired.metadata!.labels }, endpoints: desired.endpoints, ports: desired.ports }) as KubeObject, write);
  }
}

function parseLease(value: string): MasterLease | undefined {
  try {
    const v = JSON.parse(value) as Partial<MasterLease>;
    return typeof v.ip === 'string' && typeof v.port === 'number' && typeof v.renewTime === 'number' ? (v as MasterLease) : undefined;
  } catch {
    return undefined;
  }
}

/** One subset per port (upstream's servers share one), addresses sorted as RepackSubsets leaves them. */
export function masterSubsets(leases: readonly MasterLease[]): EndpointSubset[] {
  const byPort = new Map<number, Set<string>>();
  for (const l of leases) byPort.set(l.port, (byPort.get(l.port) ?? new Set()).add(l.ip));
  return [...byPort]
    .sort(([a], [b]) => a - b)
    .map(([port, ips]) => ({ addresses: [...ips].sort().map((ip) => ({ ip })), ports: [{ name: 'https', port, protocol: 'TCP' }] }));
}
