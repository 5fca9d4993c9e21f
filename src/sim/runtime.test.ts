import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerID, imageID, imageRef, MAX_NODES, nodeIP, PodIPAM } from './runtime.js';

test('image references are normalised as containerd reports them', () => {
  const cases: [string, string][] = [
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['bitnami/redis', 'docker.io/bitnami/redis:latest'],
    ['registry.k8s.io/pause:3.10', 'registry.k8s.io/pause:3.10'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    ['localhost/app:v1', 'localhost/app:v1'],
    ['busybox@sha256:abc', 'docker.io/library/busybox@sha256:abc'],
  ];
  for (const [image, want] of cases) assert.equal(imageRef(image), want, image);
  assert.match(imageID('nginx'), /^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
  assert.equal(imageID('nginx'), imageID('docker.io/library/nginx:latest'));
  assert.equal(imageID('busybox@sha256:abc'), 'docker.io/library/busybox@sha256:abc');
});

test('container IDs are stable per restart and change with it', () => {
  assert.equal(containerID('u', 'app', 0), containerID('u', 'app', 0));
  assert.notEqual(containerID('u', 'app', 0), containerID('u', 'app', 1));
  assert.notEqual(containerID('u', 'app', 0), containerID('v', 'app', 0));
});

test('node and pod addresses: reserved blocks, one /23 of pod IPs per node, lowest free first', () => {
  assert.equal(nodeIP(0), '198.18.0.1');
  assert.equal(nodeIP(4999), '198.18.19.136');
  assert.equal(MAX_NODES, 8192);
  const ipam = new PodIPAM();
  assert.equal(ipam.allocate('a', 0), '100.64.0.1');
  assert.equal(ipam.allocate('a', 0), '100.64.0.1');
  assert.equal(ipam.allocate('b', 0), '100.64.0.2');
  assert.equal(ipam.allocate('c', 1), '100.64.2.1');
  assert.equal(ipam.allocate('z', MAX_NODES - 1), '100.127.254.1');
  ipam.release('a');
  // An IP a pod already had (the simulator restarted) is not handed out again.
  ipam.reserve('d', 0, '100.64.0.1');
  assert.equal(ipam.allocate('e', 0), '100.64.0.3');
  for (let i = 0; i < 507; i++) assert.ok(ipam.allocate(`f${i}`, 0));
  assert.equal(ipam.allocate('full', 0), undefined);
});
