// The console's way to the API: every request carries the session token as a bearer token and goes
// to the normal API paths, so the server authorizes it as the logged-in user. Lists stay live over
// watches streamed with fetch, resumed from the last resourceVersion when the stream drops.

export interface Session {
  token: string;
  username: string;
  groups: string[];
  expires: string;
}

const sessionKey = 'kite-console-session';

export function loadSession(): Session | undefined {
  const text = sessionStorage.getItem(sessionKey);
  if (!text) return undefined;
  try {
    const s = JSON.parse(text) as Session;
    return Date.parse(s.expires) > Date.now() ? s : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(s: Session | undefined): void {
  if (s) sessionStorage.setItem(sessionKey, JSON.stringify(s));
  else sessionStorage.removeItem(sessionKey);
}

/** A failed request, as the server's metav1.Status told it. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the server no longer knows the session (401): the app returns to the login page. */
let onUnauthorized: () => void = () => undefined;
export function setUnauthorizedHandler(f: () => void): void {
  onUnauthorized = f;
}

async function failure(res: Response): Promise<ApiError> {
  let reason = res.statusText;
  let message = `${res.status} ${res.statusText}`;
  try {
    const status = (await res.json()) as { reason?: string; message?: string };
    reason = status.reason ?? reason;
    message = status.message ?? message;
  } catch {
    // Not a Status body: the status line says it.
  }
  if (res.status === 401) onUnauthorized();
  return new ApiError(res.status, reason, message);
}

export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const session = loadSession();
  const headers = new Headers(init.headers);
  if (session) headers.set('Authorization', `Bearer ${session.token}`);
  headers.set('Accept', 'application/json');
  const res = await fetch(path, { ...init, headers });
  if (!res.ok) throw await failure(res);
  return res;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return (await (await request(path, { signal })).json()) as T;
}

export interface Credentials {
  token?: string;
  clientCertificate?: string;
  clientKey?: string;
}

export async function login(credentials: Credentials): Promise<Session> {
  const res = await fetch('/ui/api/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(credentials) });
  if (!res.ok) throw await failure(res);
  const body = (await res.json()) as { token: string; user: { username: string; groups: string[] }; expires: string };
  const session = { token: body.token, username: body.user.username, groups: body.user.groups, expires: body.expires };
  saveSession(session);
  return session;
}

export async function logout(): Promise<void> {
  await request('/ui/api/logout', { method: 'POST' }).catch(() => undefined);
  saveSession(undefined);
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
}
export interface KubeObject {
  metadata?: ObjectMeta;
}
interface List<T> {
  metadata?: { resourceVersion?: string };
  items?: T[];
}
interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T & { code?: number; message?: string; reason?: string };
}

const withQuery = (path: string, query: Record<string, string>) => `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams(query).toString()}`;
const keyOf = (o: KubeObject) => o.metadata?.uid ?? `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Each line of a streamed response body, as it arrives. */
export async function* lines(res: Response): AsyncGenerator<string> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += value;
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  if (rest) yield rest;
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Lists path, then watches it, calling update with the whole current set after each change; a
 * dropped stream resumes from the last resourceVersion, an expired one (410) lists again.
 */
export async function listAndWatch<T extends KubeObject>(path: string, update: (items: T[]) => void, onError: (err: ApiError) => void, signal: AbortSignal): Promise<void> {
  const items = new Map<string, T>();
  let rv: string | undefined;
  while (!signal.aborted) {
    try {
      if (rv === undefined) {
        const list = await getJson<List<T>>(path, signal);
        items.clear();
        for (const o of list.items ?? []) items.set(keyOf(o), o);
        rv = list.metadata?.resourceVersion;
        update([...items.values()]);
      }
      const res = await request(withQuery(path, { watch: '1', allowWatchBookmarks: 'true', ...(rv ? { resourceVersion: rv } : {}) }), { signal });
      for await (const line of lines(res)) {
        if (!line.trim()) continue;
        const ev = JSON.parse(line) as WatchEvent<T>;
        if (ev.type === 'ERROR') {
          if (ev.object.code === 410) rv = undefined;
          break;
        }
        rv = ev.object.metadata?.resourceVersion ?? rv;
        if (ev.type === 'BOOKMARK') continue;
        if (ev.type === 'DELETED') items.delete(keyOf(ev.object));
        else items.set(keyOf(ev.object), ev.object);
        update([...items.values()]);
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError) {
        onError(err);
        if (err.code === 401 || err.code === 403 || err.code === 404) return;
      }
    }
    await pause(1000, signal);
  }
}
