// What CertificateApproval and CertificateSigning share, as upstream's certificates admission
// package: a user may approve or sign a CSR when the authorizer allows the verb on the
// certificates.k8s.io `signers` resource named by the CSR's signerName, or by `<domain>/*`.
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.js';
import type { AuthorizationAttributes, AuthorizationResult } from '../../authz/authorizer.js';
import type { UserInfo } from '../../authn/user.js';
import type { AdmissionAttributes } from '../interface.js';

export type Authorize = (attrs: AuthorizationAttributes) => Promise<AuthorizationResult>;

export const isCsr = (a: AdmissionAttributes) => a.resource.group === 'certificates.k8s.io' && a.resource.resource === 'certificatesigningrequests';

export const signerNameOf = (a: AdmissionAttributes) => (a.object as CertificateSigningRequest | undefined)?.spec?.signerName ?? '';

export async function authorizedForSigner(authorize: Authorize, user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  const attrs = (name: string): AuthorizationAttributes => ({
    user,
    verb,
    isResourceRequest: true,
    path: '',
    namespace: '',
    apiGroup: 'certificates.k8s.io',
    apiVersion: '*',
    resource: 'signers',
    subresource: '',
    name,
  });
  if ((await authorize(attrs(signerName))).decision === 'allow') return true;
  const slash = signerName.indexOf('/');
  return slash > 0 && (await authorize(attrs(`${signerName.slice(0, slash)}/*`))).decision === 'allow';
}
