// Property-based fuzzing of the whole request pipeline (authn, authz, routing, decoding, patching,
// validation, storage) of a real in-process API server. Each run creates its own object, sends 1–3
// hostile requests at it, and checks every answer: an answer came and the process is alive; no 5xx
// but a documented one; an error body is a metav1.Status whose code is the HTTP status; no
// prototype changed; and an error (or a dry run) left the resource's stored state as it was.
//
// CI runs a fixed seed and a fresh one, each bounded in runs and time. To replay:
//   KITE_FUZZ_SEED=<seed> [KITE_FUZZ_PATH=<path>] [KITE_FUZZ_RUNS=<n>] node --import tsx --test test/fuzz/apiserver.test.ts
// KITE_FUZZ_COLLECT=1 records every failing request instead of stopping at the first (for triage).
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { createCertificateRequest } from '../../src/api/certificates.js';
import { requestArb, type FuzzRequest } from './arbitraries.js';
import { startFuzzServer, type Answer, type FuzzServer, type Request } from './server.js';
import { NAME, NAMESPACE, NEW_NAME, RV, collectionPath, fuzzTargets, groupPrefix, type Target } from './templates.js';

const FIXED_SEED = 20250701;
const env = process.env;
const runs = Number(env.KITE_FUZZ_RUNS ?? 150);
const timeLimitMs = Number(env.KITE_FUZZ_TIME_MS ?? 20_000);
const collect = env.KITE_FUZZ_COLLECT === '1';
const seeds: [string, number][] = env.KITE_FUZZ_SEED
  ? [['the given seed', Number(env.KITE_FUZZ_SEED)]]
  : [
      ['the fixed seed', FIXED_SEED],
      ['a fresh seed', (Date.now() ^ (Math.random() * 0x7fffffff)) | 0],
    ];

/** 5xx answers upstream gives on purpose, each with its Status reason. */
const documented5xx: Record<number, string[]> = { 503: ['ServiceUnavailable'], 504: ['Timeout'] };

// --- prototypes ------------------------------------------------------------------------------

const watchedPrototypes: [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['Number.prototype', Number.prototype],
  ['Boolean.prototype', Boolean.prototype],
  ['Map.prototype', Map.prototype],
  ['Set.prototype', Set.prototype],
  ['Promise.prototype', Promise.prototype],
  ['RegExp.prototype', RegExp.prototype],
];
type ProtoSnapshot = Map<object, Map<string | symbol, PropertyDescriptor>>;

function snapshotPrototypes(): ProtoSnapshot {
  return new Map(watchedPrototypes.map(([, p]) => [p, new Map(Reflect.ownKeys(p).map((k) => [k, Reflect.getOwnPropertyDescriptor(p, k)!]))]));
}

/** What changed on the prototypes since the snapshot; each change is undone so later runs start clean. */
function prototypeChanges(before: ProtoSnapshot): string[] {
  const out: string[] = [];
  for (const [name, p] of watchedPrototypes) {
    const was = before.get(p)!;
    for (const k of Reflect.ownKeys(p)) {
      const d = Reflect.getOwnPropertyDescriptor(p, k)!;
      const old = was.get(k);
      if (!old) {
        out.push(`${name}.${String(k)} was added (${safeText(d.value)})`);
        Reflect.deleteProperty(p, k);
      } else if (old.value !== d.value || old.get !== d.get || old.set !== d.set) {
        out.push(`${name}.${String(k)} was changed (${safeText(d.value)})`);
        Reflect.defineProperty(p, k, old);
      }
    }
    for (const [k, d] of was) {
      if (!Reflect.getOwnPropertyDescriptor(p, k)) {
        out.push(`${name}.${String(k)} was removed`);
        Reflect.defineProperty(p, k, d);
      }
    }
  }
  const probe = {} as Record<string, unknown>;
  if (probe.fuzzPolluted !== undefined) out.push(`({}).fuzzPolluted is ${safeText(probe.fuzzPolluted)}`);
  return out;
}

function safeText(v: unknown): string {
  try {
    return String(JSON.stringify(v)).slice(0, 80);
  } catch {
    return typeof v;
  }
}

// --- the checks on one answer ----------------------------------------------------------------

function answerProblems(req: Request, ans: Answer): string[] {
  const out: string[] = [];
  const type = String(ans.headers['content-type'] ?? '');
  if (ans.code >= 500) {
    let reason = '';
    try {
      reason = JSON.parse(ans.body).reason;
    } catch {
      // reported below
    }
    // A HEAD answer has no body to name its reason.
    const documented = req.method === 'HEAD' ? documented5xx[ans.code] !== undefined : documented5xx[ans.code]?.includes(reason);
    if (!documented) out.push(`a ${ans.code} answer (${reason || 'no Status reason'})`);
  }
  if (ans.code >= 400 && req.method !== 'HEAD') {
    let s: Record<string, unknown> | undefined;
    try {
      s = JSON.parse(ans.body);
    } catch {
      out.push(`the error body is not JSON (Content-Type ${type || 'none'})`);
    }
    if (s) {
      if (!type.startsWith('application/json')) out.push(`the error's Content-Type is ${type || 'none'}`);
      if (s.kind !== 'Status' || s.apiVersion !== 'v1') out.push(`the error body is a ${String(s.apiVersion)}/${String(s.kind)}, not a v1 Status`);
      if (s.status !== 'Failure') out.push(`the error Status has status ${safeText(s.status)}`);
      if (s.code !== ans.code) out.push(`the error Status has code ${safeText(s.code)} on an HTTP ${ans.code}`);
      if (typeof s.reason !== 'string' || typeof s.message !== 'string') out.push('the error Status lacks a reason or a message');
    }
  }
  if (ans.code < 300 && type.startsWith('application/json') && req.method !== 'HEAD') {
    if (req.streamMs === undefined) {
      if (!parses(ans.body)) out.push('a JSON answer that does not parse');
    } else if (!parses(ans.body)) {
      // A watch: one event per line (the last may be cut); an ERROR event carries a Status.
      const lines = ans.body.split('\n').filter((l) => l !== '');
      if (ans.cut && !ans.body.endsWith('\n')) lines.pop();
      for (const line of lines) {
        const event = parses(line) ? (JSON.parse(line) as { type?: unknown; object?: { kind?: unknown; code?: unknown } }) : undefined;
        if (!event || typeof event.type !== 'string' || typeof event.object !== 'object') out.push(`a watch event that is not one: ${line.slice(0, 200)}`);
        else if (event.type === 'ERROR' && (event.object?.kind !== 'Status' || typeof event.object.code !== 'number')) out.push(`an ERROR watch event without a Status: ${line.slice(0, 200)}`);
      }
    }
  }
  return out;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function statusMessage(ans: Answer | undefined): string {
  try {
    return String(JSON.parse(ans?.body ?? '').message ?? '');
  } catch {
    return ans?.body.slice(0, 100) ?? '';
  }
}

function describeRequest(req: Request): string {
  const body = req.body === undefined ? '' : typeof req.body === 'string' ? req.body : `<${req.body.length} bytes> ${req.body.toString('base64')}`;
  const headers = Object.entries(req.headers ?? {}).map(([k, v]) => `\n  ${k}: ${v}`).join('');
  return `${req.method} ${req.path}${headers}\n  body (${body.length} chars): ${body.slice(0, 600)}${body.length > 600 ? '…' : ''}`;
}

function describeAnswer(ans: Answer): string {
  return `HTTP ${ans.code}${ans.cut ? ' (stream, cut)' : ''} ${String(ans.headers['content-type'] ?? '')}\n  ${ans.body.slice(0, 800)}`;
}

/** Raised by a run: the request, the answer, what was wrong, and what the server logged. */
class FuzzFailure extends Error {
  constructor(
    readonly problems: string[],
    readonly req: Request,
    readonly ans: Answer | undefined,
    logs: string[],
  ) {
    super(
      `${problems.join('; ')}\nrequest: ${describeRequest(req)}\nanswer: ${ans ? describeAnswer(ans) : 'none'}` +
        (logs.length ? `\nserver log:\n${logs.map((l) => l.slice(0, 1500)).join('')}` : ''),
    );
  }
}

// --- the run ---------------------------------------------------------------------------------

describe('API server fuzz', () => {
  let server: FuzzServer;
  let targets: Target[];
  let seq = 0;
  /** Uncaught errors while the suite runs: each is a crash the in-process server would have had. */
  const uncaught: string[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
  /** The run fast-check may have left running past its time limit; stopping the server waits for it. */
  let inflight: Promise<unknown> = Promise.resolve();
  const failures = new Map<string, string>();
  /** How many answers of each HTTP code a seed's runs got: shows what the generators reach. */
  let codes = new Map<number, number>();
  const byMethod = new Map<string, number>();

  before(async () => {
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
    server = await startFuzzServer();
    const { csrPem } = await createCertificateRequest({ commonName: 'fuzz', organizations: [] });
    targets = fuzzTargets(csrPem);
  });

  after(async () => {
    await inflight.catch(() => undefined);
    await server?.stop();
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    if (collect) {
      console.log([...byMethod].sort().map(([k, n]) => `${k}×${n}`).join(' '));
      console.log(`${failures.size} distinct failures:`);
      for (const [sig, example] of failures) console.log(`\n=== ${sig}\n${example}`);
    }
  });

  /** Every object of a resource, all namespaces: what a failed write must not have changed. */
  async function storedState(t: Target): Promise<Map<string, unknown>> {
    const ans = await server.send({ method: 'GET', path: `${groupPrefix(t.resource)}/${t.resource.resource}`, headers: { Accept: 'application/json' } });
    if (ans.code !== 200) throw new Error(`listing ${t.resource.resource}: ${describeAnswer(ans)}`);
    const items = (JSON.parse(ans.body) as { items: { metadata: { namespace?: string; name: string } }[] }).items;
    return new Map(items.map((o) => [`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o]));
  }

  function stateChanges(before: Map<string, unknown>, after: Map<string, unknown>): string[] {
    const out: string[] = [];
    for (const [k, v] of after) {
      if (!before.has(k)) out.push(`${k} was created`);
      else if (!isDeepStrictEqual(before.get(k), v)) out.push(`${k} was changed: ${safeText(before.get(k))} → ${safeText(v)}`);
    }
    for (const k of before.keys()) if (!after.has(k)) out.push(`${k} was deleted`);
    return out;
  }

  /** The run's object name and namespace. */
  interface Own {
    name: string;
    ns: string;
  }

  async function currentVersion(t: Target, own: Own): Promise<string> {
    const ans = await server.send({ method: 'GET', path: `${collectionPath(t.resource, own.ns)}/${own.name}`, headers: { Accept: 'application/json' } });
    return ans.code === 200 ? String(JSON.parse(ans.body).metadata?.resourceVersion ?? '') : '';
  }

  /** A request to a namespaced resource must leave its namespace alone (`..` in a path must not climb to it). */
  async function namespaceGone(ns: string): Promise<string | undefined> {
    const ans = await server.send({ method: 'GET', path: `/api/v1/namespaces/${ns}`, headers: { Accept: 'application/json' } });
    if (ans.code === 404) return `namespace ${ns} was deleted`;
    if (ans.code === 200 && JSON.parse(ans.body).metadata?.deletionTimestamp) return `namespace ${ns} is being deleted`;
    return undefined;
  }

  const fillTokens = (text: string, own: Own, rv = '') => text.split(NAME).join(own.name).split(NAMESPACE).join(own.ns).split(RV).join(rv);

  function materialize(spec: FuzzRequest, own: Own, rv: string): Request {
    const fill = (text: string) => fillTokens(text, own, rv);
    const path = fill(spec.path);
    // A bare `watch` (or `follow`) is true to upstream's parameter codec, as `watch=` is.
    const watching = /[?&](watch|follow)(=|&|$)/.test(path) || /\/watch\//.test(path);
    return {
      method: spec.method,
      path: watching && !/[?&]timeoutSeconds=/.test(path) ? `${path}${path.includes('?') ? '&' : '?'}timeoutSeconds=1` : path,
      headers: spec.headers,
      body: typeof spec.body === 'string' ? fill(spec.body) : spec.body,
      streamMs: watching ? 2_500 : undefined,
    };
  }

  async function check(spec: FuzzRequest, t: Target, own: Own): Promise<void> {
    const req = materialize(spec, own, await currentVersion(t, own));
    const before = spec.writes ? await storedState(t) : undefined;
    const protos = snapshotPrototypes();
    let ans: Answer | undefined;
    const problems: string[] = [];
    try {
      ans = await server.send(req);
    } catch (err) {
      problems.push(`no answer: ${(err as Error).message}`);
    }
    problems.push(...prototypeChanges(protos));
    if (uncaught.length) problems.push(`uncaught in the server process: ${uncaught.splice(0).join('\n')}`);
    if (ans) {
      codes.set(ans.code, (codes.get(ans.code) ?? 0) + 1);
      if (collect) byMethod.set(`${spec.method} ${ans.code}`, (byMethod.get(`${spec.method} ${ans.code}`) ?? 0) + 1);
      problems.push(...answerProblems(req, ans));
    }
    const dryRun = /[?&]dryRun=All(&|$)/.test(req.path) && !/[?&]dryRun=(?!All(&|$))/.test(req.path);
    if (before && ans && (ans.code >= 400 || (dryRun && ans.code < 300))) {
      const changes = stateChanges(before, await storedState(t));
      if (changes.length) problems.push(`${ans.code >= 400 ? `the error ${ans.code}` : 'a dry run'} left a write behind: ${changes.join('; ')}`);
    }
    if (spec.writes && t.resource.namespaced) {
      const gone = await namespaceGone(own.ns);
      if (gone) problems.push(`${gone} by a request to ${t.resource.resource}`);
    }
    const logs = server.takeLogs();
    if (!problems.length) return;
    const failure = new FuzzFailure(problems, req, ans, logs);
    if (!collect) throw failure;
    const generic = (text: string) => text.replace(/"[^"]*"|\d+|fz-\d+/g, '…').slice(0, 100);
    const sig = `${problems.map(generic).join(' + ')} | ${ans?.code ?? ''} ${generic(statusMessage(ans))} | ${spec.method} ${req.headers?.['Content-Type'] ?? ''}`;
    if (!failures.has(sig)) failures.set(sig, failure.message);
  }

  async function run(t: Target, specs: FuzzRequest[]): Promise<void> {
    const own = { name: `fz-${++seq}`, ns: `fz-${seq}-ns` };
    const json = { 'Content-Type': 'application/json' };
    if (t.resource.namespaced) {
      const ns = await server.send({ method: 'POST', path: '/api/v1/namespaces', headers: json, body: JSON.stringify({ metadata: { name: own.ns } }) });
      if (ns.code !== 201) throw new Error(`creating namespace ${own.ns}: ${describeAnswer(ns)}`);
    }
    const seed = await server.send({ method: 'POST', path: collectionPath(t.resource, own.ns), headers: json, body: fillTokens(JSON.stringify(t.template), own) });
    if (seed.code !== 201) throw new Error(`the ${t.resource.resource} template was refused: ${describeAnswer(seed)}`);
    for (const spec of specs) await check(spec, t, own);
    // Clean up, so lists stay small: drop finalizers, then delete at once. (An empty namespace
    // stays: with no namespace controller, a deleted one would never go.)
    for (const n of [own.name, fillTokens(NEW_NAME, own)]) {
      const item = `${collectionPath(t.resource, own.ns)}/${n}`;
      await server.send({ method: 'PATCH', path: item, headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"finalizers":null}}' });
      await server.send({ method: 'DELETE', path: `${item}?gracePeriodSeconds=0` });
    }
  }

  const scenario = () =>
    fc.oneof(...targets.map((t) => fc.record({ t: fc.constant(t), specs: fc.array(requestArb(t), { minLength: 1, maxLength: 3 }) })));

  for (const [what, seed] of seeds) {
    it(`answers hostile requests properly (${what})`, { timeout: timeLimitMs * 4 + 60_000 }, async (ctx) => {
      await inflight;
      const path = env.KITE_FUZZ_SEED ? env.KITE_FUZZ_PATH : undefined;
      ctx.diagnostic(`seed ${seed}, up to ${runs} runs or ${timeLimitMs} ms; replay: KITE_FUZZ_SEED=${seed} KITE_FUZZ_RUNS=${runs} node --import tsx --test test/fuzz/apiserver.test.ts`);
      const property = fc.asyncProperty(scenario(), ({ t, specs }) => {
        const p = run(t, specs);
        inflight = p.catch(() => undefined);
        return p;
      });
      const details = await fc.check(property, { seed, numRuns: runs, path, plugins: [fc.interruptAfterTimeLimit(timeLimitMs)] });
      const histogram = [...codes].sort(([a], [b]) => a - b).map(([c, n]) => `${c}×${n}`).join(' ');
      ctx.diagnostic(`${details.numRuns} runs${details.interrupted ? ' (stopped by the time limit)' : ''}; answers: ${histogram}`);
      codes = new Map();
      if (details.failed) {
        const replay = `KITE_FUZZ_SEED=${details.seed} KITE_FUZZ_PATH=${details.counterexamplePath} node --import tsx --test test/fuzz/apiserver.test.ts`;
        const err = details.errorInstance;
        throw new Error(`fuzz run failed after ${details.numRuns} runs (seed ${details.seed}); replay with\n  ${replay}\n${err instanceof Error ? err.message : String(err)}`);
      }
    });
  }
});
