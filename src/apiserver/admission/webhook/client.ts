// Posting an AdmissionReview to a webhook over HTTPS, as upstream's webhook client: the URL gets
// `?timeout=<n>s`, the server certificate is verified against the caBundle (else the system roots),
// and the call is aborted at the webhook's timeout so a webhook that hangs cannot hold the request.
// A `service` reference is resolved to a ready endpoint of the Service (the API server's aggregator
// routing): kite's API server runs on the host, which has no route to ClusterIPs unless kube-proxy
// rules happen to cover it, while pod IPs are reachable on the node's bridge. The certificate is still
// checked against `<service>.<namespace>.svc`, the name upstream dials.
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { WebhookClientConfig } from 'kubernetes-types/admissionregistration/v1.js';
import type { Endpoints, Service } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../../util/clock.js';
import type { AdmissionLookups } from '../interface.js';

/** Upstream's cap on a webhook response body. */
const maxResponseBytes = 3 * 1024 * 1024;

/** A failure to get a usable answer (upstream's ErrCallingWebhook): subject to the failurePolicy. */
export class WebhookCallError extends Error {
  constructor(
    readonly webhook: string,
    readonly reason: string,
  ) {
    super(`failed calling webhook "${webhook}": ${reason}`);
    this.name = 'WebhookCallError';
  }
}

export interface WebhookCall {
  webhook: string;
  clientConfig: WebhookClientConfig;
  timeoutSeconds: number;
  body: unknown;
}

interface Target {
  url: URL;
  /** Where to connect when it is not the URL's host (a service endpoint). */
  connectHost?: string;
  connectPort?: number;
}

export interface WebhookClientOptions {
  lookups: AdmissionLookups;
  clock: Clock;
}

export class WebhookClient {
  constructor(private readonly opts: WebhookClientOptions) {}

  /** The decoded JSON response; throws WebhookCallError for anything that is not a 2xx JSON answer in time. */
  async post(call: WebhookCall): Promise<unknown> {
    const target = await this.resolve(call);
    target.url.searchParams.append('timeout', `${call.timeoutSeconds}s`);
    const shown = `Post "${target.url.href}"`;
    const abort = new AbortController();
    const timer = this.opts.clock.setTimer(call.timeoutSeconds * 1000, () => abort.abort());
    try {
      return await this.send(call, target, abort.signal);
    } catch (err) {
      if (err instanceof WebhookCallError) throw err;
      const why = abort.signal.aborted ? 'context deadline exceeded' : goNetError(err as NodeJS.ErrnoException, target);
      throw new WebhookCallError(call.webhook, `failed to call webhook: ${shown}: ${why}`);
    } finally {
      timer.cancel();
    }
  }

  private send(call: WebhookCall, target: Target, signal: AbortSignal): Promise<unknown> {
    const { url } = target;
    const caBundle = call.clientConfig.caBundle;
    const payload = JSON.stringify(call.body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          method: 'POST',
          host: target.connectHost ?? url.hostname.replace(/^\[|\]$/g, ''),
          port: target.connectPort ?? (url.port || 443),
          path: `${url.pathname}${url.search}`,
          servername: isIpLiteral(url.hostname) ? undefined : url.hostname,
          ca: caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined,
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(payload) },
          signal,
          agent: false,
        },
        (res) => readBody(res, call.webhook).then(resolve, reject),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  private async resolve(call: WebhookCall): Promise<Target> {
    const cc = call.clientConfig;
    if (cc.url) {
      try {
        return { url: new URL(cc.url) };
      } catch {
        throw new WebhookCallError(call.webhook, `failed to call webhook: parse "${cc.url}": invalid URL`);
      }
    }
    const ref = cc.service;
    if (!ref) throw new WebhookCallError(call.webhook, 'failed to call webhook: neither service nor url given');
    const port = ref.port ?? 443;
    const host = `${ref.name}.${ref.namespace}.svc`;
    const url = new URL(`https://${host}:${port}${ref.path ?? ''}`);
    const endpoint = await this.serviceEndpoint(ref.namespace, ref.name, port);
    if (!endpoint) {
      throw new WebhookCallError(call.webhook, `failed to call webhook: service "${ref.namespace}/${ref.name}" has no ready endpoints for port ${port}`);
    }
    return { url, connectHost: endpoint.ip, connectPort: endpoint.port };
  }

  /** A ready address of the service and the target port behind its port `port`. */
  private async serviceEndpoint(namespace: string, name: string, port: number): Promise<{ ip: string; port: number } | undefined> {
    const svc: Service | undefined = await this.opts.lookups.get('services', namespace, name);
    const svcPort = svc?.spec?.ports?.find((p) => p.port === port);
    if (!svcPort) return undefined;
    const eps: Endpoints | undefined = await this.opts.lookups.get('endpoints', namespace, name);
    for (const subset of eps?.subsets ?? []) {
      const epPort = subset.ports?.find((p) => (p.name ?? '') === (svcPort.name ?? ''));
      const address = subset.addresses?.[0];
      if (epPort && address) return { ip: address.ip, port: epPort.port };
    }
    return undefined;
  }
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || /^[0-9.]+$/.test(host);
}

function readBody(res: IncomingMessage, webhook: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxResponseBytes) {
        res.destroy();
        reject(new WebhookCallError(webhook, `failed to call webhook: the response body is larger than ${maxResponseBytes} bytes`));
      } else chunks.push(c);
    });
    res.on('error', reject);
    // An abort (the timeout) or a webhook dying mid-body closes the response without 'end'.
    res.on('close', () => {
      if (!res.complete) reject(new Error('unexpected EOF'));
    });
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const code = res.statusCode ?? 0;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (code < 200 || code > 299) {
        const message = (body as { kind?: string; message?: string } | undefined)?.kind === 'Status' ? (body as { message?: string }).message : undefined;
        reject(new WebhookCallError(webhook, `failed to call webhook: ${message || `an error on the server ("${text.slice(0, 256)}") has prevented the request from succeeding`}`));
        return;
      }
      if (body === undefined) reject(new WebhookCallError(webhook, 'failed to call webhook: the response is not JSON'));
      else resolve(body);
    });
  });
}

/** Node's network and TLS errors worded as Go's net/http's. */
function goNetError(err: NodeJS.ErrnoException, target: Target): string {
  const addr = `${target.connectHost ?? target.url.hostname}:${target.connectPort ?? (target.url.port || 443)}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ECONNRESET':
      return 'EOF';
    case 'ENOTFOUND':
      return `dial tcp: lookup ${target.url.hostname}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: certificate is not valid for ${target.url.hostname}`;
    default:
      return err.message;
  }
}
