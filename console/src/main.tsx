// The console's shell: login, the navigation, and the page the hash route names
// (#/nodes, #/pods/<namespace>, #/pods/<namespace>/<name>).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { loadSession, logout, setUnauthorizedHandler, saveSession, type Session } from './api.js';
import { useHashRoute } from './hooks.js';
import { LoginPage } from './login.js';
import { NodesPage } from './nodes.js';
import { PodPage } from './pod.js';
import { PodsPage } from './pods.js';

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession());
  const route = useHashRoute();
  useEffect(() =>
    setUnauthorizedHandler(() => {
      saveSession(undefined);
      setSession(undefined);
    }),
  );
  if (!session) return <LoginPage onLogin={setSession} />;

  const [page, ns, name] = route.split('/').slice(1).map(decodeURIComponent);
  let body;
  if (page === 'nodes') body = <NodesPage />;
  else if (page === 'pods' && ns !== undefined && name) body = <PodPage namespace={ns} name={name} />;
  else body = <PodsPage namespace={ns ?? 'default'} onNamespace={(n) => (location.hash = `#/pods/${encodeURIComponent(n)}`)} />;

  return (
    <>
      <header>
        <a class="brand" href="#/pods/default">
          kite
        </a>
        <nav aria-label="Main">
          <a href="#/pods/default" aria-current={page !== 'nodes' ? 'page' : undefined}>
            Pods
          </a>
          <a href="#/nodes" aria-current={page === 'nodes' ? 'page' : undefined}>
            Nodes
          </a>
        </nav>
        <span class="user" title={session.groups.join(', ')}>
          {session.username}
        </span>
        <button
          type="button"
          onClick={() => {
            void logout().then(() => setSession(undefined));
          }}
        >
          Log out
        </button>
      </header>
      {body}
    </>
  );
}

render(<App />, document.getElementById('app')!);
