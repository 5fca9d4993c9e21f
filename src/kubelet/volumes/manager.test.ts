import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigMap, Pod, Secret, Volume } from '../../api/types.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { writeAtomic } from './atomic-writer.js';
import { KubeletVolumeManager, VolumeMountError } from './manager.js';
import { mountsBelow, parseMountPoints, type Mounter } from './mounter.js';
import { TokenManager } from '../token/manager.js';
import { FakeClock } from '../../util/clock.js';
import { rfc3339 } from '../../api/time.js';

class FakeMounter implements Mounter {
  readonly mounted = new Map<string, number | undefined>();
  async mountTmpfs(target: string, sizeBytes?: number) {
    this.mounted.set(target, sizeBytes);
  }
  async unmount(target: string) {
    this.mounted.delete(target);
  }
  async mountsUnder(dir: string) {
    return mountsBelow([...this.mounted.keys()], dir);
  }
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const cm: ConfigMap = { metadata: { name: 'cfg', namespace: 'ns' }, data: { 'app.conf': 'port=80', other: 'x' }, binaryData: { 'bin': b64('\x00\x01') } };
const secret: Secret = { metadata: { name: 's', namespace: 'ns' }, data: { password: b64('hunter2') } };

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'kite-volumes-'));
  const mounter = new FakeMounter();
  const recorder = new FakeRecorder();
  const cms = new Map([['cfg', cm]]);
  const manager = new KubeletVolumeManager({
    cfg: { rootDir: root },
    sources: { getConfigMap: async (_ns, n) => cms.get(n), getSecret: async (_ns, n) => (n === 's' ? secret : undefined) },
    recorder,
    mounter,
    nodeAllocatable: { memory: '1Gi', cpu: '2' },
  });
  return { root, mounter, recorder, manager, cms };
}

const mkPod = (volumes: Volume[], mounts: { name: string; mountPath: string; readOnly?: boolean; subPath?: string; subPathExpr?: string }[] = []): Pod => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'u1', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', volumeMounts: mounts, resources: { limits: { cpu: '500m', memory: '256Mi' } } }], volumes },
});

describe('KubeletVolumeManager', () => {
  it('configMap, secret, downwardAPI and projected files with modes, read-only mounts', async () => {
    const { root, manager } = setup();
    const pod = mkPod(
      [
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'items', configMap: { name: 'cfg', items: [{ key: 'app.conf', path: 'conf/app.conf', mode: 0o600 }] } },
        { name: 'sec', secret: { secretName: 's', defaultMode: 0o400 } },
        { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' } }] } },
        { name: 'all', projected: { sources: [{ configMap: { name: 'cfg', items: [{ key: 'other', path: 'o' }] } }, { secret: { name: 's' } }, { downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } }] } },
      ],
      [{ name: 'cfg', mountPath: '/etc/app' }, { name: 'sec', mountPath: '/secret' }],
    );
    const volumes = await manager.mountPod(pod);
    const base = join(root, 'pods', 'u1', 'volumes');
    const cfgDir = join(base, 'kubernetes.io~configmap', 'cfg');
    assert.equal(readFileSync(join(cfgDir, 'app.conf'), 'utf8'), 'port=80');
    assert.deepEqual(readFileSync(join(cfgDir, 'bin')), Buffer.from([0, 1]));
    assert.equal(readlinkSync(join(cfgDir, 'app.conf')), '..data/app.conf');
    assert.match(readlinkSync(join(cfgDir, '..data')), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./);
    assert.equal(statSync(join(cfgDir, 'app.conf')).mode & 0o777, 0o644);
    const itemsDir = join(base, 'kubernetes.io~configmap', 'items');
    assert.deepEqual(readdirSync(itemsDir).filter((n) => !n.startsWith('..')), ['conf']);
    assert.equal(statSync(join(itemsDir, 'conf', 'app.conf')).mode & 0o777, 0o600);
    const secDir = join(base, 'kubernetes.io~secret', 'sec');
    assert.equal(readFileSync(join(secDir, 'password'), 'utf8'), 'hunter2');
    assert.equal(statSync(join(secDir, 'password')).mode & 0o777, 0o400);
    const infoDir = join(base, 'kubernetes.io~downward-api', 'info');
    assert.equal(readFileSync(join(infoDir, 'labels'), 'utf8'), 'app="web"');
    assert.equal(readFileSync(join(infoDir, 'mem'), 'utf8'), '256');
    const allDir = join(base, 'kubernetes.io~projected', 'all');
    assert.deepEqual(readdirSync(allDir).filter((n) => !n.startsWith('..')).sort(), ['name', 'o', 'password']);

    assert.deepEqual(volumes.mounts(pod.spec!.containers[0]!), [
      { container_path: '/etc/app', host_path: cfgDir, readonly: true, propagation: 'PROPAGATION_PRIVATE' },
      { container_path: '/secret', host_path: secDir, readonly: true, propagation: 'PROPAGATION_PRIVATE' },
    ]);
  });

  it('an update swaps ..data and removes stale files and the old folder', async () => {
    const { root, manager, cms } = setup();
    const pod = mkPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    await manager.mountPod(pod);
    const dir = join(root, 'pods', 'u1', 'volumes', 'kubernetes.io~configmap', 'cfg');
    const first = readlinkSync(join(dir, '..data'));
    await manager.mountPod(pod);
    assert.equal(readlinkSync(join(dir, '..data')), first, 'unchanged content keeps the folder');
    cms.set('cfg', { metadata: { name: 'cfg' }, data: { 'app.conf': 'port=81' } });
    await manager.mountPod(pod);
    const second = readlinkSync(join(dir, '..data'));
    assert.notEqual(second, first);
    assert.equal(readFileSync(join(dir, 'app.conf'), 'utf8'), 'port=81');
    assert.equal(existsSync(join(dir, 'other')), false);
    assert.equal(existsSync(join(dir, first)), false);
  });

  it('FailedMount for a missing configMap or secret unless optional', async () => {
    const { manager, recorder } = setup();
    await assert.rejects(manager.mountPod(mkPod([{ name: 'v', configMap: { name: 'nope' } }])), (e: Error) => e instanceof VolumeMountError && e.message === 'MountVolume.SetUp failed for volume "v" : configmap "nope" not found');
    await assert.rejects(manager.mountPod(mkPod([{ name: 'v', secret: { secretName: 'nope' } }])), /MountVolume.SetUp failed for volume "v" : secret "nope" not found/);
    await assert.rejects(manager.mountPod(mkPod([{ name: 'v', configMap: { name: 'cfg', items: [{ key: 'k', path: 'k' }] } }])), /configmap references non-existent config key: k/);
    await assert.rejects(manager.mountPod(mkPod([{ name: 'v', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }])), /failed to fetch token/);
    assert.deepEqual(recorder.events.map((e) => [e.type, e.reason, e.object.name]).slice(0, 1), [['Warning', 'FailedMount', 'web']]);
    await manager.mountPod(mkPod([{ name: 'v', configMap: { name: 'nope', optional: true } }, { name: 'w', secret: { secretName: 'nope', optional: true } }]));
  });

  it('a serviceAccountToken projection is bound to the pod, and a resync writes the rotated token', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kite-volumes-'));
    const clock = new FakeClock();
    const asked: unknown[] = [];
    let issued = 0;
    const tokens = new TokenManager({
      clock,
      random: () => 0,
      request: async (ns, name, tr) => {
        asked.push([ns, name, tr.spec]);
        return { ...tr, status: { token: `token-${++issued}`, expirationTimestamp: rfc3339(clock.now() + tr.spec.expirationSeconds! * 1000) } };
      },
    });
    const manager = new KubeletVolumeManager({ cfg: { rootDir: root }, sources: { getConfigMap: async () => undefined, getSecret: async () => undefined }, mounter: new FakeMounter(), tokens });
    const pod = mkPod([{ name: 'api', projected: { defaultMode: 0o644, sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607, audience: 'vault' } }] } }]);
    pod.spec!.serviceAccountName = 'robot';
    const file = join(root, 'pods', 'u1', 'volumes', 'kubernetes.io~projected', 'api', 'token');
    await manager.mountPod(pod);
    assert.equal(readFileSync(file, 'utf8'), 'token-1');
    assert.deepEqual(asked[0], ['ns', 'robot', { audiences: ['vault'], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' } }]);
    await clock.advance(60_000);
    await manager.mountPod(pod);
    assert.equal(readFileSync(file, 'utf8'), 'token-1');
    await clock.advance(2900_000);
    await manager.mountPod(pod);
    assert.equal(readFileSync(file, 'utf8'), 'token-2');
    rmSync(root, { recursive: true, force: true });
  });

  it('emptyDir, memory medium as tmpfs sized by the smallest limit, subPath, teardown', async () => {
    const { root, manager, mounter } = setup();
    const pod = mkPod(
      [
        { name: 'scratch', emptyDir: {} },
        { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } },
      ],
      [{ name: 'scratch', mountPath: '/s', subPath: 'a/b' }, { name: 'mem', mountPath: '/m', readOnly: true }, { name: 'scratch', mountPath: '/e', subPathExpr: '$(POD)' }],
    );
    const volumes = await manager.mountPod(pod);
    const scratch = join(root, 'pods', 'u1', 'volumes', 'kubernetes.io~empty-dir', 'scratch');
    const mem = join(root, 'pods', 'u1', 'volumes', 'kubernetes.io~empty-dir', 'mem');
    assert.equal(statSync(scratch).mode & 0o777, 0o777);
    assert.deepEqual([...mounter.mounted], [[mem, 256 * 1024 * 1024]]);
    const mounts = volumes.mounts(pod.spec!.containers[0]!, [{ key: 'POD', value: 'web' }]);
    assert.deepEqual(mounts.map((m) => [m.container_path, m.host_path, m.readonly]), [
      ['/s', join(scratch, 'a/b'), false],
      ['/m', mem, true],
      ['/e', join(scratch, 'web'), false],
    ]);
    assert.ok(statSync(join(scratch, 'a/b')).isDirectory());
    assert.throws(() => volumes.mounts({ name: 'c', volumeMounts: [{ name: 'scratch', mountPath: '/x', subPath: '../up' }] }), /must not contain '\.\.'/);
    assert.throws(() => volumes.mounts({ name: 'c', volumeMounts: [{ name: 'gone', mountPath: '/x' }] }), /cannot find volume "gone" to mount into container "c"/);

    await manager.unmountPod('u1');
    assert.equal(mounter.mounted.size, 0);
    assert.equal(existsSync(join(root, 'pods', 'u1')), false);
  });

  it('hostPath type checks', async () => {
    const { root, manager } = setup();
    const file = join(root, 'file');
    writeFileSync(file, '');
    mkdirSync(join(root, 'dir'));
    const check = (path: string, type?: string) => manager.mountPod(mkPod([{ name: 'h', hostPath: { path, type } }]));
    await check(join(root, 'dir'), 'Directory');
    await check(file, 'File');
    await check(join(root, 'whatever'));
    await check(join(root, 'made'), 'DirectoryOrCreate');
    assert.ok(statSync(join(root, 'made')).isDirectory());
    await check(join(root, 'made-file'), 'FileOrCreate');
    assert.ok(lstatSync(join(root, 'made-file')).isFile());
    for (const [path, type, what] of [
      [file, 'Directory', 'a directory'],
      [join(root, 'missing'), 'Directory', 'a directory'],
      [file, 'DirectoryOrCreate', 'a directory'],
      [join(root, 'dir'), 'File', 'a file'],
      [file, 'Socket', 'a socket file'],
      [file, 'CharDevice', 'a character device'],
      [file, 'BlockDevice', 'a block device'],
    ] as const) {
      await assert.rejects(check(path, type), { message: `MountVolume.SetUp failed for volume "h" : hostPath type check failed: ${path} is not ${what}` });
    }
    const volumes = await check(join(root, 'dir'), 'Directory');
    assert.deepEqual(volumes.mounts({ name: 'c', volumeMounts: [{ name: 'h', mountPath: '/h' }] }), [{ container_path: '/h', host_path: join(root, 'dir'), readonly: false, propagation: 'PROPAGATION_PRIVATE' }]);
  });

  it('unmountPod refuses to delete through a mount that stays', async () => {
    const { root, manager, mounter } = setup();
    await manager.mountPod(mkPod([{ name: 'mem', emptyDir: { medium: 'Memory' } }]));
    mounter.unmount = async () => undefined;
    await assert.rejects(manager.unmountPod('u1'), /still has mounts/);
    assert.ok(existsSync(join(root, 'pods', 'u1')));
  });
});

describe('atomic writer', () => {
  it('rejects unsafe paths', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kite-aw-'));
    try {
      for (const p of ['/abs', 'a/../b', '..x']) {
        await assert.rejects(writeAtomic(dir, new Map([[p, { data: Buffer.from(''), mode: 0o644 }]])), /invalid path/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mountinfo', () => {
  it('parses and orders mount points deepest first', () => {
    const info = '36 35 0:31 / /a rw - tmpfs tmpfs rw\n37 36 0:32 / /a/b\\040c rw - tmpfs tmpfs rw\n38 1 0:33 / /ab rw - tmpfs tmpfs rw\n';
    assert.deepEqual(mountsBelow(parseMountPoints(info), '/a'), ['/a/b c', '/a']);
  });
});
