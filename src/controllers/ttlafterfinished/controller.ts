// The TTL-after-finished controller, as upstream's pkg/controller/ttlafterfinished: a finished Job
// with spec.ttlSecondsAfterFinished is deleted (foreground: its pods first) that many seconds after
// its Complete or Failed condition, checked once more against a fresh read before the delete.
import type { Job } from 'kubernetes-types/batch/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import type { Client } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import { metaNamespaceKeyFunc, splitMetaNamespaceKey, type Indexer } from '../../client/indexer.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';
import { finishedCondition } from '../job/util.js';

const jobsResource = findResource('batch', 'v1', 'jobs')!;

export interface TTLAfterFinishedControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** Upstream's --concurrent-ttl-after-finished-syncs (default 5). */
  workers?: number;
}

/** A finished Job with a TTL: one this controller must delete some time. */
export const needsCleanup = (job: Job): boolean => job.spec?.ttlSecondsAfterFinished != null && finishedCondition(job) !== undefined;

/**
 * How long until the finished Job expires (negative or 0: expired). Throws when its finish time is
 * unknown, as upstream's jobFinishTime.
 */
export function timeLeft(job: Job, now: number, logger?: Logger): number {
  const finishAt = Date.parse(finishedCondition(job)?.lastTransitionTime ?? '');
  if (!Number.isFinite(finishAt)) throw new Error(`unable to find the time when the Job ${job.metadata?.namespace}/${job.metadata?.name} finished`);
  if (finishAt > now) logger?.info({ job: metaNamespaceKeyFunc(job) }, 'Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.');
  return finishAt + (job.spec?.ttlSecondsAfterFinished ?? 0) * 1000 - now;
}

export class TTLAfterFinishedController {
  private readonly jobs: Indexer<Job>;
  private readonly controller: QueueController;

  constructor(private readonly opts: TTLAfterFinishedControllerOptions) {
    const informer = opts.informers.informerFor<Job>(jobsResource);
    this.jobs = informer.indexer;
    this.controller = new QueueController({
      name: 'ttl_jobs_to_delete',
      clock: opts.clock,
      logger: opts.logger,
      sources: [informer],
      workers: opts.workers ?? 5,
      sync: (key) => this.processJob(key),
    });
    const enqueue = (job: Job) => {
      if (needsCleanup(job)) this.controller.enqueue(metaNamespaceKeyFunc(job));
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cur) => enqueue(cur) });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  /** Whether the Job's TTL has run out; if not, it is looked at again when it will have. */
  private expired(job: Job): boolean {
    if (!needsCleanup(job)) return false;
    const left = timeLeft(job, this.opts.clock.now(), this.opts.logger);
    if (left <= 0) return true;
    this.controller.enqueueAfter(metaNamespaceKeyFunc(job), left);
    return false;
  }

  /** Upstream's processJob. */
  async processJob(key: string): Promise<void> {
    const cached = this.jobs.getByKey(key);
    if (!cached || !this.expired(cached)) return;
    // The cache may be stale (the TTL changed, the Job was recreated): check a fresh read.
    const { namespace, name } = splitMetaNamespaceKey(key);
    const client = this.opts.client.resource<Job>(jobsResource).namespace(namespace);
    let fresh: Job;
    try {
      fresh = await client.get(name);
    } catch (err) {
      if (hasStatusCode(err, 404)) return;
      throw err;
    }
    if (!this.expired(fresh)) return;
    this.opts.logger.info({ job: key }, 'Cleaning up Job');
    try {
      // Foreground: the Job stays, marked, until its pods are gone; the precondition pins the version checked.
      await client.delete(name, { propagationPolicy: 'Foreground', preconditions: { resourceVersion: fresh.metadata?.resourceVersion } });
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
  }
}
