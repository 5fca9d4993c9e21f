// What makes a request a kubelet's, as upstream's certificates helpers (IsKubeletClientCSR,
// ValidateKubeletServingCSR): the node identity in the subject, only the SANs and usages that
// the kind of certificate needs. Shared by the approver and the signer.
import { NODE_USER_PREFIX, NODES_GROUP, type CertificateRequestInfo } from '../../api/certificates.js';

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set(a).size === b.length && b.every((x) => a.includes(x));
const usagesMatch = (usages: readonly string[], required: readonly string[], optional: string) =>
  sameSet(usages, required) || sameSet(usages, [...required, optional]);

/** Why the request is not a kubelet client certificate request, or undefined when it is. */
export function kubeletClientRequestError(req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP) return 'subject organization is not system:nodes';
  if (req.dnsNames.length > 0) return 'dnsNames subjectAltNames are not allowed';
  if (req.emailAddresses.length > 0) return 'emailAddresses subjectAltNames are not allowed';
  if (req.ipAddresses.length > 0) return 'ipAddresses subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'uriSANs subjectAltNames are not allowed';
  if (!req.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:';
  if (!usagesMatch(usages, ['digital signature', 'client auth'], 'key encipherment')) {
    return 'usages did not match [digital signature client auth] or [digital signature key encipherment client auth]';
  }
  return undefined;
}

/** Why the request is not a kubelet serving certificate request, or undefined when it is. */
export function kubeletServingRequestError(req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  if (!usagesMatch(usages, ['digital signature', 'server auth'], 'key encipherment')) {
    return 'usages did not match [digital signature server auth] or [digital signature key encipherment server auth]';
  }
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP) return 'subject organization is not system:nodes';
  if (req.dnsNames.length === 0 && req.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are forbidden';
  if (req.uris.length > 0) return 'URI subjectAltNames are forbidden';
  if (!req.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:';
  return undefined;
}
