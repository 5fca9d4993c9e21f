// Service, Endpoints, EndpointSlice, NetworkPolicy, ServiceCIDR, IPAddress, Ingress, IngressClass.
import type { EndpointSlice, Endpoints, Ingress, IngressClass, IPAddress, NetworkPolicy, Service, ServiceCIDR } from '../../api/types.js';
import { age, ageColumn, column, formatLabelSelector, formatLabels, listWithMore, nameColumn, printer, wide } from './printer.js';

/** net.JoinHostPort: IPv6 addresses get brackets. */
const joinHostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** The EXTERNAL-IP cell, by service type. */
export function serviceExternalIP(svc: Service): string {
  const externalIPs = svc.spec?.externalIPs ?? [];
  switch (svc.spec?.type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = svc.status?.loadBalancer?.ingress ?? [];
      const lb = [...new Set(ingress.map((i) => i.ip || i.hostname || '').filter((a) => a !== ''))].sort();
      if (externalIPs.length > 0) return [...lb, ...externalIPs].join(',');
      return lb.length > 0 ? lb.join(',') : '<pending>';
    }
    case 'ExternalName':
      return svc.spec?.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** The PORT(S) cell: "80/TCP", "80:30080/TCP" with a node port, comma-separated; "<none>" without ports. */
export function servicePorts(svc: Service): string {
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? ''}` : `${p.port}/${p.protocol ?? ''}`)).join(',');
}

export const servicePrinter = printer<Service>(
  [
    nameColumn,
    column(
      'Type',
      'string',
      'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
    ),
    column(
      'Cluster-IP',
      'string',
      'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    column(
      'External-IP',
      'string',
      'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.',
    ),
    column(
      'Port(s)',
      'string',
      'The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    ageColumn,
    wide(
      'Selector',
      'string',
      'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/',
    ),
  ],
  (svc, now) => ({
    cells: [
      svc.metadata.name,
      svc.spec?.type ?? '',
      svc.spec?.clusterIPs?.[0] ?? '<none>',
      serviceExternalIP(svc),
      servicePorts(svc),
      age(svc, now),
      formatLabels(svc.spec?.selector),
    ],
  }),
);

/** The ENDPOINTS cell: "ip:port" per address and port (bare ips for port-less subsets), the first three shown. */
export function formatEndpoints(ep: Endpoints): string {
  const subsets = ep.subsets ?? [];
  if (subsets.length === 0) return '<none>';
  const items = subsets.flatMap((ss) => {
    const ips = (ss.addresses ?? []).map((a) => a.ip);
    const ports = ss.ports ?? [];
    return ports.length === 0 ? ips : ports.flatMap((p) => ips.map((ip) => joinHostPort(ip, p.port)));
  });
  return listWithMore(items, '');
}

export const endpointsPrinter = printer<Endpoints>(
  [
    nameColumn,
    column(
      'Endpoints',
      'string',
      'The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.',
    ),
    ageColumn,
  ],
  (ep, now) => ({ cells: [ep.metadata.name, formatEndpoints(ep), age(ep, now)] }),
);

export const endpointSlicePrinter = printer<EndpointSlice>(
  [
    nameColumn,
    column(
      'AddressType',
      'string',
      'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.',
    ),
    column(
      'Ports',
      'string',
      'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.',
    ),
    column('Endpoints', 'string', 'endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.'),
    ageColumn,
  ],
  (slice, now) => {
    // A port without a number means "all ports": its name, or "*".
    const ports = (slice.ports ?? []).map((p) => (p.port != null ? String(p.port) : (p.name ?? '*')));
    const addresses = (slice.endpoints ?? []).flatMap((e) => e.addresses ?? []);
    return {
      cells: [slice.metadata.name, slice.addressType ?? '', listWithMore(ports, '<unset>'), listWithMore(addresses, '<unset>'), age(slice, now)],
    };
  },
);

export const networkPolicyPrinter = printer<NetworkPolicy>(
  [
    nameColumn,
    column(
      'Pod-Selector',
      'string',
      'podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.',
    ),
    ageColumn,
  ],
  (np, now) => ({ cells: [np.metadata.name, formatLabelSelector(np.spec?.podSelector ?? {}), age(np, now)] }),
);

export const serviceCIDRPrinter = printer<ServiceCIDR>(
  [
    nameColumn,
    column(
      'CIDRs',
      'string',
      'CIDRs defines the IP blocks in CIDR notation (e.g. "192.168.0.0/24" or "2001:db8::/64") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.',
    ),
    ageColumn,
  ],
  (cidr, now) => ({ cells: [cidr.metadata.name, (cidr.spec?.cidrs ?? []).join(','), age(cidr, now)] }),
);

/** The PARENTREF cell: `resource.group/namespace/name` in lower case, as schema.GroupResource prints. */
function parentRef(ip: IPAddress): string {
  const ref = ip.spec?.parentRef;
  if (!ref) return '<none>';
  const gr = ref.group ? `${ref.resource ?? ''}.${ref.group}` : (ref.resource ?? '');
  return `${gr.toLowerCase()}${ref.namespace ? `/${ref.namespace}` : ''}/${ref.name ?? ''}`;
}

export const ipAddressPrinter = printer<IPAddress>(
  [nameColumn, column('ParentRef', 'string', 'ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.'), ageColumn],
  (ip, now) => ({ cells: [ip.metadata.name, parentRef(ip), age(ip, now)] }),
);

/** The HOSTS cell: the rules' hosts, the first three and a count of the rest; "*" when none is set. */
function ingressHosts(ingress: Ingress): string {
  const hosts = (ingress.spec?.rules ?? []).map((r) => r.host ?? '').filter((h) => h !== '');
  if (hosts.length === 0) return '*';
  return hosts.length > 3 ? `${hosts.slice(0, 3).join(',')} + ${hosts.length - 3} more...` : hosts.join(',');
}

export const ingressPrinter = printer<Ingress>(
  [
    nameColumn,
    column('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
    column('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    column('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    column('Ports', 'string', 'Ports of TLS configurations that open'),
    ageColumn,
  ],
  (ing, now) => {
    const address = (ing.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter((a) => a !== '').join(',');
    const ports = (ing.spec?.tls ?? []).length > 0 ? '80, 443' : '80';
    return { cells: [ing.metadata.name, ing.spec?.ingressClassName ?? '<none>', ingressHosts(ing), address, ports, age(ing, now)] };
  },
);

export const ingressClassPrinter = printer<IngressClass>(
  [
    nameColumn,
    column('Controller', 'string', 'Controller that is responsible for handling this class'),
    column('Parameters', 'string', 'A reference to a resource with additional parameters'),
    ageColumn,
  ],
  (ic, now) => {
    const p = ic.spec?.parameters;
    const parameters = p ? `${p.kind}${p.apiGroup ? `.${p.apiGroup}` : ''}/${p.name}` : '<none>';
    return { cells: [ic.metadata.name, ic.spec?.controller ?? '', parameters, age(ic, now)] };
  },
);
