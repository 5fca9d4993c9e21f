// Live data for the pages: a list kept current by its watch, the clock for ages, the hash route.
import { useEffect, useState } from 'preact/hooks';
import { listAndWatch, type ApiError, type KubeObject } from './api.js';

export interface Live<T> {
  items: T[] | undefined;
  error: ApiError | undefined;
}

/** path's objects, live; undefined path: nothing to watch yet. */
export function useLiveList<T extends KubeObject>(path: string | undefined): Live<T> {
  const [state, setState] = useState<Live<T>>({ items: undefined, error: undefined });
  useEffect(() => {
    setState({ items: undefined, error: undefined });
    if (!path) return;
    const abort = new AbortController();
    void listAndWatch<T>(
      path,
      (items) => setState({ items, error: undefined }),
      (error) => setState((s) => ({ ...s, error })),
      abort.signal,
    );
    return () => abort.abort();
  }, [path]);
  return state;
}

/** Now, advancing every second so ages and "since" stay true. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

/** The location hash without its '#', following changes. */
export function useHashRoute(): string {
  const [route, setRoute] = useState(location.hash.slice(1));
  useEffect(() => {
    const f = () => setRoute(location.hash.slice(1));
    addEventListener('hashchange', f);
    return () => removeEventListener('hashchange', f);
  }, []);
  return route;
}
