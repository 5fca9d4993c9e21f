// GET /metrics/resource from a node's kubelet with the API server's kubelet client certificate
// (metrics-server uses its own identity; kite's in-process stand-in uses the API server's).
import type { Node } from 'kubernetes-types/core/v1.js';
import { kubeletEndpoint, type KubeletClient } from '../../kubeletclient/client.js';
import type { ScrapeFn } from './scraper.js';

/** Upstream's cap on a scrape response (metrics-server reads at most 10 MiB). */
const MAX_BODY = 10 << 20;

export function scrapeResourceMetrics(client: KubeletClient): ScrapeFn {
  return async (node: Node, signal: AbortSignal) => {
    const name = node.metadata?.name ?? '';
    const endpoint = kubeletEndpoint(node);
    if (!endpoint) throw new Error(`no kubelet serves node "${name}"`);
    const res = await client.get(endpoint, '/metrics/resource', new URLSearchParams(), { resource: { group: '', resource: 'nodes/metrics' }, name }, signal);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) {
        res.destroy();
        throw new Error(`the response of node "${name}" is larger than ${MAX_BODY} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  };
}
