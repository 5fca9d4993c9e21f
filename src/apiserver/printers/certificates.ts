// CertificateSigningRequest columns as upstream's printCertificateSigningRequest.
import { humanDuration } from '../../api/duration.js';
import { CSR_APPROVED, CSR_DENIED, CSR_FAILED } from '../../api/certificates.js';
import { componentSchemas } from '../../api/schema.js';
import type { CertificateSigningRequest } from '../../api/types.js';
import { age, ageColumn, column, nameColumn, printer } from './printer.js';

const docOf = (schema: string, field: string) => componentSchemas[`io.k8s.api.certificates.v1.${schema}`]?.properties?.[field]?.description ?? '';

/** The CONDITION cell: Denied, Approved or Pending (in that precedence), then ",Failed" and ",Issued". */
export function csrCondition(csr: CertificateSigningRequest): string {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  let status = types.has(CSR_DENIED) ? 'Denied' : types.has(CSR_APPROVED) ? 'Approved' : 'Pending';
  if (types.has(CSR_FAILED)) status += ',Failed';
  if (csr.status?.certificate) status += ',Issued';
  return status;
}

export const certificateSigningRequestPrinter = printer<CertificateSigningRequest>(
  [
    nameColumn,
    ageColumn,
    column('SignerName', 'string', docOf('CertificateSigningRequestSpec', 'signerName')),
    column('Requestor', 'string', docOf('CertificateSigningRequestSpec', 'request')),
    column('RequestedDuration', 'string', docOf('CertificateSigningRequestSpec', 'expirationSeconds')),
    column('Condition', 'string', docOf('CertificateSigningRequestStatus', 'conditions')),
  ],
  (csr, now) => {
    const seconds = csr.spec?.expirationSeconds;
    return {
      cells: [
        csr.metadata.name,
        age(csr, now),
        csr.spec?.signerName || '<none>',
        csr.spec?.username ?? '',
        seconds === undefined ? '<none>' : humanDuration(seconds * 1000),
        csrCondition(csr),
      ],
    };
  },
);
