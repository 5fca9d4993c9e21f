// `kite timeline POD` and `kite why POD` (also the kubectl plugins `kubectl timeline` and
// `kubectl why`, bin/): the cluster is found as kubectl finds it (--kubeconfig, $KUBECONFIG,
// --context, -n), the pod's timeline is read from timeline.kite.dev (by UID, or for a deleted pod
// the newest timeline of that name), the facts "why" needs are fetched (node, Lease, events, log
// lines, the owner, free capacity) and the pure modules api/timeline/{waterfall,why}.ts decide
// what is printed.
import { stringify } from 'yaml';
import { StatusError } from '../api/errors.js';
import { findKind } from '../api/resources.js';
import { timelineGroup, timelineVersion, type PodTimeline } from '../api/timeline/types.js';
import { waterfall, type WaterfallRow } from '../api/timeline/waterfall.js';
import { explainPod, largestFree, type Why, type WhyInput } from '../api/timeline/why.js';
import type { CoreEvent, Lease, Node, Pod } from '../api/types.js';
import { loadKubeconfigChain } from '../client/kubeconfig.js';
import { RestClient, type WatchEvent } from '../client/rest.js';
import { checkFlags, parseArgs } from '../util/args.js';
import { humanDuration } from '../api/duration.js';

export const timelineUsage = `  timeline POD  The pod's timeline as a waterfall, with the "why" line on top (also: kubectl timeline POD).
  why POD       One sentence: what the pod waits for and who acts next (also: kubectl why POD).
           -n, --namespace NS          the pod's namespace (default the context's, else default)
           --kubeconfig FILE           default $KUBECONFIG (several files merged), else ~/.kube/config
           --context NAME              a kubeconfig context other than the current one
           -o, --output json|yaml      the PodTimeline (timeline) or the Why (why) as JSON or YAML
           -w, --watch                 redraw as steps arrive
`;

const shortFlags: Record<string, string> = { '-n': '--namespace', '-o': '--output', '-w': '--watch' };

/** kubectl's short flags (-n x, -nx, -n=x, -o json, -w) as the long ones parseArgs knows. */
function expandShortFlags(argv: string[]): string[] {
  return argv.map((a) => {
    const m = /^(-[now])(=?)(.*)$/.exec(a);
    if (!m) return a;
    const long = shortFlags[m[1]!]!;
    return m[3] ? `${long}=${m[3]}` : long;
  });
}

interface Target {
  rest: RestClient;
  namespace: string;
  name: string;
}

function openTarget(command: string, argv: string[]): Target & { output?: string; watch: boolean } {
  const args = parseArgs(expandShortFlags(argv), ['watch']);
  checkFlags(args, ['namespace', 'kubeconfig', 'context', 'output', 'watch']);
  const name = args.positional[0];
  if (!name || args.positional.length > 1) throw new Error(`kite ${command} takes one pod name (kite ${command} POD [-n NAMESPACE])`);
  const output = args.flags.get('output');
  if (output !== undefined && output !== 'json' && output !== 'yaml') throw new Error(`unable to match a printer suitable for the output format "${output}", allowed formats are: json,yaml`);
  const config = loadKubeconfigChain({ kubeconfig: args.flags.get('kubeconfig'), context: args.flags.get('context') });
  config.userAgent = `kite-${command}`;
  const namespace = args.flags.get('namespace') || config.namespace || 'default';
  return { rest: new RestClient(config), namespace, name, output, watch: args.flags.get('watch') === 'true' };
}

/** The object, or undefined on 404 (and on 403 when `forbiddenIsMissing`, for facts that are only nice to have). */
async function getOptional<T>(rest: RestClient, path: string, query?: Record<string, string>, forbiddenIsMissing = false): Promise<T | undefined> {
  try {
    return await rest.request<T>({ path, query });
  } catch (err) {
    if (err instanceof StatusError && (err.code === 404 || (forbiddenIsMissing && err.code === 403))) return undefined;
    throw err;
  }
}

// Names from the command line are path segments, never path syntax.
const seg = encodeURIComponent;
const timelinesPath = (ns: string) => `/apis/${timelineGroup}/${timelineVersion}/namespaces/${seg(ns)}/podtimelines`;
const podPath = (t: Target) => `/api/v1/namespaces/${seg(t.namespace)}/pods/${seg(t.name)}`;

/** The newest timeline of a pod name in the namespace (a deleted pod's, within retention). */
async function newestTimelineByName(t: Target): Promise<PodTimeline | undefined> {
  const list = await getOptional<{ items?: PodTimeline[] }>(t.rest, timelinesPath(t.namespace), { fieldSelector: `pod.name=${t.name}` });
  const firstStep = (tl: PodTimeline) => tl.steps[0]?.start ?? tl.metadata.creationTimestamp ?? '';
  return (list?.items ?? []).sort((a, b) => firstStep(b).localeCompare(firstStep(a)))[0];
}

interface Snapshot {
  pod?: Pod;
  timeline?: PodTimeline;
}

async function snapshot(t: Target): Promise<Snapshot> {
  const pod = await getOptional<Pod>(t.rest, podPath(t));
  const uid = pod?.metadata?.uid;
  const timeline = uid ? await getOptional<PodTimeline>(t.rest, `${timelinesPath(t.namespace)}/${seg(uid)}`, undefined, true) : await newestTimelineByName(t);
  if (!pod && !timeline) throw new Error(`pods "${t.name}" not found`);
  return { pod, timeline };
}

/** The last non-empty line of a container's log (its previous run's when `previous`). */
async function lastLogLine(t: Target, container: string, previous: boolean): Promise<string | undefined> {
  try {
    const text = await t.rest.requestText({ path: `${podPath(t)}/log`, query: { container, tailLines: '5', ...(previous ? { previous: 'true' } : {}) } });
    return text.split('\n').filter((l) => l.trim()).at(-1);
  } catch {
    return undefined;
  }
}

/** Everything explainPod looks at besides the pod and its timeline; facts the user may not read are left out. */
async function whyFacts(t: Target, snap: Snapshot, now: number): Promise<WhyInput> {
  const { pod, timeline } = snap;
  const input: WhyInput = { pod, timeline, now };
  if (!pod) return input;
  const events = await getOptional<{ items?: CoreEvent[] }>(t.rest, `/api/v1/namespaces/${seg(t.namespace)}/events`, { fieldSelector: `involvedObject.name=${t.name}` }, true);
  input.events = (events?.items ?? []).filter((e) => !e.involvedObject?.uid || e.involvedObject.uid === pod.metadata?.uid);
  const nodeName = pod.spec?.nodeName;
  if (nodeName) {
    try {
      input.node = (await t.rest.request<Node>({ path: `/api/v1/nodes/${seg(nodeName)}` })) ?? null;
    } catch (err) {
      if (!(err instanceof StatusError) || (err.code !== 404 && err.code !== 403)) throw err;
      if (err.code === 404) input.node = null;
    }
    input.lease = await getOptional<Lease>(t.rest, `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${seg(nodeName)}`, undefined, true);
  } else {
    const nodes = await getOptional<{ items?: Node[] }>(t.rest, '/api/v1/nodes', undefined, true);
    if (nodes?.items) {
      input.nodeCount = nodes.items.length;
      const pods = await getOptional<{ items?: Pod[] }>(t.rest, '/api/v1/pods', { fieldSelector: 'spec.nodeName!=' }, true);
      if (pods?.items) input.largestFree = largestFree(nodes.items, pods.items, ['cpu', 'memory', 'ephemeral-storage', 'pods']);
    }
  }
  const lines: Record<string, string> = {};
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const cs of statuses) {
    const crashed = cs.state?.waiting?.reason === 'CrashLoopBackOff';
    const wanted = crashed || cs.state?.running || (cs.state?.terminated && cs.state.terminated.exitCode !== 0);
    if (!wanted) continue;
    const line = await lastLogLine(t, cs.name, crashed);
    if (line !== undefined) lines[cs.name] = line;
  }
  input.lastLogLines = lines;
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
  if (owner) {
    const [group, version] = owner.apiVersion.includes('/') ? owner.apiVersion.split('/') : ['', owner.apiVersion];
    const info = findKind(group!, owner.kind);
    if (info) {
      const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
      const path = `${base}${info.namespaced ? `/namespaces/${seg(t.namespace)}` : ''}/${info.resource}/${seg(owner.name)}`;
      try {
        const found = await t.rest.request<{ metadata?: { uid?: string } }>({ path });
        input.ownerExists = found?.metadata?.uid === owner.uid;
      } catch (err) {
        if (err instanceof StatusError && err.code === 404) input.ownerExists = false;
      }
    }
  }
  return input;
}

function formatMs(ms: number): string {
  if (ms < 1) return ms === 0 ? '0ms' : '<1ms';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  return humanDuration(ms);
}

function pad(s: string, n: number): string {
  return s.length >= n ? `${s.slice(0, n - 1)} ` : s.padEnd(n);
}

/** A bar of `width` cells for [offset, offset+duration) of span; an instant is one tick. */
function bar(row: WaterfallRow, spanMs: number, width: number): string {
  const scale = spanMs > 0 ? width / spanMs : 0;
  const from = Math.min(width - 1, Math.floor(row.offsetMs * scale));
  const len = Math.max(1, Math.min(width - from, Math.round(row.durationMs * scale)));
  const fill = row.step === 'Wait' || row.gap ? '░' : row.durationMs === 0 ? '│' : '█';
  return `${' '.repeat(from)}${fill.repeat(len)}${' '.repeat(width - from - len)}`;
}

/** The terminal waterfall: the why line, then one row per step (lanes show init one after another, app containers side by side). */
export function renderWaterfall(timeline: PodTimeline | undefined, whyLine: string, now: number, columns: number): string {
  const out = [whyLine];
  if (!timeline || timeline.steps.length === 0) {
    out.push('(no timeline steps recorded yet)');
    return `${out.join('\n')}\n`;
  }
  const w = waterfall(timeline, timeline.deletedAt ? undefined : now);
  const laneLabel = new Map(w.lanes.map((l) => [l.id, l.label]));
  const widths = { offset: 10, lane: 16, step: 24, duration: 10, component: 18 };
  const fixed = Object.values(widths).reduce((a, b) => a + b, 0);
  const barWidth = Math.max(10, Math.min(40, columns - fixed - 30));
  const detailWidth = Math.max(20, columns - fixed - barWidth - 2);
  out.push(`${pad('OFFSET', widths.offset)}${pad('LANE', widths.lane)}${pad('STEP', widths.step)}${pad('DURATION', widths.duration)}${pad('COMPONENT', widths.component)}${' '.repeat(barWidth)}  DETAIL`);
  for (const r of w.rows) {
    const step = r.step === 'Wait' ? `(${r.gap})` : r.count && r.count > 1 ? `${r.step} ×${r.count}` : r.step;
    const duration = r.ongoing ? `${formatMs(r.durationMs)}…` : r.durationMs === 0 ? '-' : formatMs(r.durationMs);
    const detail = r.detail.length > detailWidth ? `${r.detail.slice(0, detailWidth - 1)}…` : r.detail;
    out.push(`${pad(`+${formatMs(r.offsetMs)}`, widths.offset)}${pad(laneLabel.get(r.lane) ?? r.lane, widths.lane)}${pad(step, widths.step)}${pad(duration, widths.duration)}${pad(r.component, widths.component)}${bar(r, w.spanMs, barWidth)}  ${detail}`.trimEnd());
  }
  if (timeline.truncated) out.push('(older steps were dropped to stay within the per-pod cap)');
  return `${out.join('\n')}\n`;
}

function printObject(obj: unknown, output: string): void {
  process.stdout.write(output === 'json' ? `${JSON.stringify(obj, null, 4)}\n` : stringify(obj));
}

async function explain(t: Target): Promise<{ snap: Snapshot; why: Why }> {
  const snap = await snapshot(t);
  const now = Date.now();
  return { snap, why: explainPod(await whyFacts(t, snap, now)) };
}

/** Runs `draw` now and again whenever the pod or its timelines change, until interrupted. */
async function watchAndRedraw(t: Target, draw: () => Promise<void>): Promise<void> {
  await draw();
  let pending = false;
  let running: Promise<void> = Promise.resolve();
  const redraw = () => {
    if (pending) return;
    pending = true;
    running = running.then(async () => {
      pending = false;
      await draw();
    });
  };
  const follow = async (path: string, query: Record<string, string>) => {
    for (;;) {
      for await (const ev of t.rest.watch<WatchEvent<unknown>>({ path, query: { ...query, watch: 'true' } })) {
        if (ev.type !== 'BOOKMARK') redraw();
      }
    }
  };
  await Promise.race([
    follow(`/api/v1/namespaces/${seg(t.namespace)}/pods`, { fieldSelector: `metadata.name=${t.name}` }),
    follow(timelinesPath(t.namespace), { fieldSelector: `pod.name=${t.name}` }),
  ]);
}

export async function whyCommand(argv: string[]): Promise<void> {
  const t = openTarget('why', argv);
  try {
    let last = '';
    const draw = async () => {
      const { why } = await explain(t);
      if (t.output) return printObject(why, t.output);
      if (why.message !== last) process.stdout.write(`${why.message}\n`);
      last = why.message;
    };
    if (t.watch) await watchAndRedraw(t, draw);
    else await draw();
  } finally {
    t.rest.close();
  }
}

export async function timelineCommand(argv: string[]): Promise<void> {
  const t = openTarget('timeline', argv);
  try {
    const draw = async () => {
      const { snap, why } = await explain(t);
      if (t.output) {
        if (!snap.timeline) throw new Error(`no timeline for pod "${t.name}" in namespace "${t.namespace}" (is the server run with --pod-timeline=false?)`);
        return printObject(snap.timeline, t.output);
      }
      const text = renderWaterfall(snap.timeline, why.message, Date.now(), process.stdout.columns || 160);
      // Redraws replace the screen on a terminal and follow one another otherwise.
      process.stdout.write(t.watch && process.stdout.isTTY ? `\x1b[H\x1b[2J${text}` : text);
    };
    if (t.watch) await watchAndRedraw(t, draw);
    else await draw();
  } finally {
    t.rest.close();
  }
}
