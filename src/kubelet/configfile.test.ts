import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseKubeletConfiguration } from './configfile.js';

const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

describe('KubeletConfiguration file', () => {
  it('reads the fields kite honours, with upstream units', () => {
    const cfg = parseKubeletConfiguration(
      header + 'maxPods: 50\nclusterDomain: example.local\nclusterDNS: [10.96.0.10]\ncontainerLogMaxSize: 5Mi\ncontainerLogMaxFiles: 3\nnodeStatusUpdateFrequency: 20s\ncrashLoopBackOff:\n  maxContainerRestartPeriod: 1m30s\n',
      'kubelet.yaml',
    );
    assert.deepEqual(cfg, {
      maxPods: 50,
      clusterDomain: 'example.local',
      clusterDNS: ['10.96.0.10'],
      containerLogMaxSize: 5 * 1024 * 1024,
      containerLogMaxFiles: 3,
      nodeStatusUpdateFrequencyMs: 20_000,
      crashLoopBackOffMaxMs: 90_000,
    });
  });

  it('refuses unknown fields, wrong types and other kinds, naming them', () => {
    assert.throws(() => parseKubeletConfiguration(header + 'maxPod: 5\n', 'f'), /unknown field "maxPod"/);
    assert.throws(() => parseKubeletConfiguration(header + 'maxPods: "5"\n', 'f'), /maxPods: expected an integer/);
    assert.throws(() => parseKubeletConfiguration(header + 'crashLoopBackOff: {maxContainerRestartPeriod: 10x}\n', 'f'), /invalid duration/);
    assert.throws(() => parseKubeletConfiguration(header + 'crashLoopBackOff: {maxContainerRestartPeriod: 500ms}\n', 'f'), /at least 1s/);
    assert.throws(() => parseKubeletConfiguration('apiVersion: v1\nkind: Pod\n', 'f'), /expected apiVersion kubelet.config.k8s.io\/v1beta1/);
    assert.throws(() => parseKubeletConfiguration(header + 'a: [\n', 'f'), /^Error: f: /);
    assert.throws(() => parseKubeletConfiguration(header + 'clusterDNS: [kube-dns]\n', 'f'), /clusterDNS: expected a list of IP addresses/);
  });

  it('reads the eviction fields; a bad signal, value or missing soft grace period is refused with upstream\'s message', () => {
    const cfg = parseKubeletConfiguration(
      header +
        'evictionHard: {memory.available: 1Gi, nodefs.available: "5%"}\nevictionSoft: {memory.available: 2Gi}\nevictionSoftGracePeriod: {memory.available: 1m}\n' +
        'evictionMinimumReclaim: {memory.available: 100Mi}\nevictionMaxPodGracePeriod: 20\nevictionPressureTransitionPeriod: 30s\n',
      'f',
    );
    assert.deepEqual(cfg, {
      evictionHard: { 'memory.available': '1Gi', 'nodefs.available': '5%' },
      evictionSoft: { 'memory.available': '2Gi' },
      evictionSoftGracePeriod: { 'memory.available': '1m' },
      evictionMinimumReclaim: { 'memory.available': '100Mi' },
      evictionMaxPodGracePeriod: 20,
      evictionPressureTransitionPeriodMs: 30_000,
    });
    const bad: [string, RegExp][] = [
      ['evictionHard: {memory.free: 1Gi}\n', /^Error: f: unsupported eviction signal memory\.free$/],
      ['evictionHard: {memory.available: 1Gi, nodefs.available: 200%}\n', /f: eviction percentage threshold nodefs\.available must be <= 100%: 200%$/],
      ['evictionHard: {memory.available: 100Mi}\nevictionSoft: {nodefs.available: 20%}\n', /f: grace period must be specified for the soft eviction threshold nodefs\.available$/],
      ['evictionHard: [memory.available]\n', /f: evictionHard: expected a map of eviction signal to string$/],
      ['evictionSoft: {memory.available: 5}\n', /f: evictionSoft\.memory\.available: expected a string, got 5$/],
      ['evictionMaxPodGracePeriod: -1\n', /f: evictionMaxPodGracePeriod: expected an integer >= 0/],
      ['evictionPressureTransitionPeriod: 5 minutes\n', /invalid duration/],
    ];
    for (const [text, err] of bad) assert.throws(() => parseKubeletConfiguration(header + text, 'f'), err, text);
  });

  it('reads image GC and graceful shutdown settings with upstream validation', () => {
    assert.deepEqual(
      parseKubeletConfiguration(header + 'imageGCHighThresholdPercent: 90\nimageGCLowThresholdPercent: 70\nimageMinimumGCAge: 1m\nimageMaximumGCAge: 2h\nshutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 10s\n', 'f'),
      { imageGCHighThresholdPercent: 90, imageGCLowThresholdPercent: 70, imageMinimumGCAgeMs: 60_000, imageMaximumGCAgeMs: 7_200_000, shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 },
    );
    const refused: [string, RegExp][] = [
      ['imageGCHighThresholdPercent: 101', /imageGCHighThresholdPercent \(--image-gc-high-threshold\) 101 must be between 0 and 100, inclusive/],
      ['imageGCLowThresholdPercent: -1', /imageGCLowThresholdPercent \(--image-gc-low-threshold\) -1 must be between 0 and 100/],
      ['imageGCLowThresholdPercent: 85', /imageGCLowThresholdPercent \(--image-gc-low-threshold\) 85 must be less than imageGCHighThresholdPercent \(--image-gc-high-threshold\) 85/],
      ['imageMaximumGCAge: 1m', /imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 2m0s/],
      ['shutdownGracePeriodCriticalPods: 10s', /shutdownGracePeriodCriticalPods 10s must be <= shutdownGracePeriod 0s/],
      ['shutdownGracePeriod: 1500ms', /must be whole seconds/],
      ['shutdownGracePeriod: 20', /shutdownGracePeriod: expected a duration string/],
    ];
    for (const [line, err] of refused) assert.throws(() => parseKubeletConfiguration(header + line + '\n', 'f'), err, line);
  });
});
