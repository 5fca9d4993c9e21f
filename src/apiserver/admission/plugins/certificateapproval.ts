// CertificateApproval, as upstream: approving or denying a CSR (its approval subresource) needs
// `approve` on the signer.
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, ValidatingAdmissionPlugin } from '../interface.js';
import { authorizedForSigner, isCsr, signerNameOf, type Authorize } from './certificatesigners.js';

export const pluginName = 'CertificateApproval';

export class CertificateApproval implements ValidatingAdmissionPlugin {
  readonly name = pluginName;

  constructor(private readonly authorize: Authorize) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'UPDATE' && a.subresource === 'approval' && isCsr(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const signer = signerNameOf(a);
    if (!(await authorizedForSigner(this.authorize, a.user, 'approve', signer))) {
      throw admissionForbidden(a, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
    }
  }
}
