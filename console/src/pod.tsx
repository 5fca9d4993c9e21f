import { useEffect, useRef, useState } from 'preact/hooks';
import type { CoreEvent, Lease, Node, Pod } from '../../src/api/types.js';
import { explainPod } from '../../src/api/timeline/why.js';
import { formatReady, formatRestarts, isPodPhaseTerminal, podConditionTrue, summarizePod } from '../../src/api/pod/status.js';
import type { PodTimeline, SchedulingAttemptSummary } from '../../src/api/timeline/types.js';
import { timelineAPIVersion } from '../../src/api/timeline/types.js';
import { ApiError, lines, request } from './api.js';
import { age, ErrorBox, Loading } from './common.js';
import { useLiveList, useNow } from './hooks.js';
import { Waterfall } from './waterfall.js';

/** A pod on its way up or down: its waterfall runs to now; a Ready or finished one ends at its last step. */
const stillMoving = (pod: Pod) => !isPodPhaseTerminal(pod.status?.phase) && (pod.metadata?.deletionTimestamp !== undefined || !podConditionTrue(pod, 'Ready'));

const field = (name: string, value: string) => `fieldSelector=${encodeURIComponent(`${name}=${value}`)}`;

export function PodPage({ namespace, name }: { namespace: string; name: string }) {
  const ns = encodeURIComponent(namespace);
  const pods = useLiveList<Pod>(`/api/v1/namespaces/${ns}/pods?${field('metadata.name', name)}`);
  const timelines = useLiveList<PodTimeline>(`/apis/${timelineAPIVersion}/namespaces/${ns}/podtimelines?${field('pod.name', name)}`);
  const events = useLiveList<CoreEvent>(`/api/v1/namespaces/${ns}/events?${field('involvedObject.name', name)}`);
  const now = useNow();
  const pod = pods.items?.[0];
  const uid = pod?.metadata?.uid;
  // The pod's own record, or (the pod gone) the newest one kept for its name.
  const timeline = (timelines.items ?? []).filter((t) => !uid || t.pod.uid === uid).sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))[0];
  const summary = pod && summarizePod(pod);
  const nodeName = pod?.spec?.nodeName;
  // The node and its Lease tell "unreachable" apart; a user who may not read them gets the rest.
  const nodes = useLiveList<Node>(nodeName ? `/api/v1/nodes?${field('metadata.name', nodeName)}` : undefined);
  const leases = useLiveList<Lease>(nodeName ? `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?${field('metadata.name', nodeName)}` : undefined);
  const why =
    pods.items && timelines.items && (pod || timeline)
      ? explainPod({ pod, timeline, events: events.items, node: nodes.items ? (nodes.items[0] ?? null) : undefined, lease: leases.items?.[0], now })
      : undefined;
  const attempt = timeline?.steps.filter((s) => s.step === 'SchedulingAttempt' && s.scheduling).at(-1)?.scheduling;

  return (
    <main>
      <p class="crumbs">
        <a href={`#/pods/${ns}`}>Pods in {namespace}</a> /
      </p>
      <h1>{name}</h1>
      {pods.error && <ErrorBox error={pods.error} />}
      {!pods.items && !pods.error && <Loading />}
      {pods.items && !pod && <p class="muted">The pod is gone{timeline ? '; its timeline is kept.' : '.'}</p>}
      {why && (
        <p class="why" role="status">
          {why.message}
        </p>
      )}
      {pod && summary && (
        <dl class="facts">
          <dt>Status</dt>
          <dd class={`status status-${summary.reason}`}>{summary.reason}</dd>
          <dt>Ready</dt>
          <dd>{formatReady(summary)}</dd>
          <dt>Restarts</dt>
          <dd>{formatRestarts(summary, now)}</dd>
          <dt>Age</dt>
          <dd>{age(pod.metadata?.creationTimestamp, now)}</dd>
          <dt>Node</dt>
          <dd>{pod.spec?.nodeName ?? '<none>'}</dd>
          <dt>IP</dt>
          <dd>{pod.status?.podIP ?? '<none>'}</dd>
        </dl>
      )}

      {pod?.status?.phase === 'Pending' && attempt && <SchedulingVerdicts attempt={attempt} />}

      <h2>Timeline</h2>
      {timelines.error && <ErrorBox error={timelines.error} />}
      {!timelines.items && !timelines.error && <Loading />}
      {timelines.items && (timeline ? <Waterfall timeline={timeline} now={pod && stillMoving(pod) ? now : undefined} /> : <p class="muted">No timeline recorded for this pod.</p>)}

      <h2>Events</h2>
      {events.error && <ErrorBox error={events.error} />}
      {events.items && <EventList events={events.items.filter((e) => !uid || e.involvedObject.uid === uid)} now={now} />}

      {pod?.spec?.nodeName && <Logs pod={pod} />}
    </main>
  );
}

function SchedulingVerdicts({ attempt }: { attempt: SchedulingAttemptSummary }) {
  return (
    <section class="scheduling" aria-label="Scheduling verdicts">
      <h2>Scheduling</h2>
      <p>
        Last attempt: <strong>{attempt.result}</strong>, {attempt.feasible}/{attempt.nodes} nodes fit.
      </p>
      {attempt.message && <p class="message">{attempt.message}</p>}
      {attempt.plugins.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Filter plugin</th>
              <th>Nodes rejected</th>
              <th>Reasons</th>
            </tr>
          </thead>
          <tbody>
            {attempt.plugins.map((p) => (
              <tr key={p.plugin}>
                <td>{p.plugin}</td>
                <td>{p.rejected}</td>
                <td>
                  {Object.entries(p.reasons)
                    .map(([r, n]) => `${n} × ${r}`)
                    .join('; ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {attempt.rejectedNodes && attempt.rejectedNodes.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Node</th>
              <th>Rejected by</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {attempt.rejectedNodes.map((n) => (
              <tr key={n.node}>
                <td>{n.node}</td>
                <td>{n.plugin}</td>
                <td>{n.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function EventList({ events, now }: { events: CoreEvent[]; now: number }) {
  if (events.length === 0) return <p class="muted">No events.</p>;
  const when = (e: CoreEvent) => e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
  return (
    <table class="events">
      <thead>
        <tr>
          <th>Type</th>
          <th>Reason</th>
          <th>Age</th>
          <th>From</th>
          <th>Message</th>
        </tr>
      </thead>
      <tbody>
        {events
          .sort((a, b) => (when(a) ?? '').localeCompare(when(b) ?? ''))
          .map((e) => (
            <tr key={e.metadata.uid} class={e.type === 'Warning' ? 'warning' : ''}>
              <td>{e.type}</td>
              <td>{e.reason}</td>
              <td>
                {age(when(e), now)}
                {(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}
              </td>
              <td>{e.source?.component ?? e.reportingComponent}</td>
              <td>{e.message}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

function Logs({ pod }: { pod: Pod }) {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
  const [container, setContainer] = useState(pod.spec?.containers?.[0]?.name ?? containers[0] ?? '');
  const [follow, setFollow] = useState(false);
  const [text, setText] = useState<string[]>([]);
  const [error, setError] = useState<ApiError>();
  const box = useRef<HTMLPreElement>(null);
  const ns = encodeURIComponent(pod.metadata?.namespace ?? '');
  const name = encodeURIComponent(pod.metadata?.name ?? '');

  useEffect(() => {
    setText([]);
    setError(undefined);
    const abort = new AbortController();
    const query = new URLSearchParams({ container, tailLines: '500', ...(follow ? { follow: 'true' } : {}) });
    void (async () => {
      // A followed stream ends with its container (a restart): follow the next one from its start.
      do {
        try {
          const res = await request(`/api/v1/namespaces/${ns}/pods/${name}/log?${query.toString()}`, { signal: abort.signal });
          setText([]);
          setError(undefined);
          for await (const line of lines(res)) setText((t) => [...t.slice(-999), line]);
        } catch (err) {
          if (err instanceof ApiError) setError(err);
        }
        if (follow) await new Promise((resolve) => setTimeout(resolve, 1000));
      } while (follow && !abort.signal.aborted);
    })();
    return () => abort.abort();
  }, [ns, name, container, follow]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [text, follow]);

  return (
    <section aria-label="Logs">
      <h2>Logs</h2>
      <div class="toolbar">
        <label class="inline">
          Container{' '}
          <select value={container} onChange={(e) => setContainer(e.currentTarget.value)}>
            {containers.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <button type="button" aria-pressed={follow} onClick={() => setFollow(!follow)}>
          {follow ? 'Stop following' : 'Follow'}
        </button>
      </div>
      {error && <ErrorBox error={error} />}
      <pre class="logs" ref={box} tabIndex={0} aria-label={`Logs of ${container}`}>
        {text.join('\n')}
      </pre>
    </section>
  );
}
