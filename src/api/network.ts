// The cluster's address plan, shared by the kubelet's pod network and the node's service proxy, and
// the labels of the service IP allocator's IPAddress objects (the API server writes, a controller reads).

/** The service range (ClusterIPs). */
export const defaultServiceCIDR = '10.96.0.0/12';
/** The whole cluster's pod range: every node's bridge gets a /24 of it (kite0: 10.217.0.0/24). */
export const defaultClusterCIDR = '10.217.0.0/16';

/** IPAddress objects the API server's allocator made carry this label with this value. */
export const ipAddressManagedByLabel = 'ipaddress.kubernetes.io/managed-by';
export const ipAllocatorName = 'ipallocator.k8s.io';
