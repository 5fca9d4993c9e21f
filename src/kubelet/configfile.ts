// `kite agent --config FILE`: upstream's KubeletConfiguration file (kubelet.config.k8s.io/v1beta1),
// for the fields kite honours. Decoding is strict, as the kubelet's: an unknown or mistyped field is
// an error naming it, not silently ignored.
import { isIP } from 'node:net';
import { parse } from 'yaml';
import { goDuration, parseDuration } from '../api/duration.js';
import { parseQuantity } from '../api/quantity.js';
import { defaultKubeletConfig, type KubeletConfig } from './config.js';
import { parseThresholdConfig } from './eviction/thresholds.js';

const API_VERSION = 'kubelet.config.k8s.io/v1beta1';
const KIND = 'KubeletConfiguration';

type Setter = (value: unknown, path: string) => Partial<KubeletConfig>;

const duration = (key: keyof KubeletConfig): Setter => (v, path) => {
  if (typeof v !== 'string') throw new Error(`${path}: expected a duration string like "10s", got ${JSON.stringify(v)}`);
  return { [key]: parseDuration(v) };
};
const integer = (key: keyof KubeletConfig, min: number): Setter => (v, path) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new Error(`${path}: expected an integer >= ${min}, got ${JSON.stringify(v)}`);
  return { [key]: v };
};

/** A map of eviction signal to string (evictionHard and its siblings); the signals and values are checked once all are read. */
const signalMap = (key: 'evictionHard' | 'evictionSoft' | 'evictionSoftGracePeriod' | 'evictionMinimumReclaim'): Setter => (v, path) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${path}: expected a map of eviction signal to string`);
  for (const [k, val] of Object.entries(v)) if (typeof val !== 'string') throw new Error(`${path}.${k}: expected a string, got ${JSON.stringify(val)}`);
  return { [key]: { ...(v as Record<string, string>) } };
};

const percent = (key: keyof KubeletConfig, flag: string): Setter => (v, path) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 100) {
    throw new Error(`invalid configuration: ${path} (--${flag}) ${JSON.stringify(v)} must be between 0 and 100, inclusive`);
  }
  return { [key]: v };
};

const fields: Record<string, Setter> = {
  clusterDomain: (v, path) => {
    if (typeof v !== 'string') throw new Error(`${path}: expected a string`);
    return { clusterDomain: v };
  },
  clusterDNS: (v, path) => {
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || isIP(s) === 0)) throw new Error(`${path}: expected a list of IP addresses`);
    return { clusterDNS: v as string[] };
  },
  maxPods: integer('maxPods', 1),
  nodeStatusUpdateFrequency: duration('nodeStatusUpdateFrequencyMs'),
  nodeStatusReportFrequency: duration('nodeStatusReportFrequencyMs'),
  nodeLeaseDurationSeconds: integer('nodeLeaseDurationSeconds', 1),
  containerLogMaxSize: (v, path) => {
    if (typeof v !== 'string') throw new Error(`${path}: expected a quantity like "10Mi"`);
    return { containerLogMaxSize: parseQuantity(v).toNumber() };
  },
  containerLogMaxFiles: integer('containerLogMaxFiles', 2),
  resolvConf: (v, path) => {
    if (typeof v !== 'string') throw new Error(`${path}: expected a path`);
    return { resolvConf: v };
  },
  evictionHard: signalMap('evictionHard'),
  evictionSoft: signalMap('evictionSoft'),
  evictionSoftGracePeriod: signalMap('evictionSoftGracePeriod'),
  evictionMinimumReclaim: signalMap('evictionMinimumReclaim'),
  evictionMaxPodGracePeriod: integer('evictionMaxPodGracePeriod', 0),
  evictionPressureTransitionPeriod: duration('evictionPressureTransitionPeriodMs'),
  imageGCHighThresholdPercent: percent('imageGCHighThresholdPercent', 'image-gc-high-threshold'),
  imageGCLowThresholdPercent: percent('imageGCLowThresholdPercent', 'image-gc-low-threshold'),
  imageMinimumGCAge: duration('imageMinimumGCAgeMs'),
  imageMaximumGCAge: duration('imageMaximumGCAgeMs'),
  shutdownGracePeriod: duration('shutdownGracePeriodMs'),
  shutdownGracePeriodCriticalPods: duration('shutdownGracePeriodCriticalPodsMs'),
  // Upstream's KubeletCrashLoopBackOffMax: the cap of the restart back-off.
  crashLoopBackOff: (v, path) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${path}: expected an object`);
    const out: Partial<KubeletConfig> = {};
    for (const [k, val] of Object.entries(v)) {
      if (k !== 'maxContainerRestartPeriod') throw new Error(`${path}.${k}: unknown field`);
      Object.assign(out, duration('crashLoopBackOffMaxMs')(val, `${path}.${k}`));
    }
    return out;
  },
};

/** The settings a KubeletConfiguration document gives, to lay over the defaults. */
export function parseKubeletConfiguration(text: string, source: string): Partial<KubeletConfig> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`${source}: ${(err as Error).message}`, { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${source}: expected a ${KIND} object`);
  const obj = doc as Record<string, unknown>;
  if (obj.apiVersion !== API_VERSION || obj.kind !== KIND) {
    throw new Error(`${source}: expected apiVersion ${API_VERSION} and kind ${KIND}, got ${String(obj.apiVersion)} ${String(obj.kind)}`);
  }
  const out: Partial<KubeletConfig> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion' || key === 'kind') continue;
    const set = fields[key];
    if (!set) throw new Error(`${source}: unknown field "${key}" (kite honours: ${Object.keys(fields).join(', ')})`);
    try {
      Object.assign(out, set(value, key));
    } catch (err) {
      throw new Error(`${source}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (out.crashLoopBackOffMaxMs !== undefined && out.crashLoopBackOffMaxMs < 1000) {
    throw new Error(`${source}: crashLoopBackOff.maxContainerRestartPeriod must be at least 1s`);
  }
  const full = defaultKubeletConfig({ nodeName: '', rootDir: '', ...out });
  // As the kubelet does at start-up (ParseThresholdConfig): a bad signal or value is an error now.
  try {
    parseThresholdConfig(full);
  } catch (err) {
    throw new Error(`${source}: ${(err as Error).message}`, { cause: err });
  }
  const problem = crossFieldProblem(full);
  if (problem) throw new Error(`${source}: invalid configuration: ${problem}`);
  return out;
}

/** Upstream's ValidateKubeletConfiguration rules that relate two fields (defaults filling the unset one). */
function crossFieldProblem(cfg: KubeletConfig): string | undefined {
  if (cfg.imageGCLowThresholdPercent >= cfg.imageGCHighThresholdPercent) {
    return `imageGCLowThresholdPercent (--image-gc-low-threshold) ${cfg.imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${cfg.imageGCHighThresholdPercent}`;
  }
  if (cfg.imageMaximumGCAgeMs !== 0 && cfg.imageMaximumGCAgeMs <= cfg.imageMinimumGCAgeMs) {
    return `imageMaximumGCAge ${goDuration(cfg.imageMaximumGCAgeMs)} must be greater than imageMinimumGCAge ${goDuration(cfg.imageMinimumGCAgeMs)}`;
  }
  if (cfg.shutdownGracePeriodCriticalPodsMs > cfg.shutdownGracePeriodMs) {
    return `shutdownGracePeriodCriticalPods ${goDuration(cfg.shutdownGracePeriodCriticalPodsMs)} must be <= shutdownGracePeriod ${goDuration(cfg.shutdownGracePeriodMs)}`;
  }
  if (cfg.shutdownGracePeriodMs % 1000 !== 0 || cfg.shutdownGracePeriodCriticalPodsMs % 1000 !== 0) {
    return 'shutdownGracePeriod and shutdownGracePeriodCriticalPods must be whole seconds';
  }
  return undefined;
}
