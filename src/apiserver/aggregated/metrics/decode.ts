// A kubelet's /metrics/resource as metrics-server decodes it (pkg/scraper/client/resource): the
// Prometheus text format read into one point per node and per container, with the measuring
// timestamps the kubelet attached. Points missing CPU or memory are dropped, as upstream does.

/** One series of a text exposition. */
export interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch, when the exposition carried one. */
  timestampMs?: number;
}

export class ParseError extends Error {}

/** The series of a Prometheus text exposition (comments and blank lines skipped). */
export function parseText(text: string): Series[] {
  const out: Series[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    try {
      out.push(parseLine(line));
    } catch (err) {
      throw new ParseError(`line ${n + 1}: ${(err as Error).message}`);
    }
  }
  return out;
}

function parseLine(line: string): Series {
  const nameEnd = line.search(/[{\s]/);
  if (nameEnd <= 0) throw new Error(`no value: ${JSON.stringify(line)}`);
  const name = line.slice(0, nameEnd);
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
  const labels: Record<string, string> = {};
  let i = nameEnd;
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (line[i] === ' ' || line[i] === ',') i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      const eq = line.indexOf('=', i);
      if (eq < 0 || line[eq + 1] !== '"') throw new Error('invalid label');
      const key = line.slice(i, eq).trim();
      let value = '';
      let j = eq + 2;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\') {
          const next = line[++j];
          value += next === 'n' ? '\n' : (next ?? '');
        } else value += line[j];
      }
      if (j >= line.length) throw new Error('unterminated label value');
      labels[key] = value;
      i = j + 1;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === '') throw new Error(`invalid sample: ${JSON.stringify(line)}`);
  const value = parseValue(rest[0]!);
  const series: Series = { name, labels, value };
  if (rest[1] !== undefined) {
    if (!/^-?\d+$/.test(rest[1])) throw new Error(`invalid timestamp ${JSON.stringify(rest[1])}`);
    series.timestampMs = Number(rest[1]);
  }
  return series;
}

function parseValue(s: string): number {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  const v = Number(s);
  if (s === '' || Number.isNaN(v)) throw new Error(`invalid value ${JSON.stringify(s)}`);
  return v;
}

/** metrics-server's MetricsPoint, with times in milliseconds. */
export interface MetricsPoint {
  /** When the container (or node) started: cumulative CPU was zero then. 0 when unknown. */
  startTime: number;
  /** When the point was measured (the CPU sample's time when both are given). */
  timestamp: number;
  /** Cumulative CPU, in core-nanoseconds. */
  cumulativeCpuUsed: number;
  /** Working set, in bytes. */
  memoryUsage: number;
}

export interface MetricsBatch {
  nodes: Map<string, MetricsPoint>;
  /** By "namespace/name", then container name. */
  pods: Map<string, Map<string, MetricsPoint>>;
}

export const podKey = (namespace: string, name: string) => `${namespace}/${name}`;

const emptyPoint = (): MetricsPoint => ({ startTime: 0, timestamp: 0, cumulativeCpuUsed: 0, memoryUsage: 0 });

/** One kubelet's exposition as a batch for nodeName; defaultTimeMs stands in for missing timestamps. */
export function decodeBatch(text: string, defaultTimeMs: number, nodeName: string): MetricsBatch {
  const node = emptyPoint();
  const pods = new Map<string, Map<string, MetricsPoint>>();
  const container = (s: Series): MetricsPoint => {
    const key = podKey(s.labels.namespace ?? '', s.labels.pod ?? '');
    const containers = pods.get(key) ?? new Map<string, MetricsPoint>();
    pods.set(key, containers);
    const name = s.labels.container ?? '';
    const point = containers.get(name) ?? emptyPoint();
    containers.set(name, point);
    return point;
  };
  for (const s of parseText(text)) {
    const ts = s.timestampMs ?? defaultTimeMs;
    switch (s.name) {
      case 'node_cpu_usage_seconds_total':
        node.cumulativeCpuUsed = toNanos(s.value);
        node.timestamp = ts;
        break;
      case 'node_memory_working_set_bytes':
        node.memoryUsage = Math.trunc(s.value);
        node.timestamp = ts;
        break;
      case 'container_cpu_usage_seconds_total': {
        const p = container(s);
        p.cumulativeCpuUsed = toNanos(s.value);
        p.timestamp = ts;
        break;
      }
      case 'container_memory_working_set_bytes': {
        const p = container(s);
        p.memoryUsage = Math.trunc(s.value);
        p.timestamp = ts;
        break;
      }
      case 'container_start_time_seconds':
        container(s).startTime = Math.trunc(s.value * 1000);
        break;
    }
  }
  const batch: MetricsBatch = { nodes: new Map(), pods: new Map() };
  if (node.timestamp !== 0 && node.cumulativeCpuUsed !== 0 && node.memoryUsage !== 0) batch.nodes.set(nodeName, node);
  for (const [key, containers] of pods) {
    // One incomplete container makes the whole pod unknown for this scrape.
    if ([...containers.values()].some((p) => p.cumulativeCpuUsed === 0 || p.memoryUsage === 0)) continue;
    if (containers.size > 0) batch.pods.set(key, containers);
  }
  return batch;
}

/** Seconds as whole nanoseconds (uint64(value * 1e9) upstream). */
function toNanos(seconds: number): number {
  return Math.max(0, Math.trunc(seconds * 1e9));
}
