// The kubelet's image manager (upstream's pkg/kubelet/images): decides from the pull policy and the
// image's presence whether to pull, pulls one image at a time per reference, backs off per pod and
// image after failures (ImagePullBackOff), and records the events kubectl describe shows.
import type { Container, Pod, Secret } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { goDuration } from '../../api/duration.js';
import { stepTime } from '../../client/timeline/recorder.js';
import type { KubeletConfig } from '../config.js';
import { BACK_OFF_PULL_IMAGE, ERR_IMAGE_NEVER_PULL_POLICY, FAILED_TO_INSPECT_IMAGE, FAILED_TO_PULL_IMAGE, PULLED_IMAGE, PULLING_IMAGE } from '../events.js';
import { type EventRecorder, type EventType, type InvolvedObject } from '../../client/record/recorder.js';
import { containerRef } from '../../api/pod/reference.js';
import type { EnvSources } from '../kuberuntime/env.js';
import type { ImageUser } from '../kuberuntime/security.js';
import { formatRuntimeError, type AuthConfig, type Image, type ImageService, type ImageSpec, type PodSandboxConfig } from '../runtime/types.js';
import { credentialsFor } from './pullsecrets.js';
import { InvalidImageNameError, applyDefaultImageTag, parseImageName } from './reference.js';
import { containerType, type KubeletTimeline } from '../timeline/timeline.js';

export type PullFailureReason = 'ErrImagePull' | 'ImagePullBackOff' | 'ErrImageNeverPull' | 'InvalidImageName' | 'ImageInspectError';

export type PullResult =
  | { ok: true; imageRef: string; /** Who the image runs as (runAsNonRoot checks). */ user: ImageUser }
  | { ok: false; reason: PullFailureReason; message: string };

export interface ImageManager {
  ensureImageExists(pod: Pod, container: Container, sandboxConfig: PodSandboxConfig): Promise<PullResult>;
}

export interface ImageManagerConfig {
  images: ImageService;
  recorder: EventRecorder;
  clock: Clock;
  cfg: Pick<KubeletConfig, 'imagePullBackOffInitialMs' | 'imagePullBackOffMaxMs'>;
  /** Where imagePullSecrets are read from; without it images are pulled anonymously. */
  secrets?: Pick<EnvSources, 'getSecret'>;
  /** Where the ImagePull, ImagePullFailed and ImagePullBackOff steps go. */
  timeline?: KubeletTimeline;
}

interface BackOffEntry {
  backoffMs: number;
  lastUpdate: number;
}

/** flowcontrol.Backoff as the image manager uses it: keyed per pod UID and image, doubling to the cap. */
export class ImagePullBackOff {
  private readonly entries = new Map<string, BackOffEntry>();
  constructor(private readonly cfg: { initialMs: number; maxMs: number }) {}

  /** IsInBackOffSinceUpdate: the last failure was less than the current delay ago. */
  isInBackOff(key: string, now: number): boolean {
    const e = this.entries.get(key);
    return !!e && now - e.lastUpdate < e.backoffMs;
  }

  /** Next: the initial delay after the first failure (or a long quiet spell), then double up to the cap. */
  next(key: string, now: number): void {
    const e = this.entries.get(key);
    const backoffMs = !e || now - e.lastUpdate > 2 * this.cfg.maxMs ? this.cfg.initialMs : Math.min(e.backoffMs * 2, this.cfg.maxMs);
    this.entries.set(key, { backoffMs, lastUpdate: now });
  }

  /** When a key's back-off ends (undefined when none). */
  retryAt(key: string): number | undefined {
    const e = this.entries.get(key);
    return e && e.lastUpdate + e.backoffMs;
  }

  /** The current delay for a key (0 when none). */
  delay(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** GC: forgets entries quiet for twice the cap. */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (now - e.lastUpdate > 2 * this.cfg.maxMs) this.entries.delete(k);
  }
}

function imageUser(image: Image | undefined): ImageUser {
  if (image?.uid) return { uid: image.uid.value };
  if (image?.username) return { username: image.username };
  return {};
}

export class KubeletImageManager implements ImageManager {
  readonly backOff: ImagePullBackOff;
  /** The pull in flight (or last queued) per image reference: pulls of one image wait for each other. */
  private readonly pulls = new Map<string, Promise<unknown>>();

  constructor(private readonly config: ImageManagerConfig) {
    this.backOff = new ImagePullBackOff({ initialMs: config.cfg.imagePullBackOffInitialMs, maxMs: config.cfg.imagePullBackOffMaxMs });
  }

  async ensureImageExists(pod: Pod, container: Container, sandboxConfig: PodSandboxConfig): Promise<PullResult> {
    const clock = this.config.clock;
    const ref = containerRef(pod, container);
    const imgRef = container.image ?? '';
    const timeline = this.config.timeline;
    const step = { container: container.name, containerType: containerType(pod, container.name) };
    const fail = (reason: PullFailureReason, message: string): PullResult => {
      // What startContainer records beside the image manager's own event.
      this.event(ref, 'Warning', FAILED_TO_PULL_IMAGE, `Error: ${reason}`);
      return { ok: false, reason, message };
    };

    let image: string;
    try {
      image = applyDefaultImageTag(imgRef);
    } catch (err) {
      const message = `Failed to apply default image tag ${JSON.stringify(imgRef)}: ${(err as InvalidImageNameError).message}`;
      this.event(ref, 'Warning', FAILED_TO_INSPECT_IMAGE, message);
      return fail('InvalidImageName', message);
    }
    const spec: ImageSpec = { image, annotations: { ...(pod.metadata?.annotations ?? {}) } };

    let present: Image | undefined;
    try {
      present = await this.config.images.imageStatus(spec);
    } catch (err) {
      const message = `Failed to inspect image ${JSON.stringify(imgRef)}: ${formatRuntimeError(err)}`;
      this.event(ref, 'Warning', FAILED_TO_INSPECT_IMAGE, message);
      return fail('ImageInspectError', message);
    }

    const policy = container.imagePullPolicy ?? 'IfNotPresent';
    const shouldPull = policy === 'Always' || (policy === 'IfNotPresent' && !present);
    if (!shouldPull) {
      if (present) {
        this.event(ref, 'Normal', PULLED_IMAGE, `Container image ${JSON.stringify(imgRef)} already present on machine`);
        const now = clock.now();
        timeline?.span(pod, 'ImagePull', now, { ...step, detail: `${imgRef} already present`, attributes: { image: imgRef, present: true, size: present.size ?? 0 } }, now);
        return { ok: true, imageRef: present.id, user: imageUser(present) };
      }
      const message = `Container image ${JSON.stringify(imgRef)} is not present with pull policy of Never`;
      this.event(ref, 'Warning', ERR_IMAGE_NEVER_PULL_POLICY, message);
      return fail('ErrImageNeverPull', message);
    }

    const backOffKey = `${pod.metadata?.uid ?? ''}_${imgRef}`;
    if (this.backOff.isInBackOff(backOffKey, clock.now())) {
      const message = `Back-off pulling image ${JSON.stringify(imgRef)}`;
      this.event(ref, 'Normal', BACK_OFF_PULL_IMAGE, message);
      const retryAt = this.backOff.retryAt(backOffKey) ?? clock.now();
      const attributes = { reason: 'ImagePullBackOff', delayMs: this.backOff.delay(backOffKey), nextStart: stepTime(retryAt) };
      timeline?.series(pod, 'BackOff', { ...step, detail: message, attributes }, retryAt);
      return fail('ImagePullBackOff', message);
    }

    this.event(ref, 'Normal', PULLING_IMAGE, `Pulling image ${JSON.stringify(imgRef)}`);
    const start = clock.now();
    const auths = await this.credentials(pod, image);
    const result = await this.serialized(image, async () => {
      const pullStart = clock.now();
      const imageRef = await this.pullWithCredentials(spec, auths, sandboxConfig);
      const pullMs = clock.now() - pullStart;
      const status = await this.config.images.imageStatus(spec);
      return { imageRef, pullMs, waitMs: pullStart - start, status };
    }).catch((err: unknown) => ({ error: formatRuntimeError(err) }));

    if ('error' in result) {
      this.event(ref, 'Warning', FAILED_TO_PULL_IMAGE, `Failed to pull image ${JSON.stringify(imgRef)}: ${result.error}`);
      this.backOff.next(backOffKey, clock.now());
      const attributes = { image: imgRef, error: result.error, nextRetry: stepTime(this.backOff.retryAt(backOffKey) ?? clock.now()) };
      timeline?.series(pod, 'ImagePullFailed', { ...step, detail: `pulling ${imgRef} failed: ${result.error}`, attributes });
      return fail('ErrImagePull', result.error);
    }
    const totalMs = clock.now() - start;
    this.event(
      ref,
      'Normal',
      PULLED_IMAGE,
      `Successfully pulled image ${JSON.stringify(imgRef)} in ${goDuration(result.pullMs)} (${goDuration(totalMs)} including waiting). Image size: ${result.status?.size ?? 0} bytes.`,
    );
    const size = result.status?.size ?? 0;
    const detail = `pulled ${imgRef} (${size} bytes) in ${result.pullMs} ms after ${result.waitMs} ms in the queue`;
    timeline?.span(pod, 'ImagePull', start, { ...step, detail, attributes: { image: imgRef, size, waitMs: result.waitMs } });
    this.backOff.gc(clock.now());
    return { ok: true, imageRef: result.imageRef, user: imageUser(result.status) };
  }

  private event(ref: InvolvedObject, type: EventType, reason: string, message: string): void {
    this.config.recorder.event(ref, type, reason, message);
  }

  /** Runs fn after every earlier pull of the same image has finished. */
  private serialized<T>(image: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.pulls.get(image) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(fn);
    const tail = run.catch(() => undefined);
    this.pulls.set(image, tail);
    void tail.then(() => {
      if (this.pulls.get(image) === tail) this.pulls.delete(image);
    });
    return run;
  }

  private async credentials(pod: Pod, image: string): Promise<AuthConfig[]> {
    const names = (pod.spec?.imagePullSecrets ?? []).map((s) => s.name ?? '').filter(Boolean);
    const source = this.config.secrets;
    if (names.length === 0 || !source) return [];
    const secrets: Secret[] = [];
    for (const name of names) {
      // A missing pull secret is skipped, as upstream (it only logs).
      const s = await source.getSecret(pod.metadata?.namespace ?? '', name).catch(() => undefined);
      if (s) secrets.push(s);
    }
    return credentialsFor(parseImageName(image), secrets);
  }

  /** Tries each matching credential in turn (upstream's keyring order); anonymous when there is none. */
  private async pullWithCredentials(spec: ImageSpec, auths: AuthConfig[], sandboxConfig: PodSandboxConfig): Promise<string> {
    if (auths.length === 0) return this.config.images.pullImage(spec, undefined, sandboxConfig);
    let last: unknown;
    for (const auth of auths) {
      try {
        return await this.config.images.pullImage(spec, auth, sandboxConfig);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }
}
