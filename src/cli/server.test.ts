import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../util/args.js';
import { serverOptions } from './server.js';
import { newLogger } from '../util/log.js';

const optionsOf = (...argv: string[]) => serverOptions(parseArgs(['--data-dir', 'd', ...argv]), newLogger('test'));

describe('kite server request limits', () => {
  it("defaults to upstream's", () => {
    assert.deepEqual(optionsOf().limits, { requestTimeoutMs: 60_000, maxRequestsInflight: 400, maxMutatingRequestsInflight: 200 });
  });
  it('reads the flags', () => {
    assert.deepEqual(optionsOf('--request-timeout', '2s', '--max-requests-inflight', '0', '--max-mutating-requests-inflight', '5').limits, {
      requestTimeoutMs: 2000,
      maxRequestsInflight: 0,
      maxMutatingRequestsInflight: 5,
    });
  });
  it('refuses bad values in one line', () => {
    assert.throws(() => optionsOf('--max-requests-inflight', '-1'), /^Error: --max-requests-inflight must be a whole number, got "-1"$/);
    assert.throws(() => optionsOf('--request-timeout', '0s'), /^Error: --request-timeout must be positive/);
    assert.throws(() => optionsOf('--request-timeout', 'soon'), /invalid duration "soon"/);
  });
});

describe('kite server admission flags', () => {
  it('passes the lists on and refuses an unknown plugin in one line', () => {
    assert.deepEqual(optionsOf('--disable-admission-plugins', 'Priority,ServiceAccount').admission, { enable: undefined, disable: ['Priority', 'ServiceAccount'] });
    assert.throws(() => optionsOf('--enable-admission-plugins', 'Bogus'), /^Error: enable-admission-plugins plugin "Bogus" is unknown$/);
  });
});

describe('kite server controller flags', () => {
  it('passes --terminated-pod-gc-threshold on, and the controllers their service accounts', () => {
    assert.equal(optionsOf().terminatedPodGCThreshold, undefined);
    assert.equal(optionsOf('--terminated-pod-gc-threshold', '100').terminatedPodGCThreshold, 100);
    assert.throws(() => optionsOf('--terminated-pod-gc-threshold', 'many'), /^Error: --terminated-pod-gc-threshold must be a whole number, got "many"$/);
    assert.ok(optionsOf().controllerIdentities?.includes('pod-garbage-collector'));
  });

  it('passes --horizontal-pod-autoscaler-sync-period on as milliseconds', () => {
    assert.equal(optionsOf().horizontalPodAutoscalerSyncPeriodMs, undefined);
    assert.equal(optionsOf('--horizontal-pod-autoscaler-sync-period', '5s').horizontalPodAutoscalerSyncPeriodMs, 5000);
    assert.equal(optionsOf('--resource-quota-sync-period', '30s').resourceQuotaSyncPeriodMs, 30_000);
    assert.throws(() => optionsOf('--horizontal-pod-autoscaler-sync-period', '0s'), /^Error: --horizontal-pod-autoscaler-sync-period must be positive, got "0s"$/);
    assert.ok(optionsOf().controllerIdentities?.includes('horizontal-pod-autoscaler'));
  });
});

describe('kite server node lifecycle flags', () => {
  it('passes only the flags given on, durations in milliseconds', () => {
    assert.deepEqual(optionsOf().nodeLifecycle, {});
    assert.deepEqual(
      optionsOf(
        '--node-monitor-period', '2s',
        '--node-monitor-grace-period', '20s',
        '--node-startup-grace-period', '1m30s',
        '--node-eviction-rate', '0.5',
        '--secondary-node-eviction-rate', '0',
        '--large-cluster-size-threshold', '10',
        '--unhealthy-zone-threshold', '.7',
      ).nodeLifecycle,
      { nodeMonitorPeriodMs: 2000, nodeMonitorGracePeriodMs: 20_000, nodeStartupGracePeriodMs: 90_000, nodeEvictionRate: 0.5, secondaryNodeEvictionRate: 0, largeClusterSizeThreshold: 10, unhealthyZoneThreshold: 0.7 },
    );
    assert.ok(optionsOf().controllerIdentities?.includes('node-controller'));
  });

  it('refuses bad values in one line', () => {
    const cases: [string[], RegExp][] = [
      [['--node-monitor-grace-period', '0s'], /^Error: --node-monitor-grace-period must be positive, got "0s"$/],
      [['--node-monitor-period', 'often'], /^Error: invalid duration "often"$/],
      [['--node-eviction-rate', '-1'], /^Error: --node-eviction-rate must be a non-negative number, got "-1"$/],
      [['--secondary-node-eviction-rate', '1e3'], /^Error: --secondary-node-eviction-rate must be a non-negative number, got "1e3"$/],
      [['--large-cluster-size-threshold', '5.5'], /^Error: --large-cluster-size-threshold must be a whole number, got "5.5"$/],
      [['--unhealthy-zone-threshold', '1.5'], /^Error: --unhealthy-zone-threshold must be between 0 and 1, got 1.5$/],
    ];
    for (const [argv, error] of cases) assert.throws(() => optionsOf(...argv), error, argv.join(' '));
  });
});

describe('kite server endpoint flags', () => {
  it('--max-endpoints-per-slice within 1..1000; --advertise-address an IP pods can reach', () => {
    assert.equal(optionsOf('--max-endpoints-per-slice', '50').maxEndpointsPerSlice, 50);
    assert.throws(() => optionsOf('--max-endpoints-per-slice', '0'), /^Error: --max-endpoints-per-slice must be between 1 and 1000, got 0$/);
    assert.equal(optionsOf('--advertise-address', '10.217.0.1').advertiseAddress, '10.217.0.1');
    assert.throws(() => optionsOf('--advertise-address', 'kite.local'), /^Error: --advertise-address must be an IP address, got "kite.local"$/);
    assert.throws(() => optionsOf('--advertise-address', '127.0.0.1'), /^Error: --advertise-address may not be unspecified or loopback, got "127.0.0.1"$/);
  });
});

describe('kite server service ranges', () => {
  it('passes them on and refuses bad ones in one line', () => {
    const opts = optionsOf('--service-cluster-ip-range', '10.100.0.0/16', '--service-node-port-range', '31000-31999');
    assert.equal(opts.serviceClusterIPRange, '10.100.0.0/16');
    assert.deepEqual(opts.serviceNodePortRange, { base: 31000, size: 1000 });
    assert.equal(optionsOf().serviceClusterIPRange, undefined);
    assert.throws(() => optionsOf('--service-cluster-ip-range', '10.100.0.1/16'), /^Error: --service-cluster-ip-range: "10.100.0.1\/16" must be in canonical form \("10.100.0.0\/16"\)$/);
    assert.throws(() => optionsOf('--service-cluster-ip-range', '10.0.0.0/8'), /^Error: specified --service-cluster-ip-range\[0\] is too large; for 32-bit addresses, the mask must be >= 12$/);
    assert.throws(() => optionsOf('--service-cluster-ip-range', '10.96.0.0/12,10.200.0.0/16'), /one of each IP family/);
    assert.throws(() => optionsOf('--service-node-port-range', '32767-30000'), /^Error: invalid port range "32767-30000"/);
  });
});

describe('kite server pod timeline flags', () => {
  it('keeps timelines by default and reads --pod-timeline, its retention and its cap', () => {
    assert.deepEqual(optionsOf().podTimeline, { enabled: true, retentionMs: undefined, maxPods: undefined });
    assert.deepEqual(optionsOf('--pod-timeline=false', '--pod-timeline-retention', '1h', '--pod-timeline-max-pods', '500').podTimeline, { enabled: false, retentionMs: 3_600_000, maxPods: 500 });
  });
  it('refuses bad values in one line', () => {
    assert.throws(() => optionsOf('--pod-timeline', 'maybe'), /^Error: --pod-timeline must be true or false, got "maybe"$/);
    assert.throws(() => optionsOf('--pod-timeline-max-pods', '0'), /^Error: --pod-timeline-max-pods must be positive$/);
    assert.throws(() => optionsOf('--pod-timeline-retention', '0s'), /^Error: --pod-timeline-retention must be positive/);
  });
});

describe('kite server --otlp-endpoint', () => {
  it('passes an http(s) URL on, exports nothing without it, and refuses anything else in one line', () => {
    assert.equal(optionsOf().otlpEndpoint, undefined);
    assert.equal(optionsOf('--otlp-endpoint', 'http://127.0.0.1:4318/v1/traces').otlpEndpoint, 'http://127.0.0.1:4318/v1/traces');
    assert.throws(() => optionsOf('--otlp-endpoint', 'grpc://127.0.0.1:4317'), /^Error: --otlp-endpoint must be an http or https URL, got "grpc:\/\/127.0.0.1:4317"$/);
    assert.throws(() => optionsOf('--otlp-endpoint', 'collector:4318'), /^Error: --otlp-endpoint must be an http or https URL/);
  });
});
