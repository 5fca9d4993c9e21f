// The node's NetworkPolicy enforcement: informers on NetworkPolicies, Pods (cluster-wide: peers
// live on every node) and Namespaces feed the planner, whose table replaces the kernel's in one nft
// transaction. Changes are coalesced (one plan per burst, never two applies at once) and an
// unchanged plan is not applied again, so pod status churn costs nothing and the drop counters a
// user reads keep counting. A periodic check re-applies the table when it went missing; a failed
// apply is retried. On stop the table stays: pods keep running without their agent, and so do
// their policies; `kite reset` removes it.
import { readFile } from 'node:fs/promises';
import type { Namespace, NetworkPolicy, Pod } from '../../api/types.js';
import { resourceNamed } from '../../api/kinds.js';
import { isIPv4 } from '../../api/validation/names.js';
import type { Client } from '../../client/client.js';
import { SharedInformerFactory } from '../../client/factory.js';
import type { SharedInformer } from '../../client/informer.js';
import { within, type Clock, type Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import type { Service } from '../../util/lifecycle.js';
import { Periodic } from '../../util/periodic.js';
import type { Nftables } from '../nftables.js';
import { planPolicyRuleset, policyTableFamily, policyTableName, type PolicyPod } from './planner.js';

export interface NetworkPolicyEnforcerOptions {
  client: Client;
  nodeName: string;
  /** The node's pod bridge: its name is in the table's, and its traffic is what is filtered. */
  bridge: string;
  nft: Nftables;
  clock: Clock;
  logger: Logger;
  /** How often the table's presence is checked (default 30 s). */
  checkPeriodMs?: number;
  /** Where br_netfilter's switch is read (tests point it elsewhere). */
  bridgeNfCallFile?: string;
}

// A failed apply is retried after 5 s, doubling to a minute while it keeps failing.
const firstRetryMs = 5_000;
const maxRetryMs = 60_000;
const stopWaitMs = 10_000;

/** The pod as policy sees it, or undefined when it has no pod-network IPv4 address to filter. */
export function policyPod(pod: Pod): PolicyPod | undefined {
  const ip = pod.status?.podIP;
  if (!ip || !isIPv4(ip) || pod.spec?.hostNetwork) return undefined;
  // A finished pod's IP may already be another pod's.
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return undefined;
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  const ports = [...(pod.spec?.containers ?? []), ...sidecars].flatMap((c) =>
    (c.ports ?? []).filter((p) => p.name).map((p) => ({ name: p.name!, protocol: p.protocol ?? 'TCP', port: p.containerPort })),
  );
  return { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', ip, labels: pod.metadata?.labels ?? {}, ports };
}

export class NetworkPolicyEnforcer implements Service {
  readonly name = 'network-policy';
  readonly table: string;
  private readonly factory: SharedInformerFactory;
  private readonly pods: SharedInformer<Pod>;
  private readonly policies: SharedInformer<NetworkPolicy>;
  private readonly namespaces: SharedInformer<Namespace>;
  private readonly check: Periodic;
  private applied?: string;
  private dirty = false;
  private running?: Promise<void>;
  private retry?: Timer;
  private retryMs = firstRetryMs;
  private stopped = false;

  constructor(private readonly opts: NetworkPolicyEnforcerOptions) {
    this.table = policyTableName(opts.bridge);
    this.factory = new SharedInformerFactory({
      client: opts.client,
      clock: opts.clock,
      onError: (err, resource) => opts.logger.warn({ err, resource }, 'network policy informer'),
    });
    this.pods = this.factory.informerFor<Pod>(resourceNamed('pods'));
    this.policies = this.factory.informerFor<NetworkPolicy>(resourceNamed('networkpolicies.networking.k8s.io'));
    this.namespaces = this.factory.informerFor<Namespace>(resourceNamed('namespaces'));
    this.check = new Periodic({
      clock: opts.clock,
      periodMs: opts.checkPeriodMs ?? 30_000,
      run: async () => {
        if (this.applied !== undefined && (await opts.nft.listTable(policyTableFamily, this.table)) === undefined) {
          opts.logger.warn({ table: this.table }, 'network policy table missing; applying it again');
          this.applied = undefined;
          await this.sync();
        }
      },
      onError: (err) => opts.logger.warn({ err }, 'network policy table check'),
    });
  }

  /** Starts the informers and returns once the first plan was applied (or failed and is being retried). */
  async start(): Promise<void> {
    await this.warnWithoutBridgeNetfilter();
    const handler = { onAdd: () => this.requestSync(), onUpdate: () => this.requestSync(), onDelete: () => this.requestSync() };
    for (const informer of [this.pods, this.policies, this.namespaces] as SharedInformer<{ metadata?: object }>[]) informer.addEventHandler(handler);
    this.factory.start();
    await this.factory.waitForCacheSync();
    await this.sync();
    this.check.start();
    this.opts.logger.info({ bridge: this.opts.bridge, table: `${policyTableFamily} ${this.table}` }, 'NetworkPolicy enforced');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retry?.cancel();
    await this.check.stop();
    await this.factory.shutdown();
    // An apply under way ends on its own (the kernel's transaction is all or nothing); a stuck nft must not hold the node's shutdown.
    const inFlight = this.running;
    if (inFlight && !(await within(this.opts.clock, stopWaitMs, inFlight))) this.opts.logger.warn({ table: this.table }, 'network policy apply still running at stop; not waiting for it');
  }

  /** Plans and applies now, after whatever sync is under way; resolves when the state it saw is in the kernel (or failed). */
  async sync(): Promise<void> {
    this.requestSync();
    while (this.running) await this.running;
  }

  private requestSync(): void {
    this.dirty = true;
    if (this.running || this.stopped || !this.pods.hasSynced()) return;
    this.running = this.loop().finally(() => {
      this.running = undefined;
      // A change that came after the loop's last look.
      if (this.dirty) this.requestSync();
    });
  }

  private async loop(): Promise<void> {
    // One turn of the event loop lets a burst of informer events land in one plan.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.dirty && !this.stopped) {
      this.dirty = false;
      await this.applyPlan();
    }
  }

  private async applyPlan(): Promise<void> {
    const { opts } = this;
    const all = this.pods.indexer.list();
    const pods = all.map(policyPod).filter((p): p is PolicyPod => !!p);
    const localNames = new Set(all.filter((p) => p.spec?.nodeName === opts.nodeName).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`));
    const script = planPolicyRuleset({
      table: this.table,
      bridge: opts.bridge,
      local: pods.filter((p) => localNames.has(`${p.namespace}/${p.name}`)),
      pods,
      namespaces: new Map(this.namespaces.indexer.list().map((ns) => [ns.metadata?.name ?? '', ns.metadata?.labels ?? {}])),
      policies: this.policies.indexer.list(),
    });
    if (script === this.applied) return;
    try {
      await opts.nft.apply(script);
      this.applied = script;
      this.retryMs = firstRetryMs;
      opts.logger.debug({ table: this.table, bytes: script.length }, 'network policy table applied');
    } catch (err) {
      opts.logger.error({ err, table: this.table }, `network policy table not applied; retrying in ${this.retryMs / 1000}s`);
      this.retry?.cancel();
      this.retry = opts.clock.setTimer(this.retryMs, () => this.requestSync());
      this.retryMs = Math.min(this.retryMs * 2, maxRetryMs);
    }
  }

  /** Without br_netfilter's ip hooks, pods of one bridge would meet unfiltered: say so (kite never changes the switch). */
  private async warnWithoutBridgeNetfilter(): Promise<void> {
    const file = this.opts.bridgeNfCallFile ?? '/proc/sys/net/bridge/bridge-nf-call-iptables';
    const value = await readFile(file, 'utf8').then(
      (v) => v.trim(),
      () => 'absent',
    );
    if (value !== '1') {
      this.opts.logger.warn({ [file]: value }, 'bridged traffic skips the ip hooks: NetworkPolicy is not enforced between pods of this node');
    }
  }
}
