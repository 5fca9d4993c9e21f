// Raw HTTPS requests to the API server, for what a typed client would refuse to send.
import https from 'node:https';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';

export interface RawResponse {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}

export interface RawOptions {
  method?: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Send no client certificate. */
  anonymous?: boolean;
  /** Use this certificate and key instead of the admin's. */
  cert?: { cert: string; key: string };
}

export async function raw(kubeconfig: string, opts: RawOptions): Promise<RawResponse> {
  const cfg = await loadKubeconfig(kubeconfig);
  const url = new URL(opts.path, cfg.server);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: opts.method ?? 'GET',
        ca: cfg.ca,
        cert: opts.anonymous ? undefined : (opts.cert?.cert ?? cfg.cert),
        key: opts.anonymous ? undefined : (opts.cert?.key ?? cfg.key),
        // Node sends DELETE bodies only with an explicit length.
        headers: {
          ...(opts.body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(opts.body)) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ code: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}
