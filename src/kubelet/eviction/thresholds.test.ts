import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_EVICTION_HARD, hardEvictionReservation, hardThresholds, parseThresholdConfig, thresholdQuantity, type EvictionConfigMaps, type Threshold } from './thresholds.js';

const maps = (m: Partial<EvictionConfigMaps>): EvictionConfigMaps => ({ evictionHard: {}, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, ...m });

/** A threshold as a short string: signal<value[/grace][+minReclaim]. */
function show(t: Threshold): string {
  const v = (x: Threshold['value']) => ('quantity' in x ? x.quantity.toString() : `${Math.round(x.percentage * 10000) / 100}%`);
  return `${t.signal}<${v(t.value)}${t.gracePeriodMs ? `/${t.gracePeriodMs}ms` : ''}${t.minReclaim ? `+${v(t.minReclaim)}` : ''}`;
}

describe('eviction threshold config', () => {
  const valid: { name: string; in: Partial<EvictionConfigMaps>; want: string[] }[] = [
    {
      name: 'the defaults, with the allocatable copy of memory.available',
      in: { evictionHard: DEFAULT_EVICTION_HARD },
      want: ['memory.available<100Mi', 'nodefs.available<10%', 'nodefs.inodesFree<5%', 'imagefs.available<15%', 'imagefs.inodesFree<5%', 'allocatableMemory.available<100Mi'],
    },
    { name: '0% and 100% disable a signal', in: { evictionHard: { 'memory.available': '0%', 'nodefs.available': '100%', 'pid.available': '1k' } }, want: ['pid.available<1k'] },
    {
      name: 'soft thresholds take their grace period; min-reclaim applies to hard and soft',
      in: {
        evictionHard: { 'memory.available': '200Mi' },
        evictionSoft: { 'memory.available': '1Gi', 'nodefs.available': '20%' },
        evictionSoftGracePeriod: { 'memory.available': '1m30s', 'nodefs.available': '10s', 'imagefs.available': '5s' },
        evictionMinimumReclaim: { 'memory.available': '0.5Gi' },
      },
      want: ['memory.available<200Mi+512Mi', 'memory.available<1Gi/90000ms+512Mi', 'nodefs.available<20%/10000ms', 'allocatableMemory.available<200Mi+512Mi'],
    },
  ];
  for (const c of valid) {
    it(c.name, () => assert.deepEqual(parseThresholdConfig(maps(c.in)).map(show), c.want));
  }

  const invalid: { in: Partial<EvictionConfigMaps>; err: RegExp }[] = [
    { in: { evictionHard: { 'memory.free': '1Gi' } }, err: /unsupported eviction signal memory\.free$/ },
    { in: { evictionHard: { 'memory.available': '-1Gi' } }, err: /eviction threshold memory\.available must be positive: -1Gi$/ },
    { in: { evictionHard: { 'memory.available': '0' } }, err: /must be positive: 0$/ },
    { in: { evictionHard: { 'nodefs.available': '-5%' } }, err: /eviction percentage threshold nodefs\.available must be >= 0%: -5%$/ },
    { in: { evictionHard: { 'nodefs.available': '150%' } }, err: /eviction percentage threshold nodefs\.available must be <= 100%: 150%$/ },
    { in: { evictionHard: { 'nodefs.available': 'ten%' } }, err: /invalid syntax/ },
    { in: { evictionHard: { 'memory.available': '1Gb' } }, err: /quantities must match|suffix/ },
    { in: { evictionSoft: { 'memory.available': '1Gi' } }, err: /grace period must be specified for the soft eviction threshold memory\.available$/ },
    { in: { evictionSoftGracePeriod: { 'memory.available': 'soon' } }, err: /invalid duration/ },
    { in: { evictionMinimumReclaim: { 'memory.available': '-1Mi' } }, err: /negative eviction minimum reclaim specified for memory\.available$/ },
    { in: { evictionMinimumReclaim: { 'nodefs.available': '0%' } }, err: /eviction percentage minimum reclaim nodefs\.available must be positive: 0%$/ },
    { in: { evictionMinimumReclaim: { 'disk.available': '1Gi' } }, err: /unsupported eviction signal disk\.available$/ },
  ];
  for (const c of invalid) {
    it(`refuses ${JSON.stringify(c.in)}`, () => assert.throws(() => parseThresholdConfig(maps(c.in)), c.err));
  }

  it('a percentage is of the capacity, a float32 as upstream', () => {
    const [mem, nodefs] = parseThresholdConfig(maps({ evictionHard: { 'memory.available': '25%', 'nodefs.available': '10%' } }));
    assert.equal(thresholdQuantity(mem!.value, 8 * 1024 ** 3).toString(), '2Gi');
    assert.equal(thresholdQuantity(nodefs!.value, 100 * 1024 ** 3).toString(), '10737418400');
  });

  it('allocatable reserves the hard memory.available and nodefs.available thresholds only', () => {
    const cap = { memory: 4 * 1024 ** 3, ephemeralStorage: 1000 };
    assert.deepEqual(hardEvictionReservation(hardThresholds({ 'memory.available': '1Gi', 'imagefs.available': '50%' }), cap), { memory: 1024 ** 3, ephemeralStorage: 0 });
    const withSoft = parseThresholdConfig(maps({ evictionSoft: { 'memory.available': '2Gi' }, evictionSoftGracePeriod: { 'memory.available': '1m' } }));
    assert.deepEqual(hardEvictionReservation(withSoft, cap), { memory: 0, ephemeralStorage: 0 });
    assert.deepEqual(hardEvictionReservation(hardThresholds({ 'nodefs.available': '50%' }), cap), { memory: 0, ephemeralStorage: 500 });
  });
});
