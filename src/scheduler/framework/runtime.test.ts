import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { Snapshot } from '../cache/snapshot.js';
import { makeNode, makePod } from '../testing/builders.js';
import { FakeSchedulerClient } from '../testing/fake-client.js';
import { silentLogger } from '../testing/harness.js';
import { nodeInfo } from '../testing/plugins.js';
import { CycleState } from './cycle-state.js';
import type { Plugin } from './interface.js';
import { Framework, type PluginConfig } from './runtime.js';
import { Code, Status } from './status.js';
import { PodInfo, type NodeInfo } from './types.js';

const base = {
  Sort: () => ({ name: 'Sort', less: () => false }),
  Binder: () => ({ name: 'Binder', bind: async () => undefined }),
};

function framework(plugins: Record<string, Plugin>, configs: PluginConfig[] = Object.keys(plugins).map((name) => ({ name })), clock = new FakeClock(), nominated: PodInfo[] = []) {
  const registry = { ...base, ...Object.fromEntries(Object.entries(plugins).map(([k, p]) => [k, () => p])) };
  return new Framework({
    registry,
    profile: { schedulerName: 'test', plugins: [{ name: 'Sort' }, ...configs, { name: 'Binder' }] },
    client: new FakeSchedulerClient(),
    clock,
    logger: silentLogger,
    snapshot: new Snapshot(),
    nominator: { nominatedPodsForNode: () => nominated },
  });
}

const pod = makePod().obj();
const ni = nodeInfo(makeNode().name('n').obj());

describe('Framework', () => {
  it('rejects profiles without a queue sort or with unknown plugins', () => {
    assert.throws(() => framework({ X: { name: 'X' } }, [{ name: 'Missing' }]), /plugin "Missing" does not exist/);
  });

  it('skips the Filter of a plugin whose PreFilter returned Skip', () => {
    const calls: string[] = [];
    const fwk = framework({
      A: { name: 'A', preFilter: () => ({ status: Status.of(Code.Skip) }), filter: () => (calls.push('A'), Status.of(Code.Unschedulable, 'a')) } as Plugin,
      B: { name: 'B', filter: () => (calls.push('B'), undefined) } as Plugin,
    });
    const state = new CycleState();
    assert.equal(fwk.runPreFilterPlugins(state, pod).status, undefined);
    assert.equal(fwk.runFilterPlugins(state, pod, ni), undefined);
    assert.deepEqual(calls, ['B']);
  });

  it('returns the first failing Filter with its plugin name', () => {
    const fwk = framework({
      A: { name: 'A', filter: () => Status.of(Code.Unschedulable, 'a') } as Plugin,
      B: { name: 'B', filter: () => assert.fail('B must not run') } as Plugin,
    });
    const s = fwk.runFilterPlugins(new CycleState(), pod, ni);
    assert.deepEqual([s?.code, s?.plugin, s?.message()], ['Unschedulable', 'A', 'a']);
  });

  it('intersects PreFilter node names and reports an empty intersection', () => {
    const fwk = framework({
      A: { name: 'A', preFilter: () => ({ result: { nodeNames: new Set(['n1', 'n2']) } }) } as Plugin,
      B: { name: 'B', preFilter: () => ({ result: { nodeNames: new Set(['n2', 'n3']) } }) } as Plugin,
    });
    assert.deepEqual([...fwk.runPreFilterPlugins(new CycleState(), pod).result!.nodeNames!], ['n2']);
    const disjoint = framework({
      A: { name: 'A', preFilter: () => ({ result: { nodeNames: new Set(['n1']) } }) } as Plugin,
      B: { name: 'B', preFilter: () => ({ result: { nodeNames: new Set(['n3']) } }) } as Plugin,
    });
    const out = disjoint.runPreFilterPlugins(new CycleState(), pod);
    assert.deepEqual([out.status?.code, out.status?.message()], ['UnschedulableAndUnresolvable', "node(s) didn't satisfy plugin(s) [A B] simultaneously"]);
  });

  it('stops PreFilter at UnschedulableAndUnresolvable but runs all after Unschedulable', () => {
    const calls: string[] = [];
    const fwk = framework({
      A: { name: 'A', preFilter: () => (calls.push('A'), { status: Status.of(Code.Unschedulable, 'a') }) } as Plugin,
      B: { name: 'B', preFilter: () => (calls.push('B'), undefined) } as Plugin,
    });
    const out = fwk.runPreFilterPlugins(new CycleState(), pod);
    assert.deepEqual([calls, out.status?.plugin, [...out.unschedulablePlugins]], [['A', 'B'], 'A', ['A']]);
  });

  it('normalizes, validates and weights scores', () => {
    const nodes = [nodeInfo(makeNode().name('a').obj()), nodeInfo(makeNode().name('b').obj())];
    const raw: Record<string, number> = { a: 1, b: 4 };
    const scorer = {
      name: 'S',
      score: (_s: CycleState, _p: Pod, n: NodeInfo) => raw[n.name]!,
      scoreExtensions: () => ({ normalizeScore: (_s: CycleState, _p: Pod, scores: number[]) => scores.forEach((v, i) => (scores[i] = v * 25)) }),
    } as Plugin;
    const flat = { name: 'F', score: () => 10 } as Plugin;
    const fwk = framework({ S: scorer, F: flat }, [{ name: 'S', weight: 2 }, { name: 'F' }]);
    assert.deepEqual(fwk.runScorePlugins(new CycleState(), pod, nodes).totals, [2 * 25 + 10, 2 * 100 + 10]);
    const bad = framework({ F: { name: 'F', score: () => 101 } as Plugin });
    assert.match(bad.runScorePlugins(new CycleState(), pod, nodes).status!.message(), /plugin "F" returns an invalid score 101, it should in the range of \[0, 100\] after normalizing/);
  });

  it('does not score with plugins whose PreScore returned Skip', () => {
    const fwk = framework({ S: { name: 'S', preScore: () => Status.of(Code.Skip), score: () => assert.fail('skipped') } as Plugin });
    const state = new CycleState();
    assert.equal(fwk.runPreScorePlugins(state, pod, [ni]), undefined);
    assert.deepEqual(fwk.runScorePlugins(state, pod, [ni]).totals, [0]);
  });

  it('holds a pod at Permit until allowed, or rejects it on timeout', async () => {
    const clock = new FakeClock();
    const fwk = framework({ P: { name: 'P', permit: () => ({ status: Status.of(Code.Wait), timeoutMs: 10_000 }) } as Plugin }, undefined, clock);
    const p1 = makePod().obj();
    assert.equal(fwk.runPermitPlugins(new CycleState(), p1, 'n')?.code, 'Wait');
    const waiting = fwk.waitOnPermit(p1);
    fwk.getWaitingPod(p1.metadata!.uid!)!.allow('P');
    assert.equal(await waiting, undefined);

    const p2 = makePod().obj();
    fwk.runPermitPlugins(new CycleState(), p2, 'n');
    const timedOut = fwk.waitOnPermit(p2);
    await clock.advance(10_000);
    const s = await timedOut;
    assert.deepEqual([s?.code, s?.plugin, s?.message()], ['Unschedulable', 'P', 'rejected due to timeout after waiting 10s at plugin P']);
  });

  it('passes binding to the next Bind plugin on Skip', async () => {
    const calls: string[] = [];
    const fwk = framework({
      First: { name: 'First', bind: async () => (calls.push('First'), Status.of(Code.Skip)) } as Plugin,
    });
    assert.equal(await fwk.runBindPlugins(new CycleState(), pod, 'n'), undefined);
    assert.deepEqual(calls, ['First']);
  });

  it('counts nominated pods of equal or higher priority when filtering', () => {
    const capacity = { name: 'Cap', filter: (_s: CycleState, _p: Pod, n: NodeInfo) => (n.pods.length > 0 ? Status.of(Code.Unschedulable, 'full') : undefined) } as Plugin;
    const high = new PodInfo(makePod().priority(10).obj());
    const low = new PodInfo(makePod().priority(0).obj());
    const incoming = makePod().priority(5).obj();
    assert.equal(framework({ Cap: capacity }, undefined, undefined, [high]).runFilterPluginsWithNominatedPods(new CycleState(), incoming, ni)?.message(), 'full');
    assert.equal(framework({ Cap: capacity }, undefined, undefined, [low]).runFilterPluginsWithNominatedPods(new CycleState(), incoming, ni), undefined);
  });

  it('merges PostFilter rejections', async () => {
    const fwk = framework({
      A: { name: 'A', postFilter: () => ({ status: Status.of(Code.Unschedulable, 'a') }) } as Plugin,
      B: { name: 'B', postFilter: async () => ({ status: Status.of(Code.Unschedulable, 'b') }) } as Plugin,
    });
    const out = await fwk.runPostFilterPlugins(new CycleState(), pod, undefined as never);
    assert.deepEqual([out.status.code, out.status.plugin, out.status.message()], ['Unschedulable', 'A', 'a, b']);
  });
});
