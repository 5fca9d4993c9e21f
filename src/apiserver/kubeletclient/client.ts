// The API server's client to kubelets (upstream's pkg/kubelet/client + the registry's
// LocationStreamer): HTTPS to the node's address and kubelet port, the kubelet's serving certificate
// checked against the cluster CA, the API server's own kubelet client certificate; a non-2xx answer
// becomes the API error upstream's GenericHttpResponseChecker makes of it.
import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CertKeyPair } from '../authn/pki.js';
import type { UpgradeTarget } from '../../streaming/upgrade.js';
import { badRequest, internalError, StatusError, type QualifiedResource, type StatusReason } from '../../api/errors.js';

export interface KubeletClientOptions {
  caPem: string;
  /** CN kube-apiserver-kubelet-client: kubelets authorize it through the API server (its ClusterRoleBinding). */
  client: CertKeyPair;
}

export interface KubeletEndpoint {
  host: string;
  port: number;
}

/** kite's preferred address types, InternalIP first (as kubeadm configures --kubelet-preferred-address-types). */
const preferredAddressTypes = ['InternalIP', 'InternalDNS', 'Hostname', 'ExternalIP', 'ExternalDNS'];

/** kwok's (and `kite sim`'s) mark of a simulated node: its addresses are fictional and nothing listens there. */
const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/** Where a node's kubelet listens, or undefined when no kubelet serves it (no port reported, or a simulated node). */
export function kubeletEndpoint(node: Node): KubeletEndpoint | undefined {
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!port || node.metadata?.annotations?.[FAKE_NODE_ANNOTATION] === 'fake') return undefined;
  const addresses = node.status?.addresses ?? [];
  for (const type of preferredAddressTypes) {
    const a = addresses.find((x) => x.type === type && x.address);
    if (a) return { host: a.address, port };
  }
  throw internalError(`no preferred addresses found; known addresses: [${addresses.map((a) => `{${a.type} ${a.address}}`).join(' ')}]`);
}

/** Upstream's maxReadLength for an error body. */
const MAX_ERROR_BODY = 50_000;

export class KubeletClient {
  private readonly agent: Agent;

  constructor(private readonly opts: KubeletClientOptions) {
    this.agent = new Agent({ keepAlive: true, ca: opts.caPem, cert: opts.client.certPem, key: opts.client.keyPem });
  }

  /** Where to dial a streaming upgrade (exec, attach, portForward) on the kubelet, with the same credentials as get(). */
  upgradeTarget(endpoint: KubeletEndpoint, path: string, query: URLSearchParams): UpgradeTarget {
    return { url: kubeletUrl(endpoint, path, query), tls: { ca: this.opts.caPem, cert: this.opts.client.certPem, key: this.opts.client.keyPem } };
  }

  /**
   * GETs path from the kubelet and resolves with its response once it answered 2xx; a failed
   * connection or another answer rejects with an API error about `name` of `resource`.
   */
  async get(endpoint: KubeletEndpoint, path: string, query: URLSearchParams, what: { resource: QualifiedResource; name: string }, signal?: AbortSignal): Promise<IncomingMessage> {
    const url = kubeletUrl(endpoint, path, query);
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(url, { method: 'GET', agent: this.agent, signal }, resolve);
      // Go's url.Error wording: `Get "https://...": <cause>`.
      req.on('error', (err) => reject(internalError(`Get ${JSON.stringify(url)}: ${err.message}`)));
      req.end();
    });
    const code = res.statusCode ?? 0;
    if (code >= 200 && code <= 206) return res;
    throw responseError(code, await readLimited(res), what.resource, what.name);
  }

  close(): void {
    this.agent.destroy();
  }
}

function kubeletUrl(endpoint: KubeletEndpoint, path: string, query: URLSearchParams): string {
  const qs = query.toString();
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `https://${host}:${endpoint.port}${path}${qs ? `?${qs}` : ''}`;
}

async function readLimited(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res as AsyncIterable<Buffer>) {
    if (size < MAX_ERROR_BODY) chunks.push(c.subarray(0, MAX_ERROR_BODY - size));
    size += c.length;
  }
  return Buffer.concat(chunks).toString();
}

const genericMessages: Record<number, [StatusReason, string]> = {
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  409: ['Conflict', 'the server reported a conflict'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

/** Upstream's GenericHttpResponseChecker: 500 and 400 keep the kubelet's text; others become NewGenericServerResponse (verb empty). */
export function responseError(code: number, body: string, resource: QualifiedResource, name: string): StatusError {
  if (code === 500) return internalError(body);
  if (code === 400) return badRequest(body);
  // Go's StatusReasonUnknown is the empty reason.
  let [reason, message] = genericMessages[code] ?? ['' as StatusReason, `the server responded with the status code ${code} but did not return more information`];
  if (code === 403) [reason, message] = ['Forbidden', body];
  else if (!genericMessages[code] && code >= 500) [reason, message] = ['InternalError', `an error on the server (${JSON.stringify(body)}) has prevented the request from succeeding`];
  const qualified = resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
  return new StatusError(code, reason, `${message} ( ${qualified} ${name})`, { name, group: resource.group || undefined, kind: resource.resource });
}
