// Image garbage collection (upstream's pkg/kubelet/images/image_gc_manager.go): every 5 minutes the
// image filesystem's usage is read; at or above imageGCHighThresholdPercent the least recently used
// images are removed until usage is back at imageGCLowThresholdPercent. Images any container uses
// (running or dead), pinned images and the pause image are never removed; images detected less than
// imageMinimumGCAge ago are spared; with imageMaximumGCAge set, images unused that long go anyway.
// When an image was first detected and last used is remembered in memory only, as upstream's.
import type { EventRecorder, InvolvedObject } from '../../client/record/recorder.js';
import type { Clock } from '../../util/clock.js';
import { Periodic } from '../../util/periodic.js';
import type { KubeletConfig } from '../config.js';
import { FREE_DISK_SPACE_FAILED, IMAGE_GC_FAILED, INVALID_DISK_CAPACITY } from '../events.js';
import { formatRuntimeError, type Image, type Runtime } from '../runtime/types.js';
import { parseImageName } from './reference.js';
import { filesystemStats } from '../stats/node.js';
import type { FsStats } from '../stats/types.js';

/** Upstream's ImageGCPeriod. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;

export type ImageGCPolicy = Pick<KubeletConfig, 'imageGCHighThresholdPercent' | 'imageGCLowThresholdPercent' | 'imageMinimumGCAgeMs' | 'imageMaximumGCAgeMs'>;

export interface ImageGCManagerConfig {
  runtime: Pick<Runtime, 'listImages' | 'removeImage' | 'listContainers'>;
  /** The image filesystem's size and free space (imageFsStats below for the real one). */
  imageFsStats: () => Promise<FsStats>;
  policy: ImageGCPolicy;
  /** The sandbox image: kept even when the runtime does not pin it. */
  pauseImage: string;
  clock: Clock;
  recorder: EventRecorder;
  nodeRef: InvolvedObject;
  log: (msg: string, err?: unknown) => void;
}

interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
  pinned: boolean;
}

/** The image filesystem as cadvisor sees it: the runtime's ImageFsInfo mountpoint, measured with statfs. */
export async function imageFsStats(runtime: Pick<Runtime, 'imageFsInfo'>): Promise<FsStats> {
  const mountpoint = (await runtime.imageFsInfo()).image_filesystems[0]?.fs_id.mountpoint;
  if (!mountpoint) throw new Error('the runtime reported no image filesystem');
  return filesystemStats(mountpoint);
}

/** Every name an image answers to, normalized, so a container's reference in any form finds it. */
function imageNames(image: Image): string[] {
  return [image.id, ...image.repo_tags, ...image.repo_digests].map(normalized);
}

function normalized(ref: string): string {
  if (ref.startsWith('sha256:')) return ref;
  try {
    const r = parseImageName(ref);
    return `${r.repository}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
  } catch {
    return ref;
  }
}

export class ImageGCManager {
  private readonly records = new Map<string, ImageRecord>();
  private readonly periodic: Periodic;
  /** When the kubelet began collecting: imageMaximumGCAge applies only once that long has passed. */
  private readonly beganGC: number;
  private prevFailed = false;

  constructor(private readonly config: ImageGCManagerConfig) {
    this.beganGC = config.clock.now();
    this.periodic = new Periodic({ clock: config.clock, periodMs: IMAGE_GC_PERIOD_MS, run: () => this.runOnce(), onError: (err) => config.log('image garbage collection', err) });
  }

  start(): void {
    // Images present at start count as detected now (upstream's Start runs detectImages at once).
    void this.detectImages(this.config.clock.now()).catch((err: unknown) => this.config.log('image detection', err));
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One period: a failure is an event only when the previous run failed too (stats may be warming up). */
  private async runOnce(): Promise<void> {
    try {
      await this.garbageCollect();
      this.prevFailed = false;
    } catch (err) {
      if (this.prevFailed) this.config.recorder.event(this.config.nodeRef, 'Warning', IMAGE_GC_FAILED, formatRuntimeError(err));
      this.prevFailed = true;
      throw err;
    }
  }

  /** GarbageCollect: images past imageMaximumGCAge, then least recently used down to the low threshold. */
  async garbageCollect(): Promise<void> {
    const { policy, recorder, nodeRef } = this.config;
    const now = this.config.clock.now();
    let candidates = await this.imagesInEvictionOrder(now);
    candidates = await this.freeOldImages(candidates, now);

    const stats = await this.config.imageFsStats();
    const capacity = stats.capacityBytes;
    const available = Math.min(stats.availableBytes, capacity);
    if (capacity === 0) {
      const message = 'invalid capacity 0 on image filesystem';
      recorder.event(nodeRef, 'Warning', INVALID_DISK_CAPACITY, message);
      throw new Error(message);
    }
    const usagePercent = 100 - Math.trunc((available * 100) / capacity);
    if (usagePercent < policy.imageGCHighThresholdPercent) return;
    const amountToFree = Math.trunc((capacity * (100 - policy.imageGCLowThresholdPercent)) / 100) - available;
    this.config.log(`image filesystem usage ${usagePercent}% is over the high threshold ${policy.imageGCHighThresholdPercent}%: freeing ${amountToFree} bytes`);
    const freed = await this.freeSpace(amountToFree, now, candidates);
    if (freed < amountToFree) {
      const message = `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${freed} bytes eligible to free.`;
      recorder.event(nodeRef, 'Warning', FREE_DISK_SPACE_FAILED, message);
      throw new Error(message);
    }
  }

  /** DeleteUnusedImages, for the eviction manager: every image not in use and old enough; the bytes freed. */
  async deleteUnusedImages(): Promise<number> {
    const now = this.config.clock.now();
    return this.freeSpace(Infinity, now, await this.imagesInEvictionOrder(now));
  }

  /** Records what the runtime has (first detection, last use now for images in use); answers the images in use. */
  private async detectImages(now: number): Promise<{ images: Image[]; inUse: Set<string> }> {
    const [images, containers] = await Promise.all([this.config.runtime.listImages(), this.config.runtime.listContainers()]);
    const used = new Set<string>([normalized(this.config.pauseImage)]);
    for (const c of containers) {
      used.add(normalized(c.image_ref));
      if (c.image?.image) used.add(normalized(c.image.image));
    }
    const inUse = new Set<string>();
    for (const image of images) {
      if (imageNames(image).some((n) => used.has(n))) inUse.add(image.id);
    }
    const present = new Set(images.map((i) => i.id));
    for (const image of images) {
      const record = this.records.get(image.id) ?? { firstDetected: now, lastUsed: 0, size: 0, pinned: false };
      if (inUse.has(image.id)) record.lastUsed = now;
      record.size = image.size;
      record.pinned = image.pinned ?? false;
      this.records.set(image.id, record);
    }
    for (const id of this.records.keys()) if (!present.has(id)) this.records.delete(id);
    return { images, inUse };
  }

  /** Images neither in use nor pinned, least recently used first, then first detected first. */
  private async imagesInEvictionOrder(now: number): Promise<string[]> {
    const { inUse } = await this.detectImages(now);
    return [...this.records.entries()]
      .filter(([id, r]) => !inUse.has(id) && !r.pinned)
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed || a.firstDetected - b.firstDetected)
      .map(([id]) => id);
  }

  /** imageMaximumGCAge: images unused for longer go, once the kubelet has run that long itself. */
  private async freeOldImages(candidates: string[], now: number): Promise<string[]> {
    const maxAge = this.config.policy.imageMaximumGCAgeMs;
    if (maxAge === 0 || now - this.beganGC <= maxAge) return candidates;
    const remaining: string[] = [];
    for (const id of candidates) {
      const record = this.records.get(id)!;
      if (now - record.lastUsed > maxAge && (await this.freeImage(id))) continue;
      remaining.push(id);
    }
    return remaining;
  }

  /** Removes candidates in order until bytesToFree are freed; images younger than imageMinimumGCAge stay. */
  private async freeSpace(bytesToFree: number, now: number, candidates: string[]): Promise<number> {
    let freed = 0;
    for (const id of candidates) {
      const record = this.records.get(id);
      if (!record || now - record.firstDetected < this.config.policy.imageMinimumGCAgeMs) continue;
      if (!(await this.freeImage(id))) continue;
      freed += record.size;
      if (freed >= bytesToFree) break;
    }
    return freed;
  }

  private async freeImage(id: string): Promise<boolean> {
    try {
      await this.config.runtime.removeImage({ image: id });
      this.records.delete(id);
      return true;
    } catch (err) {
      this.config.log(`removing image ${id}`, err);
      return false;
    }
  }
}
