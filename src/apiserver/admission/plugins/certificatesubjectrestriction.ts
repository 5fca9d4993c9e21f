// CertificateSubjectRestriction, as upstream: no CSR for the kube-apiserver-client signer may ask
// for the system:masters group (a certificate that bypasses authorization).
import { KUBE_APISERVER_CLIENT_SIGNER, parseCertificateRequest, requestPem } from '../../../api/certificates.js';
import type { CertificateSigningRequest } from '../../../api/types.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, ValidatingAdmissionPlugin } from '../interface.js';
import { isCsr, signerNameOf } from './certificatesigners.js';

export const pluginName = 'CertificateSubjectRestriction';

export class CertificateSubjectRestriction implements ValidatingAdmissionPlugin {
  readonly name = pluginName;

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.subresource === '' && isCsr(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (signerNameOf(a) !== KUBE_APISERVER_CLIENT_SIGNER) return;
    let organizations: readonly string[] | undefined;
    try {
      organizations = parseCertificateRequest(requestPem(a.object as unknown as CertificateSigningRequest)).organizations;
    } catch {
      // A request that does not parse is validation's to refuse.
      return;
    }
    if (organizations?.includes('system:masters')) throw admissionForbidden(a, `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`);
  }
}
