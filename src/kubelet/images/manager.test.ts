import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, Secret } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { FakeRuntime, normalizeImage } from '../runtime/fake/fake.js';
import type { AuthConfig, ImageSpec } from '../runtime/types.js';
import { KubeletImageManager, type PullResult } from './manager.js';
import { FakeTimelineRecorder } from '../../client/timeline/recorder.js';
import { KubeletTimeline } from '../timeline/timeline.js';

const sandbox = { metadata: { name: 'p', namespace: 'ns', uid: 'u1', attempt: 0 } };

function setup(opts: { pullMs?: number; secrets?: Secret[] } = {}) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime(clock);
  const recorder = new FakeRecorder();
  const steps = new FakeTimelineRecorder();
  const timeline = new KubeletTimeline({ recorder: steps, nodeName: 'n1', clock });
  if (opts.pullMs) {
    const pull = runtime.pullImage.bind(runtime);
    runtime.pullImage = async (spec: ImageSpec) => {
      await clock.sleep(opts.pullMs!);
      return pull(spec);
    };
  }
  const manager = new KubeletImageManager({
    images: runtime,
    recorder,
    clock,
    cfg: { imagePullBackOffInitialMs: 10_000, imagePullBackOffMaxMs: 300_000 },
    secrets: { getSecret: async (_ns, name) => opts.secrets?.find((s) => s.metadata?.name === name) },
    timeline,
  });
  return { clock, runtime, recorder, manager, steps };
}

const mkPod = (container: Container, extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { containers: [container], ...extra },
});
const events = (r: FakeRecorder) => r.events.map((e) => `${e.type} ${e.reason} ${e.message}`);

describe('KubeletImageManager', () => {
  it('IfNotPresent with the image present: no pull', async () => {
    const { runtime, recorder, manager } = setup();
    const img = runtime.addImage('busybox:1.35', { size: 2211 });
    const c: Container = { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent' };
    const r = await manager.ensureImageExists(mkPod(c), c, sandbox);
    assert.deepEqual(r, { ok: true, imageRef: img.id, user: {} });
    assert.deepEqual(events(recorder), ['Normal Pulled Container image "busybox:1.35" already present on machine']);
    assert.equal(recorder.events[0]!.object.fieldPath, 'spec.containers{c}');
    assert.equal(runtime.callsOf('pullImage').length, 0);
  });

  it('pulls a missing image and reports the time and size', async () => {
    const { runtime, recorder, manager, clock } = setup({ pullMs: 210 });
    const c: Container = { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent' };
    const pending = manager.ensureImageExists(mkPod({ name: 'init' }, { initContainers: [c] }), c, sandbox);
    await clock.advance(210);
    const r = (await pending) as Extract<PullResult, { ok: true }>;
    assert.equal(r.ok, true);
    assert.equal(r.imageRef, runtime.images.get(normalizeImage('busybox:1.35'))!.id);
    assert.deepEqual(events(recorder), [
      'Normal Pulling Pulling image "busybox:1.35"',
      'Normal Pulled Successfully pulled image "busybox:1.35" in 210ms (210ms including waiting). Image size: 1000000 bytes.',
    ]);
    assert.equal(recorder.events[0]!.object.fieldPath, 'spec.initContainers{c}');
    assert.deepEqual(runtime.callsOf('pullImage')[0]![0], { image: 'busybox:1.35', annotations: {} });
  });

  it('Always pulls even when present; untagged images get :latest', async () => {
    const { runtime, manager } = setup();
    runtime.addImage('busybox:latest');
    const c: Container = { name: 'c', image: 'busybox', imagePullPolicy: 'Always' };
    assert.equal((await manager.ensureImageExists(mkPod(c), c, sandbox)).ok, true);
    assert.deepEqual((runtime.callsOf('pullImage')[0]![0] as ImageSpec).image, 'busybox:latest');
  });

  it('Never with the image missing', async () => {
    const { recorder, manager } = setup();
    const c: Container = { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'Never' };
    assert.deepEqual(await manager.ensureImageExists(mkPod(c), c, sandbox), {
      ok: false,
      reason: 'ErrImageNeverPull',
      message: 'Container image "busybox:1.35" is not present with pull policy of Never',
    });
    assert.deepEqual(events(recorder), ['Warning ErrImageNeverPull Container image "busybox:1.35" is not present with pull policy of Never', 'Warning Failed Error: ErrImageNeverPull']);
  });

  for (const [image, why] of [
    ['Busybox', 'invalid reference format: repository name (library/Busybox) must be lowercase'],
    ['busy box', 'invalid reference format'],
    ['busybox:', 'invalid reference format'],
  ] as const) {
    it(`InvalidImageName: ${JSON.stringify(image)}`, async () => {
      const { recorder, manager } = setup();
      const c: Container = { name: 'c', image };
      const msg = `Failed to apply default image tag ${JSON.stringify(image)}: couldn't parse image name ${JSON.stringify(image)}: ${why}`;
      assert.deepEqual(await manager.ensureImageExists(mkPod(c), c, sandbox), { ok: false, reason: 'InvalidImageName', message: msg });
      assert.deepEqual(events(recorder), [`Warning InspectFailed ${msg}`, 'Warning Failed Error: InvalidImageName']);
    });
  }

  it('ErrImagePull, then ImagePullBackOff doubling to the cap in virtual time', async () => {
    const { runtime, recorder, manager, clock } = setup();
    runtime.unpullable.add(normalizeImage('nope:1'));
    const c: Container = { name: 'c', image: 'nope:1', imagePullPolicy: 'IfNotPresent' };
    const pod = mkPod(c);
    const attempt = async () => {
      const r = await manager.ensureImageExists(pod, c, sandbox);
      assert.equal(r.ok, false);
      return (r as Extract<PullResult, { ok: false }>).reason;
    };

    const first = await manager.ensureImageExists(pod, c, sandbox);
    const ref = normalizeImage('nope:1');
    const runtimeMsg = `rpc error: code = NotFound desc = failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`;
    assert.deepEqual(first, { ok: false, reason: 'ErrImagePull', message: runtimeMsg });
    assert.deepEqual(events(recorder), ['Normal Pulling Pulling image "nope:1"', `Warning Failed Failed to pull image "nope:1": ${runtimeMsg}`, 'Warning Failed Error: ErrImagePull']);

    // Each failure doubles the wait: 10s, 20s, 40s, ... capped at 300s.
    const sequence: string[] = [];
    for (const wait of [10, 20, 40, 80, 160, 300, 300]) {
      await clock.advance(wait * 1000 - 1);
      sequence.push(await attempt());
      await clock.advance(1);
      sequence.push(await attempt());
    }
    assert.deepEqual(sequence, Array(7).fill(['ImagePullBackOff', 'ErrImagePull']).flat());
    assert.equal(runtime.callsOf('pullImage').length, 8);
    assert.ok(events(recorder).includes('Normal BackOff Back-off pulling image "nope:1"'));
    assert.ok(events(recorder).includes('Warning Failed Error: ImagePullBackOff'));

    // The backoff is per pod: another pod pulls at once.
    const other: Pod = { ...mkPod(c), metadata: { name: 'p', namespace: 'ns', uid: 'u2' } };
    assert.equal(((await manager.ensureImageExists(other, c, sandbox)) as Extract<PullResult, { ok: false }>).reason, 'ErrImagePull');
  });

  it('pulls of one image wait for each other', async () => {
    const { recorder, manager, clock, runtime } = setup({ pullMs: 100 });
    const c: Container = { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'Always' };
    const a = manager.ensureImageExists(mkPod(c), c, sandbox);
    const other: Pod = { ...mkPod(c), metadata: { name: 'p', namespace: 'ns', uid: 'u2' } };
    const b = manager.ensureImageExists(other, c, sandbox);
    await clock.advance(100);
    assert.equal(runtime.callsOf('pullImage').length, 1, 'the second pull has not started');
    await clock.advance(100);
    await Promise.all([a, b]);
    assert.deepEqual(
      events(recorder).filter((e) => e.includes('Successfully')),
      [
        'Normal Pulled Successfully pulled image "busybox:1.35" in 100ms (100ms including waiting). Image size: 1000000 bytes.',
        'Normal Pulled Successfully pulled image "busybox:1.35" in 100ms (200ms including waiting). Image size: 1000000 bytes.',
      ],
    );
  });

  it('uses matching imagePullSecrets', async () => {
    const dockerconfig = { auths: { 'https://index.docker.io/v1/': { auth: Buffer.from('bob:pw').toString('base64') }, 'registry.example:5000': { username: 'x', password: 'y' } } };
    const secret: Secret = { metadata: { name: 'regcred', namespace: 'ns' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(dockerconfig)).toString('base64') } };
    const { runtime, manager } = setup({ secrets: [secret] });
    const auths: (AuthConfig | undefined)[] = [];
    const pull = runtime.pullImage.bind(runtime);
    runtime.pullImage = (spec: ImageSpec, auth?: AuthConfig) => {
      auths.push(auth);
      return pull(spec);
    };
    const c: Container = { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'Always' };
    await manager.ensureImageExists(mkPod(c, { imagePullSecrets: [{ name: 'regcred' }, { name: 'missing' }] }), c, sandbox);
    assert.deepEqual(auths[0], { username: 'bob', password: 'pw', server_address: 'docker.io' });
    const c2: Container = { name: 'c', image: 'registry.example:5000/team/app:1', imagePullPolicy: 'Always' };
    await manager.ensureImageExists(mkPod(c2, { imagePullSecrets: [{ name: 'regcred' }] }), c2, sandbox);
    assert.deepEqual(auths[1], { username: 'x', password: 'y', server_address: 'registry.example:5000' });
  });

  describe('timeline', () => {
    it('a present image is an ImagePull with present=true and no wait', async () => {
      const { runtime, manager, steps, clock } = setup();
      runtime.addImage('busybox:1.35', { size: 2211 });
      const c: Container = { name: 'c', image: 'busybox:1.35' };
      await manager.ensureImageExists(mkPod(c), c, sandbox);
      const [step] = steps.steps('u1');
      assert.equal(step?.step, 'ImagePull');
      assert.equal(step?.component, 'kubelet/n1');
      assert.deepEqual(step?.attributes, { image: 'busybox:1.35', present: true, size: 2211 });
      assert.equal(step?.start, new Date(clock.now()).toISOString().replace('Z', '000Z'));
      assert.equal(step?.end, step?.start);
    });

    it('a pull: start when queued, the queue wait, end when pulled, the size', async () => {
      const { manager, clock, steps } = setup({ pullMs: 100 });
      const c: Container = { name: 'c', image: 'busybox:1.35', imagePullPolicy: 'Always' };
      const t0 = clock.now();
      const a = manager.ensureImageExists(mkPod(c), c, sandbox);
      const other: Pod = { ...mkPod(c), metadata: { name: 'p2', namespace: 'ns', uid: 'u2' } };
      const b = manager.ensureImageExists(other, c, sandbox);
      await clock.advance(200);
      await Promise.all([a, b]);
      const second = steps.steps('u2')[0]!;
      assert.equal(second.step, 'ImagePull');
      assert.equal(second.containerType, 'regular');
      assert.deepEqual(second.attributes, { image: 'busybox:1.35', size: 1_000_000, waitMs: 100 });
      assert.equal(second.start, new Date(t0).toISOString().replace('Z', '000Z'));
      assert.equal(second.end, new Date(t0 + 200).toISOString().replace('Z', '000Z'));
      assert.equal(steps.steps('u1')[0]!.attributes?.waitMs, 0);
    });

    it('pull failures are one ImagePullFailed series with the next retry; back-offs one BackOff series', async () => {
      const { runtime, manager, clock, steps } = setup();
      runtime.unpullable.add(normalizeImage('nope:1'));
      const c: Container = { name: 'c', image: 'nope:1' };
      const pod = mkPod(c);
      await manager.ensureImageExists(pod, c, sandbox);
      const t1 = clock.now();
      await clock.advance(5_000);
      await manager.ensureImageExists(pod, c, sandbox); // in back-off
      await manager.ensureImageExists(pod, c, sandbox); // the same back-off again
      await clock.advance(5_000);
      await manager.ensureImageExists(pod, c, sandbox); // fails again
      const failed = steps.steps('u1').filter((s) => s.step === 'ImagePullFailed');
      assert.equal(failed.length, 2);
      assert.equal(failed[1]!.count, 2);
      assert.equal(failed[1]!.start, new Date(t1).toISOString().replace('Z', '000Z'));
      assert.equal(failed[1]!.attributes?.nextRetry, new Date(t1 + 10_000 + 20_000).toISOString().replace('Z', '000Z'));
      assert.match(String(failed[1]!.attributes?.error), /not found/);
      const backOffs = steps.steps('u1').filter((s) => s.step === 'BackOff');
      assert.equal(backOffs.length, 1, 'one back-off period counts once');
      assert.deepEqual(backOffs[0]!.attributes, { reason: 'ImagePullBackOff', delayMs: 10_000, nextStart: new Date(t1 + 10_000).toISOString().replace('Z', '000Z') });
    });
  });
});
