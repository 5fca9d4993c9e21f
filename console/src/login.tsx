import { useState } from 'preact/hooks';
import { login, type Session } from './api.js';
import { kubeconfigCredentials } from './kubeconfig.js';

export function LoginPage({ onLogin }: { onLogin: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const attempt = async (read: () => Promise<Parameters<typeof login>[0]>) => {
    setBusy(true);
    setError(undefined);
    try {
      onLogin(await login(await read()));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login">
      <h1>kite console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void attempt(async () => ({ token: token.trim() }));
        }}
      >
        <label for="token">Bearer token</label>
        <textarea id="token" name="token" rows={3} value={token} onInput={(e) => setToken(e.currentTarget.value)} autocomplete="off" spellcheck={false} />
        <button type="submit" disabled={busy || token.trim() === ''}>
          Log in
        </button>
      </form>
      <div class="or">or</div>
      <label for="kubeconfig">Kubeconfig file (its current context's token or client certificate)</label>
      <input
        id="kubeconfig"
        type="file"
        disabled={busy}
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          if (file) void attempt(async () => kubeconfigCredentials(await file.text()));
        }}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}
