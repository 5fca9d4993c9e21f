import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { containerdConfigToml, containerdPaths, hostsToml, mirroredRegistryHosts } from './config.js';

describe('containerd config.toml', () => {
  const toml = containerdConfigToml({ dataDir: '/data/ctd', registryHost: '127.0.0.1:5000', sandboxImage: 'registry.k8s.io/pause:3.10' });
  const line = (re: RegExp) => assert.match(toml, re);

  it('keeps root, state and sockets under the data dir', () => {
    line(/^version = 2$/m);
    line(/^root = "\/data\/ctd\/root"$/m);
    line(/^state = "\/data\/ctd\/state"$/m);
    line(/\[grpc\]\n {2}address = "\/data\/ctd\/containerd\.sock"/);
    line(/\[ttrpc\]\n {2}address = "\/data\/ctd\/containerd\.sock\.ttrpc"/);
    line(/Root = "\/data\/ctd\/state\/runc"/);
    assert.doesNotMatch(toml, /\/run\/containerd|\/var\/lib\/containerd|\/etc\/cni/);
  });

  it('has the CRI settings these machines need', () => {
    for (const re of [
      /^ {2}sandbox_image = "registry\.k8s\.io\/pause:3\.10"$/m,
      /^ {2}restrict_oom_score_adj = true$/m,
      /^ {2}tolerate_missing_hugetlb_controller = true$/m,
      /^ {2}disable_hugetlb_controller = true$/m,
      /^ {2}netns_mounts_under_state_dir = true$/m,
      /^ {2}stream_server_address = "127\.0\.0\.1"$/m,
      /^ {8}SystemdCgroup = false$/m,
      /runtime_type = "io\.containerd\.runc\.v2"/,
    ]) line(re);
  });

  it('points CNI at the Debian plugins and one conf file under the data dir', () => {
    line(/\.cni\]\n {4}bin_dir = "\/usr\/lib\/cni"\n {4}conf_dir = "\/data\/ctd\/cni\/net\.d"\n {4}max_conf_num = 1/);
  });

  it('uses config_path (not registry.mirrors) for the registry hosts', () => {
    line(/\.registry\]\n {4}config_path = "\/data\/ctd\/certs\.d"/);
    assert.doesNotMatch(toml, /mirrors/);
  });

  it('quotes paths as TOML strings', () => {
    assert.match(containerdConfigToml({ dataDir: '/d "q"', registryHost: 'h:1', sandboxImage: 'p' }), /^root = "\/d \\"q\\"\/root"$/m);
  });
});

describe('hosts.toml', () => {
  it('sends every registry host only to the local registry over http', () => {
    assert.equal(hostsToml('127.0.0.1:5000'), '# Written by kite: pulls resolve to the node\'s local registry.\nserver = "http://127.0.0.1:5000"\n\n[host."http://127.0.0.1:5000"]\n  capabilities = ["pull", "resolve"]\n');
  });
  it('covers docker.io, registry.k8s.io and every other host', () => {
    assert.deepEqual(mirroredRegistryHosts, ['docker.io', 'registry.k8s.io', '_default']);
  });
  it('keeps paths apart per data dir', () => {
    const a = containerdPaths('/a');
    const b = containerdPaths('/b');
    for (const k of Object.keys(a) as (keyof typeof a)[]) assert.notEqual(a[k], b[k], k);
  });
});
