// Eviction thresholds as upstream's pkg/kubelet/eviction/api and ParseThresholdConfig: the signals,
// the KubeletConfiguration maps (evictionHard, evictionSoft + evictionSoftGracePeriod,
// evictionMinimumReclaim) parsed with upstream's validation messages, and a threshold's quantity
// against a capacity. A hard threshold is one without a grace period.
import { Quantity, QuantityError } from '../../api/quantity.js';
import { parseDuration } from '../../api/duration.js';

export const SIGNALS = [
  'memory.available',
  'allocatableMemory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
] as const;
export type Signal = (typeof SIGNALS)[number];

export type NodePressure = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** The node condition a met threshold of the signal reports (signalToNodeCondition). */
export const SIGNAL_TO_CONDITION: Record<Signal, NodePressure> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** The resource a signal starves (signalToResource): what eviction messages name. */
export const SIGNAL_TO_RESOURCE: Record<Signal, 'memory' | 'ephemeral-storage' | 'inodes' | 'pids'> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/** Either an absolute quantity or a fraction (a float32, as upstream) of the signal's capacity. */
export type ThresholdValue = { quantity: Quantity } | { percentage: number };

export interface Threshold {
  signal: Signal;
  /** Every signal's operator is LessThan. */
  value: ThresholdValue;
  /** 0 for a hard threshold. */
  gracePeriodMs: number;
  minReclaim?: ThresholdValue;
}

/** Upstream's Linux DefaultEvictionHard; a configured evictionHard replaces it whole (1.33 does not merge). */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
};

/** The eviction fields of KubeletConfiguration, as written there. */
export interface EvictionConfigMaps {
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriod: Record<string, string>;
  evictionMinimumReclaim: Record<string, string>;
}

function validSignal(signal: string): Signal {
  if (!(SIGNALS as readonly string[]).includes(signal)) throw new Error(`unsupported eviction signal ${signal}`);
  return signal as Signal;
}

/** strconv.ParseFloat of the number before "%", as a float32 fraction. */
function parsePercentage(input: string): number {
  const text = input.replace(/%+$/, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Math.fround(Math.fround(Number(text)) / 100);
}

function parseQuantity(val: string): Quantity {
  try {
    return Quantity.parse(val);
  } catch (err) {
    if (err instanceof QuantityError) throw new Error(err.message, { cause: err });
    throw err;
  }
}

/** parseThresholdStatement: undefined for 0% and 100%, which disable the signal. */
function parseThresholdStatement(signal: Signal, val: string): Threshold | undefined {
  if (val.endsWith('%')) {
    if (val === '0%' || val === '100%') return undefined;
    const percentage = parsePercentage(val);
    if (percentage < 0) throw new Error(`eviction percentage threshold ${signal} must be >= 0%: ${val}`);
    if (percentage > 1) throw new Error(`eviction percentage threshold ${signal} must be <= 100%: ${val}`);
    return { signal, value: { percentage }, gracePeriodMs: 0 };
  }
  const quantity = parseQuantity(val);
  if (quantity.sign() <= 0) throw new Error(`eviction threshold ${signal} must be positive: ${quantity.toString()}`);
  return { signal, value: { quantity }, gracePeriodMs: 0 };
}

function parseMinimumReclaim(signal: Signal, val: string): ThresholdValue {
  if (val.endsWith('%')) {
    const percentage = parsePercentage(val);
    if (percentage <= 0) throw new Error(`eviction percentage minimum reclaim ${signal} must be positive: ${val}`);
    return { percentage };
  }
  const quantity = parseQuantity(val);
  if (quantity.sign() < 0) throw new Error(`negative eviction minimum reclaim specified for ${signal}`);
  return { quantity };
}

function parseGracePeriod(val: string): number {
  const ms = parseDuration(val);
  if (ms < 0) throw new Error(`invalid eviction grace period specified: ${val}, must be a positive value`);
  return ms;
}

/**
 * ParseThresholdConfig with enforceNodeAllocatable [pods] (upstream's default): the hard thresholds,
 * the soft ones with their grace periods, minimum reclaims, and a copy of the hard memory.available
 * threshold for allocatableMemory.available.
 */
export function parseThresholdConfig(cfg: EvictionConfigMaps): Threshold[] {
  const statements = (map: Record<string, string>) =>
    Object.entries(map).flatMap(([signal, val]) => {
      const t = parseThresholdStatement(validSignal(signal), val);
      return t ? [t] : [];
    });
  const hard = statements(cfg.evictionHard);
  const soft = statements(cfg.evictionSoft);
  const grace = new Map(Object.entries(cfg.evictionSoftGracePeriod).map(([signal, val]) => [validSignal(signal), parseGracePeriod(val)]));
  const minReclaim = new Map(Object.entries(cfg.evictionMinimumReclaim).map(([signal, val]) => [signal, parseMinimumReclaim(validSignal(signal), val)]));
  for (const t of soft) {
    const period = grace.get(t.signal);
    if (period === undefined) throw new Error(`grace period must be specified for the soft eviction threshold ${t.signal}`);
    t.gracePeriodMs = period;
  }
  const results = [...hard, ...soft];
  for (const t of results) {
    const r = minReclaim.get(t.signal);
    if (r) t.minReclaim = r;
  }
  const allocatable = results
    .filter((t) => t.signal === 'memory.available' && isHardEvictionThreshold(t))
    .map((t): Threshold => ({ ...t, signal: 'allocatableMemory.available' }));
  return [...results, ...allocatable];
}

/** The hard thresholds alone, as the kubelet parses them for node allocatable. */
export function hardThresholds(evictionHard: Record<string, string>): Threshold[] {
  return parseThresholdConfig({ evictionHard, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {} });
}

export function isHardEvictionThreshold(t: Threshold): boolean {
  return t.gracePeriodMs === 0;
}

/** GetThresholdQuantity: the quantity itself, or the percentage of the capacity (BinarySI, truncated). */
export function thresholdQuantity(value: ThresholdValue, capacity: number): Quantity {
  if ('quantity' in value) return value.quantity;
  return Quantity.fromValue(Math.trunc(capacity * value.percentage), 'BinarySI');
}

/** A threshold's identity for the first-observed bookkeeping (signal, grace period and value, as upstream's map key). */
export function thresholdKey(t: Threshold): string {
  const v = 'quantity' in t.value ? `q${t.value.quantity.nanos}` : `p${t.value.percentage}`;
  return `${t.signal}/${t.gracePeriodMs}/${v}`;
}

/**
 * What the hard thresholds take from allocatable (hardEvictionReservation): memory.available from
 * memory, nodefs.available from ephemeral-storage, each against the capacity.
 */
export function hardEvictionReservation(thresholds: readonly Threshold[], capacity: { memory: number; ephemeralStorage: number }): { memory: number; ephemeralStorage: number } {
  const out = { memory: 0, ephemeralStorage: 0 };
  for (const t of thresholds) {
    if (!isHardEvictionThreshold(t)) continue;
    if (t.signal === 'memory.available') out.memory += Number(thresholdQuantity(t.value, capacity.memory).value());
    if (t.signal === 'nodefs.available') out.ephemeralStorage += Number(thresholdQuantity(t.value, capacity.ephemeralStorage).value());
  }
  return out;
}
