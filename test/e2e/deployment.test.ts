// The Deployment controller inside `kite server`, with pods run by `kite sim`, driven by the real
// kubectl as against a cluster: create, rollout status (its progress lines, its exit codes and the
// progress deadline), set image under a pod watch that checks maxSurge / maxUnavailable at every
// event, rollout history / undo / pause / resume / restart, scale, and the three kinds of delete.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { eventually, kubectl, kubectlOk, type KiteServer, simCluster } from './harness.js';

interface Meta {
  name: string;
  uid: string;
  annotations?: Record<string, string>;
  ownerReferences?: { kind: string; name: string; uid: string }[];
}
interface RS {
  metadata: Meta;
  spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
}

/** Every line kubectl rollout status may print for a Deployment (upstream's DeploymentStatusViewer). */
const progressLine = (name: string) =>
  new RegExp(
    `^(Waiting for deployment spec update to be observed\\.\\.\\.|Waiting for deployment "${name}" rollout to finish: (\\d+ out of \\d+ new replicas have been updated|\\d+ old replicas are pending termination|\\d+ of \\d+ updated replicas are available)\\.\\.\\.|deployment "${name}" successfully rolled out)$`,
  );

/** A `kubectl get pods -w` of the Deployment's pods that checks the rollout's bounds at every event. */
class PodWatch {
  private readonly proc: ChildProcess;
  private readonly pods = new Map<string, { terminating: boolean; ready: boolean }>();
  private buf = '';
  readonly violations: string[] = [];
  readonly lines: string[] = [];
  events = 0;
  deleted = 0;
  maxPods = 0;
  minReady = Infinity;
  /** Whether pods of two ReplicaSets ever ran side by side (a rolling update, not a recreate). */
  overlapped = false;

  constructor(server: KiteServer, selector: string, maxPods: number, minReady: number) {
    // With --output-watch-events the columns read the event: its type and its object.
    const columns = 'EVENT:.type,NAME:.object.metadata.name,DEL:.object.metadata.deletionTimestamp,READY:.object.status.conditions[?(@.type=="Ready")].status';
    this.proc = spawn('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.dataDir, 'kubectl-cache'), 'get', 'pods', '-l', selector, '-w', '--output-watch-events', '--no-headers', '-o', `custom-columns=${columns}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl).trim();
        this.buf = this.buf.slice(nl + 1);
        if (line) this.observe(line, maxPods, minReady);
      }
    });
  }

  private observe(line: string, maxPods: number, minReady: number): void {
    this.lines.push(line);
    const [event, name, del, ready] = line.split(/\s+/);
    if (!name) return;
    this.events++;
    if (event === 'DELETED') {
      this.pods.delete(name);
      this.deleted++;
    }
    else this.pods.set(name, { terminating: del !== '<none>', ready: ready === 'True' });
    const liveNames = [...this.pods].filter(([, p]) => !p.terminating).map(([n]) => n);
    if (new Set(liveNames.map((n) => n.replace(/-[^-]+$/, ''))).size > 1) this.overlapped = true;
    const live = [...this.pods.values()].filter((p) => !p.terminating);
    const readyLive = live.filter((p) => p.ready).length;
    this.maxPods = Math.max(this.maxPods, live.length);
    // Counted once the rollout started from a full Deployment (the watch's initial list arrives pod by pod).
    if (this.events > maxPods) this.minReady = Math.min(this.minReady, readyLive);
    if (live.length > maxPods) this.violations.push(`${live.length} pods > ${maxPods} after: ${line}`);
    if (this.events > maxPods && readyLive < minReady) this.violations.push(`${readyLive} ready < ${minReady} after: ${line}`);
  }

  stop(): void {
    this.proc.kill('SIGTERM');
  }
}

describe('Deployment controller (kite server + kite sim, kubectl)', () => {
  const cluster = simCluster(3);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const replicaSets = (app: string) => (JSON.parse(k(['get', 'rs', '-l', `app=${app}`, '-o', 'json'])) as { items: RS[] }).items;
  const podNames = (app: string) =>
    k(['get', 'pods', '-l', `app=${app}`, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\\n"}{end}'])
      .split('\n')
      .filter((l) => l.trim() && l.trim().split(' ').length === 1);
  const rolloutStatus = (name: string) => kubectl(cluster.server, ['rollout', 'status', `deployment/${name}`, '--timeout=120s']);

  it('create deployment: rollout status prints the progress lines and exits 0', () => {
    assert.equal(k(['create', 'deployment', 'web', '--image=nginx:1.22', '--replicas=3']).trim(), 'deployment.apps/web created');
    const status = rolloutStatus('web');
    assert.equal(status.code, 0, status.stderr);
    const lines = status.stdout.trim().split('\n');
    for (const line of lines) assert.match(line, progressLine('web'));
    assert.equal(lines.at(-1), 'deployment "web" successfully rolled out');
    assert.match(k(['get', 'deployment', 'web', '--no-headers']), /^web\s+3\/3\s+3\s+3\s+\S+\s*$/);
    const [rs] = replicaSets('web');
    assert.match(rs!.metadata.name, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(rs!.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=Deployment,involvedObject.name=web', '-o', 'custom-columns=REASON:.reason,MESSAGE:.message', '--no-headers']);
    assert.match(events, new RegExp(`^ScalingReplicaSet\\s+Scaled up replica set ${rs!.metadata.name} from 0 to 3$`, 'm'));
  });

  it('set image rolls within maxSurge and maxUnavailable; history, undo', async () => {
    k(['scale', 'deployment', 'web', '--replicas=4']);
    assert.equal(rolloutStatus('web').code, 0);
    // 4 replicas at 25 %: maxSurge 1, maxUnavailable 1.
    const watch = new PodWatch(cluster.server, 'app=web', 5, 3);
    try {
      await eventually(() => (watch.events >= 4 ? true : undefined), 'the watch to list the pods');
      assert.equal(k(['set', 'image', 'deployment/web', 'nginx=nginx:1.23']).trim(), 'deployment.apps/web image updated');
      const status = rolloutStatus('web');
      assert.equal(status.code, 0, status.stderr);
      for (const line of status.stdout.trim().split('\n')) assert.match(line, progressLine('web'));
      // kubectl ran synchronously: the watch's events are read now, until the 4 old pods are gone.
      await eventually(() => (watch.deleted >= 4 ? true : undefined), 'the watch to see the old pods go', 30_000);
    } finally {
      watch.stop();
    }
    assert.deepEqual(watch.violations, []);
    assert.ok(watch.overlapped, `old and new pods ran side by side:\n${watch.lines.join('\n')}`);
    assert.ok(watch.maxPods >= 4 && watch.minReady >= 3, `${watch.maxPods} ${watch.minReady}`);

    const history = k(['rollout', 'history', 'deployment/web']);
    assert.match(history, /^deployment\.apps\/web\s*\nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/);
    assert.match(k(['rollout', 'history', 'deployment/web', '--revision=2']), /Image:\s+nginx:1\.23/);

    assert.equal(k(['rollout', 'undo', 'deployment/web']).trim(), 'deployment.apps/web rolled back');
    assert.equal(rolloutStatus('web').code, 0);
    const rss = replicaSets('web');
    assert.equal(rss.length, 2, 'the undo reuses the first ReplicaSet');
    const active = rss.find((rs) => rs.spec.replicas === 4)!;
    assert.equal(active.spec.template.spec.containers[0]!.image, 'nginx:1.22');
    assert.equal(active.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');
    assert.match(k(['rollout', 'history', 'deployment/web']), /\n2\s+<none>\n3\s+<none>\n/);
  });

  it('pause, resume, restart, set resources', async () => {
    assert.equal(k(['rollout', 'pause', 'deployment/web']).trim(), 'deployment.apps/web paused');
    k(['set', 'image', 'deployment/web', 'nginx=nginx:1.24']);
    await eventually(() => (k(['get', 'deployment', 'web', '-o', 'jsonpath={.status.conditions[?(@.type=="Progressing")].reason}']) === 'DeploymentPaused' ? true : undefined), 'the paused condition');
    assert.equal(replicaSets('web').length, 2, 'no rollout while paused');
    const undoPaused = kubectl(cluster.server, ['rollout', 'undo', 'deployment/web']);
    assert.equal(undoPaused.code, 1);
    assert.match(undoPaused.stderr, /you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again/);
    assert.equal(k(['rollout', 'resume', 'deployment/web']).trim(), 'deployment.apps/web resumed');
    assert.equal(rolloutStatus('web').code, 0);
    assert.equal(replicaSets('web').length, 3);

    assert.equal(k(['rollout', 'restart', 'deployment/web']).trim(), 'deployment.apps/web restarted');
    assert.equal(rolloutStatus('web').code, 0);
    assert.equal(replicaSets('web').length, 4);
    assert.equal(k(['set', 'resources', 'deployment', 'web', '-c=nginx', '--limits=cpu=200m']).trim(), 'deployment.apps/web resource requirements updated');
    assert.equal(rolloutStatus('web').code, 0);
    assert.match(k(['rollout', 'history', 'deployment/web']), /\n6\s+<none>\n+$/);
  });

  it('scale to 0 and to 5', async () => {
    assert.equal(k(['scale', 'deployment', 'web', '--replicas=0']).trim(), 'deployment.apps/web scaled');
    assert.equal(rolloutStatus('web').code, 0);
    await eventually(() => (podNames('web').length === 0 ? true : undefined), 'no pods', 30_000);
    k(['scale', 'deployment', 'web', '--replicas=5']);
    assert.equal(rolloutStatus('web').code, 0);
    assert.match(k(['get', 'deployment', 'web', '--no-headers']), /^web\s+5\/5\s+5\s+5\s/);
    assert.equal(podNames('web').length, 5);
  });

  it('an image that never pulls exceeds the progress deadline: rollout status exits 1', () => {
    const manifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: stuck
spec:
  replicas: 2
  progressDeadlineSeconds: 5
  selector:
    matchLabels:
      app: stuck
  template:
    metadata:
      labels:
        app: stuck
      annotations:
        sim.kite.dev/scenario: image-pull-error
    spec:
      containers:
      - name: main
        image: nosuch/image:v1
`;
    k(['apply', '-f', '-'], manifest);
    const status = rolloutStatus('stuck');
    assert.equal(status.code, 1, status.stdout);
    assert.equal(status.stderr.trim(), 'error: deployment "stuck" exceeded its progress deadline');
    for (const line of status.stdout.trim().split('\n').filter(Boolean)) assert.match(line, progressLine('stuck'));
    k(['delete', 'deployment', 'stuck']);
  });

  it('delete: background and foreground remove the ReplicaSets and pods; --cascade=orphan leaves them', async () => {
    const create = (name: string) => {
      k(['create', 'deployment', name, '--image=nginx:1.22', '--replicas=2']);
      assert.equal(rolloutStatus(name).code, 0);
    };
    create('bg');
    assert.equal(k(['delete', 'deployment', 'bg']).trim(), 'deployment.apps "bg" deleted');
    await eventually(() => (replicaSets('bg').length === 0 && podNames('bg').length === 0 ? true : undefined), 'background: ReplicaSets and pods gone', 60_000);

    create('fg');
    assert.equal(k(['delete', 'deployment', 'fg', '--cascade=foreground', '--timeout=60s']).trim(), 'deployment.apps "fg" deleted');
    await eventually(() => (replicaSets('fg').length === 0 && podNames('fg').length === 0 ? true : undefined), 'foreground: ReplicaSets and pods gone', 60_000);

    create('orphan');
    assert.equal(k(['delete', 'deployment', 'orphan', '--cascade=orphan']).trim(), 'deployment.apps "orphan" deleted');
    await eventually(() => {
      const rss = replicaSets('orphan');
      return rss.length === 1 && !rss[0]!.metadata.ownerReferences?.length ? true : undefined;
    }, 'the orphaned ReplicaSet without its owner reference', 30_000);
    assert.equal(podNames('orphan').length, 2, 'its pods stay');
  });
});
