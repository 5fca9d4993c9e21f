// Writing responses: JSON or YAML bodies, metav1.Status errors, and warning headers. A JSON body
// ends in a newline, as Go's json.Encoder writes it upstream.
import type { ServerResponse } from 'node:http';
import YAML from 'yaml';
import { StatusError, internalError, isStatusError } from '../../api/errors.js';

export function writeObject(res: ServerResponse, code: number, body: unknown, yaml = false, warnings: string[] = []): void {
  if (res.headersSent) return;
  if (yaml) writeBody(res, code, YAML.stringify(body), 'application/yaml', warnings);
  else writeBody(res, code, `${JSON.stringify(body)}\n`, 'application/json', warnings);
}

/** An object already serialized as JSON (shared with watch events, so without the newline). */
export function writeJson(res: ServerResponse, code: number, json: string, warnings: string[] = []): void {
  if (res.headersSent) return;
  writeBody(res, code, `${json}\n`, 'application/json', warnings);
}

function writeBody(res: ServerResponse, code: number, text: string, contentType: string, warnings: string[]): void {
  const headers: Record<string, string | string[]> = {
    'Content-Type': contentType,
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-cache, private',
  };
  if (warnings.length) headers.Warning = warnings.map(warningHeader);
  res.writeHead(code, headers);
  res.end(text);
}

export function writeText(res: ServerResponse, code: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  if (res.headersSent) return;
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

/** RFC 7234 warning with code 299 and agent "-", as upstream sends them. */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

/** Turns anything thrown into a Status; unexpected errors become 500s (and are reported). */
export function toStatusError(err: unknown, onUnexpected: (err: unknown) => void): StatusError {
  if (isStatusError(err)) return err;
  onUnexpected(err);
  return internalError(err instanceof Error ? err.message : String(err));
}

export function writeError(res: ServerResponse, err: StatusError): void {
  const headers: Record<string, string> = {};
  if (err.details?.retryAfterSeconds) headers['Retry-After'] = String(err.details.retryAfterSeconds);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  writeObject(res, err.code, err.toStatus());
}
