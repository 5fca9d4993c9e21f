import type { Node } from '../../src/api/types.js';
import { age, ErrorBox, Loading } from './common.js';
import { useLiveList, useNow } from './hooks.js';

// The condition value that means trouble: Ready must be True, the pressure conditions False.
const healthy = (type: string, status: string) => (type === 'Ready' ? status === 'True' : status === 'False');

function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const words = [ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown'];
  if (node.spec?.unschedulable) words.push('SchedulingDisabled');
  return words.join(',');
}

export function NodesPage() {
  const { items, error } = useLiveList<Node>('/api/v1/nodes');
  const now = useNow();
  return (
    <main>
      <h1>Nodes</h1>
      {error && <ErrorBox error={error} />}
      {!items && !error && <Loading />}
      {items && (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Ready for</th>
              <th>Age</th>
              <th>CPU (allocatable / capacity)</th>
              <th>Memory (allocatable / capacity)</th>
              <th>Pods</th>
              <th>Conditions</th>
            </tr>
          </thead>
          <tbody>
            {items
              .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
              .map((n) => {
                const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
                const cap = n.status?.capacity ?? {};
                const alloc = n.status?.allocatable ?? {};
                return (
                  <tr key={n.metadata?.uid}>
                    <td>{n.metadata?.name}</td>
                    <td>{nodeStatus(n)}</td>
                    <td>{ready?.status === 'True' ? age(ready.lastTransitionTime, now) : '—'}</td>
                    <td>{age(n.metadata?.creationTimestamp, now)}</td>
                    <td>
                      {alloc.cpu ?? '?'} / {cap.cpu ?? '?'}
                    </td>
                    <td>
                      {alloc.memory ?? '?'} / {cap.memory ?? '?'}
                    </td>
                    <td>
                      {alloc.pods ?? '?'} / {cap.pods ?? '?'}
                    </td>
                    <td>
                      <ul class="chips">
                        {(n.status?.conditions ?? []).map((c) => (
                          <li key={c.type} class={healthy(c.type, c.status) ? 'chip' : 'chip bad'} title={`${c.reason ?? ''}: ${c.message ?? ''}`}>
                            {c.type}={c.status}
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                );
              })}
          </tbody>
        </table>
      )}
    </main>
  );
}
