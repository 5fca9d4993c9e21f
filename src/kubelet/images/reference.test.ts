import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaultImageTag, parseImageName } from './reference.js';

describe('parseImageName', () => {
  for (const [image, repository, tag, digest] of [
    ['busybox', 'docker.io/library/busybox', 'latest', ''],
    ['busybox:1.35', 'docker.io/library/busybox', '1.35', ''],
    ['team/app:v1', 'docker.io/team/app', 'v1', ''],
    ['127.0.0.1:5000/busybox:1.35', '127.0.0.1:5000/busybox', '1.35', ''],
    ['localhost/pause', 'localhost/pause', 'latest', ''],
    ['registry.k8s.io/pause:3.10', 'registry.k8s.io/pause', '3.10', ''],
    [`busybox@sha256:${'a'.repeat(64)}`, 'docker.io/library/busybox', '', `sha256:${'a'.repeat(64)}`],
  ] as const) {
    it(image, () => assert.deepEqual(parseImageName(image), { repository, tag, digest, domain: repository.split('/')[0] }));
  }
  it('rejects bad references', () => {
    assert.throws(() => parseImageName('a'.repeat(64)), /cannot specify 64-byte hexadecimal strings/);
    assert.throws(() => parseImageName(''), /couldn't parse image name "": repository name must have at least one component/);
  });
});

describe('applyDefaultImageTag', () => {
  it('appends :latest only without tag or digest', () => {
    assert.equal(applyDefaultImageTag('busybox'), 'busybox:latest');
    assert.equal(applyDefaultImageTag('busybox:1.35'), 'busybox:1.35');
    assert.equal(applyDefaultImageTag('127.0.0.1:5000/busybox'), '127.0.0.1:5000/busybox:latest');
    assert.equal(applyDefaultImageTag(`busybox@sha256:${'b'.repeat(64)}`), `busybox@sha256:${'b'.repeat(64)}`);
  });
});
