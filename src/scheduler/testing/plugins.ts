// Helpers for plugin unit tests: NodeInfos from builders and a framework Handle over a snapshot.
import type { Node, Pod } from '../../api/types.js';
import { Cache } from '../cache/cache.js';
import { Snapshot } from '../cache/snapshot.js';
import type { Handle } from '../framework/interface.js';
import { Framework } from '../framework/runtime.js';
import { FakeClock } from '../../util/clock.js';
import { FakeSchedulerClient } from './fake-client.js';
import { silentLogger } from './harness.js';
import { NodeInfo, PodInfo } from '../framework/types.js';

/** A NodeInfo for node with pods already placed on it. */
export function nodeInfo(node: Node, ...pods: Pod[]): NodeInfo {
  const ni = new NodeInfo(node);
  for (const p of pods) ni.addPod(new PodInfo({ ...p, spec: { ...p.spec!, nodeName: node.metadata?.name } }));
  return ni;
}

/** A snapshot of these nodes (and the pods bound to them) through the cache, as the scheduler builds it. */
export function snapshotOf(nodes: Node[], pods: Pod[] = []): Snapshot {
  const cache = new Cache({ clock: new FakeClock() });
  for (const n of nodes) cache.addNode(n);
  for (const p of pods) cache.addPod(p);
  const snap = new Snapshot();
  cache.updateSnapshot(snap);
  return snap;
}

/** A Handle whose snapshot is `snapshot`: a framework of only the mandatory plugins. */
export function handleFor(snapshot: Snapshot): Handle {
  return new Framework({
    registry: {
      PrioritySort: () => ({ name: 'PrioritySort', less: () => false }),
      Binder: () => ({ name: 'Binder', bind: async () => undefined }),
    },
    profile: { schedulerName: 'test', plugins: [{ name: 'PrioritySort' }, { name: 'Binder' }] },
    client: new FakeSchedulerClient(),
    clock: new FakeClock(),
    logger: silentLogger,
    snapshot,
    nominator: { nominatedPodsForNode: () => [] },
  });
}
