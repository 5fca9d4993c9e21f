import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointAddress, EndpointSubset } from 'kubernetes-types/core/v1.js';
import { repackSubsets, truncateSubsets } from './subsets.js';

const addr = (ip: string): EndpointAddress => ({ ip, targetRef: { kind: 'Pod', name: ip, uid: `u-${ip}` } });
const http = { name: 'http', port: 80, protocol: 'TCP' };
const dns = { name: 'dns', port: 53, protocol: 'UDP' };

describe('Endpoints subsets', () => {
  it('repacks addresses offering the same ports into one subset, ready and not ready apart', () => {
    const out = repackSubsets([
      { addresses: [addr('10.0.0.2')], ports: [http] },
      { addresses: [addr('10.0.0.2')], ports: [dns] },
      { addresses: [addr('10.0.0.1')], ports: [http] },
      { addresses: [addr('10.0.0.1')], ports: [dns] },
      { notReadyAddresses: [addr('10.0.0.3')], ports: [http] },
      { notReadyAddresses: [addr('10.0.0.3')], ports: [dns] },
    ]);
    assert.deepEqual(out, [{ addresses: [addr('10.0.0.1'), addr('10.0.0.2')], notReadyAddresses: [addr('10.0.0.3')], ports: [dns, http] }]);
  });

  it('addresses with different ports get subsets of their own; portless subsets stay portless', () => {
    const out = repackSubsets([
      { addresses: [addr('10.0.0.1')], ports: [http] },
      { addresses: [addr('10.0.0.2')], ports: [{ ...http, port: 8080 }] },
    ]);
    assert.equal(out.length, 2);
    assert.deepEqual(repackSubsets([{ addresses: [addr('10.0.0.1')] }, { notReadyAddresses: [addr('10.0.0.2')] }]), [{ addresses: [addr('10.0.0.1')], notReadyAddresses: [addr('10.0.0.2')] }]);
  });

  it('cuts to 1,000 addresses: not-ready ones first, by share; all not-ready and ready by share when ready alone are too many', () => {
    const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => addr(`${prefix}.${i >> 8}.${i & 255}`));
    const [kept, cut] = truncateSubsets([
      { addresses: many('10.1', 600), notReadyAddresses: many('10.2', 300), ports: [http] },
      { addresses: many('10.3', 200), notReadyAddresses: many('10.4', 100), ports: [dns] },
    ]);
    assert.equal(cut, true);
    // 200 places for 400 not-ready: 150 and 50.
    assert.deepEqual(
      kept.map((s) => [s.addresses?.length, s.notReadyAddresses?.length]),
      [
        [600, 150],
        [200, 50],
      ],
    );
    const [readyCut] = truncateSubsets([
      { addresses: many('10.1', 900), notReadyAddresses: many('10.2', 5), ports: [http] },
      { addresses: many('10.3', 300), ports: [dns] },
    ] as EndpointSubset[]);
    assert.deepEqual(
      readyCut.map((s) => [s.addresses?.length, s.notReadyAddresses]),
      [
        [750, undefined],
        [250, undefined],
      ],
    );
    assert.equal(truncateSubsets([{ addresses: many('10.1', 1000) }])[1], false);
  });
});
