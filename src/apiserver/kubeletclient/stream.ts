// pods/exec, pods/attach and pods/portforward, as upstream's ExecREST, AttachREST and
// PortForwardREST with their ExecLocation, AttachLocation and PortForwardLocation: find the pod,
// its container and its node's kubelet, then connect the client's upgrade to the kubelet's
// /exec, /attach or /portForward. kubectl's v5 WebSocket is translated to the kubelet's SPDY
// (upstream's StreamTranslatorHandler); anything else (SPDY, the port-forward tunnel) is relayed.
import { queryBool } from '../../api/query.js';
import { badRequest, serviceUnavailable } from '../../api/errors.js';
import type { ResourceRequest } from '../handlers/context.js';
import { parseUint16 } from '../../streaming/portforward.js';
import { proxyUpgrade, tunnelPortForward, writeUpgradeFailure } from '../../streaming/proxy.js';
import { WS_PORT_FORWARD_TUNNEL_PROTOCOL, WS_PROTOCOL_V5, type RemoteCommandOptions } from '../../streaming/remotecommand/constants.js';
import { acceptWebSocket, offersWebSocketProtocol, translateRemoteCommand } from '../../streaming/remotecommand/translate.js';
import { takeOverUpgrade, type UpgradeRequest, type UpgradeTarget } from '../../streaming/upgrade.js';
import { kubeletEndpoint, type KubeletClient } from './client.js';
import { logContainer } from './podlog.js';

export type StreamSubresource = 'exec' | 'attach' | 'portforward';

/** core/v1 PodExecOptions and PodAttachOptions (attach has no command), as decoded from the query. */
export interface PodStreamOptions extends RemoteCommandOptions {
  container?: string;
  command: string[];
}

/** Decodes PodExecOptions/PodAttachOptions with Go's parameter codec (a bool is false when absent). */
export function podStreamOptionsFromQuery(q: URLSearchParams): PodStreamOptions {
  const flag = (name: string) => q.has(name) && queryBool(q.get(name)!);
  return {
    container: q.get('container') || undefined,
    command: q.getAll('command'),
    stdin: flag('stdin'),
    stdout: flag('stdout'),
    stderr: flag('stderr'),
    tty: flag('tty'),
  };
}

/** The kubelet's query for a command (upstream's streamParams: "1" for each stream, keys in Go's sorted order). */
export function kubeletStreamQuery(opts: PodStreamOptions, withCommand: boolean): URLSearchParams {
  const q = new URLSearchParams();
  if (withCommand) for (const c of opts.command) q.append('command', c);
  if (opts.stderr) q.set('stderr', '1');
  if (opts.stdin) q.set('stdin', '1');
  if (opts.stdout) q.set('stdout', '1');
  if (opts.tty) q.set('tty', '1');
  return q;
}

/** The kubelet path for a pod's stream: /exec|/attach/{ns}/{pod}/{container} or /portForward/{ns}/{pod}. */
export function kubeletStreamPath(sub: StreamSubresource, namespace: string, pod: string, container: string): string {
  const base = `${encodeURIComponent(namespace)}/${encodeURIComponent(pod)}`;
  return sub === 'portforward' ? `/portForward/${base}` : `/${sub}/${base}/${encodeURIComponent(container)}`;
}

/**
 * Serves pods/{exec,attach,portforward}. Problems found before the upgrade (no such pod or
 * container, no node, no kubelet) are thrown as API errors, which the caller writes as a plain
 * HTTP answer (kubectl then tries SPDY and prints the Status). Once the upgrade is taken over,
 * failures reach the client through the stream (v5 status) or writeUpgradeFailure.
 */
export async function servePodStream(r: ResourceRequest, kubelet: KubeletClient, upgrade: UpgradeRequest | undefined): Promise<void> {
  const sub = r.info.subresource as StreamSubresource;
  const name = r.info.name;
  // The options are decoded first: a bad one is refused before the pod is looked up.
  const opts = podStreamOptionsFromQuery(r.url.searchParams);
  const query = sub === 'portforward' ? portForwardQuery(r.url.searchParams) : kubeletStreamQuery(opts, sub === 'exec');
  const pod = await r.registries.read('pods', r.info.namespace, name);
  const container = sub === 'portforward' ? '' : logContainer(pod, opts.container);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
  const node = await r.registries.read('nodes', '', nodeName);
  const endpoint = kubeletEndpoint(node);
  if (!endpoint) throw serviceUnavailable(`no kubelet serves node "${nodeName}": the ${sub} subresource needs a kite agent on that node`);
  // upstream's UpgradeAwareHandler with upgradeRequired.
  if (!upgrade) throw badRequest('Upgrade request required');

  const path = kubeletStreamPath(sub, pod.metadata?.namespace ?? r.info.namespace, pod.metadata?.name ?? name, container);
  const target = kubelet.upgradeTarget(endpoint, path, query);
  const { socket, head } = upgrade;
  takeOverUpgrade(r.res, socket);
  if (sub !== 'portforward' && offersWebSocketProtocol(r.req, WS_PROTOCOL_V5)) {
    void translate(r, upgrade, target, opts);
    return;
  }
  const relay = sub === 'portforward' && offersWebSocketProtocol(r.req, WS_PORT_FORWARD_TUNNEL_PROTOCOL) ? tunnelPortForward : proxyUpgrade;
  relay(r.req, socket, head, target).catch((err: unknown) => writeUpgradeFailure(socket, err));
}

async function translate(r: ResourceRequest, upgrade: UpgradeRequest, target: UpgradeTarget, opts: RemoteCommandOptions): Promise<void> {
  try {
    const ws = await acceptWebSocket(r.req, upgrade.socket, upgrade.head, WS_PROTOCOL_V5);
    await translateRemoteCommand(ws, target, opts);
  } catch {
    // translateRemoteCommand reports its own failures on the stream; this is a broken handshake.
    upgrade.socket.destroy();
  }
}

/**
 * PodPortForwardOptions from the query (the conversion takes repeated and comma-separated values),
 * as they travel to the kubelet: one comma-separated "port" value. A bad port is a 400 before the
 * upgrade, as upstream's parameter decoding makes it.
 */
export function portForwardQuery(q: URLSearchParams): URLSearchParams {
  const ports: number[] = [];
  for (const p of q.getAll('ports').flatMap((v) => v.split(','))) {
    try {
      ports.push(parseUint16(p));
    } catch (err) {
      throw badRequest(`cannot convert to []int32: ${(err as Error).message}`);
    }
  }
  return new URLSearchParams(ports.length > 0 ? { port: ports.join(',') } : {});
}
