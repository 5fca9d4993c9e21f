// PodLogOptions (core/v1) as the API server and the kubelet read them from a query string, and
// upstream's ValidatePodLogOptions. Both ends share this so a log request means the same thing twice.
import { forbidden, invalid, Path, type FieldError } from '../field.js';
import { queryBool, queryInt64 } from '../query.js';

/** core/v1 PodLogOptions (kubernetes-types leaves it out: it is only ever a query). */
export interface PodLogOptions {
  container?: string;
  follow?: boolean;
  previous?: boolean;
  sinceSeconds?: number;
  /** RFC 3339, whole seconds. */
  sinceTime?: string;
  timestamps?: boolean;
  tailLines?: number;
  limitBytes?: number;
  insecureSkipTLSVerifyBackend?: boolean;
}


function parseTime(v: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) || Number.isNaN(Date.parse(v))) {
    throw new Error(`parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as "2006"`);
  }
  // metav1.Time keeps whole seconds.
  return new Date(Math.floor(Date.parse(v) / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Decodes PodLogOptions from query parameters; throws an Error whose message is the decoding failure
 * (the caller turns it into its own 400).
 */
export function podLogOptionsFromQuery(q: URLSearchParams): PodLogOptions {
  const opts: PodLogOptions = {};
  const str = (k: string) => q.get(k) ?? undefined;
  if (str('container')) opts.container = str('container');
  if (q.has('follow')) opts.follow = queryBool(q.get('follow')!);
  if (q.has('previous')) opts.previous = queryBool(q.get('previous')!);
  if (q.has('timestamps')) opts.timestamps = queryBool(q.get('timestamps')!);
  if (q.has('insecureSkipTLSVerifyBackend')) opts.insecureSkipTLSVerifyBackend = queryBool(q.get('insecureSkipTLSVerifyBackend')!);
  for (const k of ['sinceSeconds', 'tailLines', 'limitBytes'] as const) {
    const v = str(k);
    if (v !== undefined && v !== '') opts[k] = queryInt64(v);
  }
  const since = str('sinceTime');
  if (since) opts.sinceTime = parseTime(since);
  return opts;
}

/** The query a PodLogOptions travels as (the container travels in the kubelet's path instead). */
export function podLogOptionsToQuery(opts: PodLogOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (opts.follow) q.set('follow', 'true');
  if (opts.previous) q.set('previous', 'true');
  if (opts.timestamps) q.set('timestamps', 'true');
  if (opts.sinceSeconds !== undefined) q.set('sinceSeconds', String(opts.sinceSeconds));
  if (opts.sinceTime) q.set('sinceTime', opts.sinceTime);
  if (opts.tailLines !== undefined) q.set('tailLines', String(opts.tailLines));
  if (opts.limitBytes !== undefined) q.set('limitBytes', String(opts.limitBytes));
  return q;
}

/** Upstream's ValidatePodLogOptions (the split-streams field is behind a gate that is off by default). */
export function validatePodLogOptions(opts: PodLogOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (opts.tailLines !== undefined && opts.tailLines < 0) errs.push(invalid(Path.root('tailLines'), opts.tailLines, 'must be greater than or equal to 0'));
  if (opts.limitBytes !== undefined && opts.limitBytes < 1) errs.push(invalid(Path.root('limitBytes'), opts.limitBytes, 'must be greater than 0'));
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined) {
    errs.push(forbidden(Path.root(''), 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  } else if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1) {
    errs.push(invalid(Path.root('sinceSeconds'), opts.sinceSeconds, 'must be greater than 0'));
  }
  return errs;
}
