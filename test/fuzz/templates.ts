// One valid object per fuzzed resource: the seed each run creates, and the base its mutations start from.
// NAME, NAMESPACE and RV stand for the run's own object name, namespace and current
// resourceVersion; they are substituted into paths and bodies when a request is sent.
import { resources, type ResourceInfo } from '../../src/api/resources.js';

export const NAME = 'fz-target';
export const RV = 'fz-rv';
/** The name a create request gives its new object (NAME with a suffix, so it follows the run's name). */
export const NEW_NAME = `${NAME}-c`;
/** Stands for the run's own namespace, where its namespaced objects live. */
export const NAMESPACE = 'fz-ns';

type Json = Record<string, unknown>;

const containers = [{ name: 'c', image: 'busybox:1.35', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] }];
const podSpec = { containers, tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }], restartPolicy: 'Always' };
const labels = { app: 'fz', tier: 'x' };

/** The spec each resource's template carries (beyond apiVersion, kind and metadata). */
const bodies: Record<string, (csrPem: string) => Json> = {
  namespaces: () => ({ spec: { finalizers: ['kubernetes'] } }),
  pods: () => ({ spec: podSpec }),
  configmaps: () => ({ data: { a: '1', 'b.txt': 'two' }, binaryData: { bin: 'AAEC' } }),
  secrets: () => ({ type: 'Opaque', data: { k: 'dmFsdWU=' }, stringData: { s: 'plain' } }),
  services: () => ({ spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }], type: 'ClusterIP' } }),
  serviceaccounts: () => ({ automountServiceAccountToken: false, secrets: [{ name: 's' }] }),
  endpoints: () => ({ subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] }),
  'core/events': () => ({
    involvedObject: { kind: 'Pod', name: 'p', namespace: NAMESPACE, apiVersion: 'v1' },
    reason: 'Fuzzed',
    message: 'a message',
    type: 'Normal',
    source: { component: 'fuzz' },
    firstTimestamp: '2024-01-01T00:00:00Z',
    lastTimestamp: '2024-01-01T00:00:00Z',
    count: 1,
  }),
  leases: () => ({ spec: { holderIdentity: 'h', leaseDurationSeconds: 15, renewTime: '2024-01-01T00:00:00.000000Z' } }),
  deployments: () => ({ spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec } } }),
  replicasets: () => ({ spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec } } }),
  endpointslices: () => ({ addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }),
  'events.k8s.io/events': () => ({
    eventTime: '2024-01-01T00:00:00.000000Z',
    reportingController: 'example.com/fuzz',
    reportingInstance: 'fuzz-1',
    action: 'Fuzz',
    reason: 'Fuzzed',
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'p', namespace: NAMESPACE, apiVersion: 'v1' },
    note: 'a note',
  }),
  priorityclasses: () => ({ value: 1000, globalDefault: false, description: 'fuzz' }),
  // IPAddresses are left out: their names are IPs, which the run's own object name is not.
  servicecidrs: () => ({ spec: { cidrs: ['10.250.0.0/24'] } }),
  certificatesigningrequests: (csrPem) => ({
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], expirationSeconds: 3600 },
  }),
};

function bodyKey(r: ResourceInfo): string {
  return r.resource === 'events' ? `${r.group || 'core'}/events` : r.resource;
}

export interface Target {
  resource: ResourceInfo;
  template: Json;
}

/**
 * Every resource with a template. Nodes are left out on purpose: the server dials the addresses a
 * Node carries (metrics scrapes, logs), and a fuzzed Node could point anywhere.
 */
export function fuzzTargets(csrPem: string): Target[] {
  return resources
    .filter((r) => bodies[bodyKey(r)])
    .map((r) => ({
      resource: r,
      template: {
        apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
        kind: r.kind,
        metadata: { name: NAME, ...(r.namespaced ? { namespace: NAMESPACE } : {}), labels, annotations: { 'example.com/a': 'b' } },
        ...bodies[bodyKey(r)]!(csrPem),
      },
    }));
}

/** /api/v1 or /apis/GROUP/VERSION. */
export function groupPrefix(r: ResourceInfo): string {
  return r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
}

/** The collection the run's objects live in (namespace `ns` when namespaced). */
export function collectionPath(r: ResourceInfo, ns = NAMESPACE): string {
  return r.namespaced ? `${groupPrefix(r)}/namespaces/${ns}/${r.resource}` : `${groupPrefix(r)}/${r.resource}`;
}
