// Fakes for the node status and lease tests: an in-memory Node and Lease API and a scriptable runtime.
import type { Lease, Node } from '../../api/types.js';
import { StatusError } from '../../api/errors.js';
import type { Image, RuntimeStatus, VersionResponse } from '../runtime/types.js';
import type { MachineInfo } from './machine.js';
import type { LeaseClient } from './lease.js';
import type { NodeClient, NodeRuntime } from './status.js';

export const fakeMachine: MachineInfo = {
  numCores: 4,
  memoryCapacity: 8 * 1024 * 1024 * 1024,
  filesystemCapacity: 100 * 1024 * 1024 * 1024,
  machineID: 'm-id',
  systemUUID: 's-uuid',
  bootID: 'b-id',
  kernelVersion: '6.1.0-test',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  operatingSystem: 'linux',
  architecture: 'amd64',
};

export class FakeNodeRuntime implements NodeRuntime {
  networkReady = true;
  images: Image[] = [];
  async version(): Promise<VersionResponse> {
    return { version: '0.1.0', runtime_name: 'containerd', runtime_version: 'v1.6.20', runtime_api_version: 'v1' };
  }
  async status(): Promise<{ status: RuntimeStatus }> {
    return {
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: this.networkReady, reason: this.networkReady ? '' : 'NetworkPluginNotReady', message: this.networkReady ? '' : 'Network plugin returns error: cni plugin not initialized' },
        ],
      },
    };
  }
  async listImages(): Promise<Image[]> {
    return this.images;
  }
}

const conflict = (what: string) => new StatusError(409, 'AlreadyExists', `${what} already exists`, {});
const notFound = (what: string) => new StatusError(404, 'NotFound', `${what} not found`, {});

export class FakeNodeClient implements NodeClient {
  node?: Node;
  readonly statusPatches: object[] = [];
  async create(node: Node): Promise<Node> {
    if (this.node) throw conflict('node');
    this.node = { ...structuredClone(node), metadata: { ...node.metadata, uid: 'node-uid' } };
    return this.node;
  }
  async get(): Promise<Node> {
    if (!this.node) throw notFound('node');
    return this.node;
  }
  async patch(_name: string, patch: { metadata?: { labels?: Record<string, string> } }): Promise<Node> {
    this.node = { ...this.node!, metadata: { ...this.node!.metadata, labels: { ...this.node!.metadata?.labels, ...patch.metadata?.labels } } };
    return this.node;
  }
  async patchStatus(_name: string, patch: { status: Node['status'] }): Promise<Node> {
    this.statusPatches.push(structuredClone(patch));
    this.node = { ...this.node!, status: patch.status };
    return this.node;
  }
}

export class FakeLeaseClient implements LeaseClient {
  lease?: Lease;
  readonly writes: Lease[] = [];
  /** The next n writes fail with this status code. */
  failures: number[] = [];
  private rv = 0;
  private fail(): void {
    const code = this.failures.shift();
    if (code !== undefined) throw new StatusError(code, code === 409 ? 'Conflict' : 'InternalError', 'injected', {});
  }
  async get(): Promise<Lease> {
    if (!this.lease) throw notFound('lease');
    return structuredClone(this.lease);
  }
  async create(lease: Lease): Promise<Lease> {
    this.fail();
    if (this.lease) throw conflict('lease');
    return this.store(lease);
  }
  async update(lease: Lease): Promise<Lease> {
    this.fail();
    if (lease.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) throw new StatusError(409, 'Conflict', 'stale', {});
    return this.store(lease);
  }
  private store(lease: Lease): Lease {
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    this.writes.push(structuredClone(this.lease));
    return structuredClone(this.lease);
  }
}
