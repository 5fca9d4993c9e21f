import type { Namespace, Pod } from '../../src/api/types.js';
import { formatReady, formatRestarts, summarizePod } from '../../src/api/pod/status.js';
import { age, ErrorBox, Loading } from './common.js';
import { useLiveList, useNow } from './hooks.js';

export const allNamespaces = '';

export function podLink(pod: Pod): string {
  return `#/pods/${encodeURIComponent(pod.metadata?.namespace ?? '')}/${encodeURIComponent(pod.metadata?.name ?? '')}`;
}

export function PodsPage({ namespace, onNamespace }: { namespace: string; onNamespace: (ns: string) => void }) {
  const namespaces = useLiveList<Namespace>('/api/v1/namespaces');
  const path = namespace === allNamespaces ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
  const { items, error } = useLiveList<Pod>(path);
  const now = useNow();
  const names = (namespaces.items ?? []).map((n) => n.metadata?.name ?? '').sort();
  if (namespace !== allNamespaces && !names.includes(namespace)) names.unshift(namespace);
  return (
    <main>
      <h1>Pods</h1>
      <label class="inline">
        Namespace{' '}
        <select value={namespace} onChange={(e) => onNamespace(e.currentTarget.value)}>
          <option value={allNamespaces}>all namespaces</option>
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      {error && <ErrorBox error={error} />}
      {!items && !error && <Loading />}
      {items && items.length === 0 && <p class="muted">No pods.</p>}
      {items && items.length > 0 && (
        <table>
          <thead>
            <tr>
              {namespace === allNamespaces && <th>Namespace</th>}
              <th>Name</th>
              <th>Ready</th>
              <th>Status</th>
              <th>Restarts</th>
              <th>Age</th>
              <th>IP</th>
              <th>Node</th>
            </tr>
          </thead>
          <tbody>
            {items
              .sort((a, b) => `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`))
              .map((p) => {
                const s = summarizePod(p);
                return (
                  <tr key={p.metadata?.uid}>
                    {namespace === allNamespaces && <td>{p.metadata?.namespace}</td>}
                    <td>
                      <a href={podLink(p)}>{p.metadata?.name}</a>
                    </td>
                    <td>{formatReady(s)}</td>
                    <td class={`status status-${s.reason}`}>{s.reason}</td>
                    <td>{formatRestarts(s, now)}</td>
                    <td>{age(p.metadata?.creationTimestamp, now)}</td>
                    <td>{p.status?.podIP ?? '<none>'}</td>
                    <td>{p.spec?.nodeName ?? '<none>'}</td>
                  </tr>
                );
              })}
          </tbody>
        </table>
      )}
    </main>
  );
}
