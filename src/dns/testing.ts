// Fixtures for the resolver and server tests: a ClusterView over fixed objects.
import type { EndpointSlice, Service } from '../api/types.js';
import { canonicalIP, clusterIPs, type ClusterView } from './resolver.js';

export class StaticClusterView implements ClusterView {
  constructor(
    readonly objects: { services: Service[]; slices: EndpointSlice[]; namespaces: string[] },
    private readonly isSynced = true,
  ) {}

  service(namespace: string, name: string): Service | undefined {
    return this.objects.services.find((s) => s.metadata?.namespace === namespace && s.metadata?.name === name);
  }

  endpointSlices(namespace: string, serviceName: string): EndpointSlice[] {
    return this.objects.slices.filter((s) => s.metadata?.namespace === namespace && s.metadata?.labels?.['kubernetes.io/service-name'] === serviceName);
  }

  servicesByIP(ip: string): Service[] {
    return this.objects.services.filter((s) => clusterIPs(s).includes(ip));
  }

  endpointSlicesByIP(ip: string): EndpointSlice[] {
    return this.objects.slices.filter((s) => (s.endpoints ?? []).some((e) => e.addresses.map(canonicalIP).includes(ip)));
  }

  namespaceExists(namespace: string): boolean {
    return this.objects.namespaces.includes(namespace);
  }

  synced(): boolean {
    return this.isSynced;
  }

  serial(): number {
    return 1764633600;
  }
}

export function service(namespace: string, name: string, spec: Service['spec']): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace, name }, spec };
}

export function slice(namespace: string, serviceName: string, name: string, body: Pick<EndpointSlice, 'endpoints' | 'ports'> & { addressType?: string }): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace, name, labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: body.addressType ?? 'IPv4',
    endpoints: body.endpoints,
    ports: body.ports,
  };
}

/** A small cluster with one of each kind of name the resolver serves. */
export function fixtureCluster(): StaticClusterView {
  return new StaticClusterView({
    namespaces: ['default', 'kube-system', 'web'],
    services: [
      service('default', 'kubernetes', { type: 'ClusterIP', clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], ports: [{ name: 'https', port: 443, protocol: 'TCP' }] }),
      service('kube-system', 'kube-dns', {
        type: 'ClusterIP',
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        ],
      }),
      service('default', 'myservice', { type: 'ClusterIP', clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 9376 }] }),
      service('web', 'dual', {
        type: 'ClusterIP',
        clusterIP: '10.96.0.30',
        clusterIPs: ['10.96.0.30', 'fd00:10:96::30'],
        ports: [
          { name: 'http', port: 80, protocol: 'TCP' },
          { name: 'metrics', port: 9090, protocol: 'TCP' },
        ],
      }),
      service('web', 'headless', { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }),
      service('web', 'empty-headless', { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] }),
      service('web', 'notready', { type: 'ClusterIP', clusterIP: 'None', publishNotReadyAddresses: true, ports: [{ name: 'http', port: 80 }] }),
      service('default', 'external', { type: 'ExternalName', externalName: 'example.com' }),
      service('default', 'alias', { type: 'ExternalName', externalName: 'myservice.default.svc.cluster.local' }),
    ],
    slices: [
      slice('web', 'headless', 'headless-abc', {
        endpoints: [
          { addresses: ['10.217.0.5'], conditions: { ready: true }, hostname: 'web-0' },
          { addresses: ['10.217.0.6'], conditions: { ready: true } },
          { addresses: ['10.217.0.7'], conditions: { ready: false } },
        ],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      }),
      slice('web', 'notready', 'notready-abc', {
        endpoints: [{ addresses: ['10.217.0.9'], conditions: { ready: false } }],
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      }),
      slice('default', 'myservice', 'myservice-abc', {
        endpoints: [{ addresses: ['10.217.0.8'], conditions: { ready: true } }],
        ports: [{ name: 'http', port: 9376, protocol: 'TCP' }],
      }),
    ],
  });
}
