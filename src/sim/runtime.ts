// What a simulated node's runtime and network would report, offered to stage templates as
// functions: node and pod IPs, container IDs, normalised image references and image IDs. Nothing
// here is ever contacted: the addresses come from blocks reserved against real use.
import { createHash } from 'node:crypto';
import type { Pod } from '../api/types.js';
import type { SimFunction } from './expr.js';

/** The runtime name in containerIDs ("kite-sim://<id>") and in nodeInfo.containerRuntimeVersion. */
export const RUNTIME_NAME = 'kite-sim';

// Node InternalIPs come from 198.18.0.0/15 (RFC 2544, reserved for benchmarking and never routed):
// IPv4's documentation blocks hold only 762 addresses, too few for 5,000 nodes. Pod IPs come from
// the shared address space 100.64.0.0/10 (RFC 6598), one /23 per node.
const nodeBase = ipToInt('198.18.0.0');
const podBase = ipToInt('100.64.0.0');
const podBlockSize = 512;
/** Nodes one simulator can address: 100.64.0.0/10 holds this many /23 pod blocks. */
export const MAX_NODES = 2 ** 22 / podBlockSize;

function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

/** The InternalIP of node `index`. */
export function nodeIP(index: number): string {
  return intToIp(nodeBase + index + 1);
}

/**
 * Pod IPs per node, lowest free first, stable per pod UID; released when the pod is gone. A node's
 * block holds 510 addresses, far above the 110 pods a node runs.
 */
export class PodIPAM {
  private byPod = new Map<string, { node: number; offset: number }>();
  private used = new Map<number, Set<number>>();

  /** The pod's IP on node `node`, allocating one on first use; undefined when the block is full. */
  allocate(uid: string, node: number): string | undefined {
    const have = this.byPod.get(uid);
    if (have) return this.ip(have.node, have.offset);
    let used = this.used.get(node);
    if (!used) this.used.set(node, (used = new Set()));
    for (let offset = 1; offset < podBlockSize - 1; offset++) {
      if (used.has(offset)) continue;
      used.add(offset);
      this.byPod.set(uid, { node, offset });
      return this.ip(node, offset);
    }
    return undefined;
  }

  /** Records an IP a pod already has (after a simulator restart), so it is not handed out twice. */
  reserve(uid: string, node: number, ip: string): void {
    const offset = ipToInt(ip) - podBase - node * podBlockSize;
    if (offset <= 0 || offset >= podBlockSize - 1 || this.byPod.has(uid)) return;
    let used = this.used.get(node);
    if (!used) this.used.set(node, (used = new Set()));
    used.add(offset);
    this.byPod.set(uid, { node, offset });
  }

  release(uid: string): void {
    const have = this.byPod.get(uid);
    if (!have) return;
    this.byPod.delete(uid);
    this.used.get(have.node)?.delete(have.offset);
  }

  private ip(node: number, offset: number): string {
    return intToIp(podBase + node * podBlockSize + offset);
  }
}

/** A reference as containerd reports it: registry and tag made explicit ("nginx" → "docker.io/library/nginx:latest"). */
export function imageRef(image: string): string {
  const slash = image.indexOf('/');
  const first = slash < 0 ? '' : image.slice(0, slash);
  const hasRegistry = first.includes('.') || first.includes(':') || first === 'localhost';
  let ref = hasRegistry ? image : slash < 0 ? `docker.io/library/${image}` : `docker.io/${image}`;
  const lastSegment = ref.slice(ref.lastIndexOf('/') + 1);
  if (!ref.includes('@') && !lastSegment.includes(':')) ref += ':latest';
  return ref;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The image's digest reference: repository@sha256:…, stable for a given image. */
export function imageID(image: string): string {
  const ref = imageRef(image);
  if (ref.includes('@')) return ref;
  const repo = ref.slice(0, ref.lastIndexOf(':'));
  return `${repo}@sha256:${sha256(ref)}`;
}

/** A container ID that is the same for one pod, container and restart, and new for each restart. */
export function containerID(podUID: string, name: string, restartCount: number): string {
  return `${RUNTIME_NAME}://${sha256(`${podUID}/${name}/${restartCount}`)}`;
}

export interface PodFunctionDeps {
  ipam: PodIPAM;
  /** The index of a simulated node by name (undefined for other nodes). */
  nodeIndex(name: string): number | undefined;
}

/** Template functions for pod stages: hostIP(), podIP(), containerID(name, restarts), imageRef(i), imageID(i). */
export function podFunctions(deps: PodFunctionDeps): Record<string, SimFunction> {
  const hostIP = (pod: Pod): string | undefined => {
    const index = deps.nodeIndex(pod.spec?.nodeName ?? '');
    return index === undefined ? undefined : nodeIP(index);
  };
  return {
    hostIP: (env) => hostIP(env.root as Pod),
    podIP: (env) => {
      const pod = env.root as Pod;
      if (pod.spec?.hostNetwork) return hostIP(pod);
      const index = deps.nodeIndex(pod.spec?.nodeName ?? '');
      return index === undefined ? undefined : deps.ipam.allocate(pod.metadata?.uid ?? '', index);
    },
    containerID: (env, name, restarts) => containerID((env.root as Pod).metadata?.uid ?? '', String(name), Number(restarts ?? 0)),
    imageRef: (_env, image) => imageRef(String(image)),
    imageID: (_env, image) => imageID(String(image)),
  };
}
