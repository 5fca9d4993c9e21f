// CertificateSigning, as upstream: setting or changing a CSR's status.certificate needs `sign` on
// the signer; other status updates (conditions) pass.
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, ValidatingAdmissionPlugin } from '../interface.js';
import { authorizedForSigner, isCsr, signerNameOf, type Authorize } from './certificatesigners.js';

export const pluginName = 'CertificateSigning';

export class CertificateSigning implements ValidatingAdmissionPlugin {
  readonly name = pluginName;

  constructor(private readonly authorize: Authorize) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'UPDATE' && a.subresource === 'status' && isCsr(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const certificate = (o: unknown) => (o as CertificateSigningRequest | undefined)?.status?.certificate ?? '';
    if (certificate(a.object) === certificate(a.oldObject)) return;
    const signer = signerNameOf(a);
    if (!(await authorizedForSigner(this.authorize, a.user, 'sign', signer))) {
      throw admissionForbidden(a, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
    }
  }
}
