// CertificateSigningRequest validation as upstream's pkg/apis/certificates/validation: the request
// must be a self-signed PKCS#10 PEM block, usages known and unique, signerName a domain/path, and
// status writes may only touch what their subresource owns (approval conditions, the certificate).
import { X509Certificate } from 'node:crypto';
import { duplicate, forbidden, invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { CSR_APPROVED, CSR_DENIED, CSR_FAILED, LEGACY_UNKNOWN_SIGNER, decodePemBlocks, parseCertificateRequest, validUsages } from '../certificates.js';
import { arr, deepEqual, isObj, str, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { dns1123SubdomainErrors, invalidEach, qualifiedNameErrors } from './names.js';

interface Options {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  /** Problems already stored are tolerated on update, as upstream does for old data. */
  allowBothApprovedAndDenied: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
  allowLegacySignerName: boolean;
}

const trueOnlyTypes = new Set([CSR_APPROVED, CSR_DENIED, CSR_FAILED]);
const sortedUsages = [...validUsages].sort();

// Any name will do, as upstream's ValidateCertificateRequestName.
const anyName = (): string[] => [];

const conditions = (csr: Obj): Obj[] => arr(isObj(csr.status) ? csr.status.conditions : undefined).filter(isObj);
const certificateOf = (csr: Obj): string => str(isObj(csr.status) ? csr.status.certificate : undefined);
const goBytes = (b64: string) => rawValue(`[]byte{${[...Buffer.from(b64, 'base64')].map((x) => `0x${x.toString(16)}`).join(', ')}}`);

/** certificates' validateCertificate: one or more CERTIFICATE blocks without headers, each a parsable certificate. */
export function certificateErrors(pem: string): string | undefined {
  if (pem === '') return undefined;
  const blocks = decodePemBlocks(pem);
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(b.type)}`;
    if (b.headers) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(b.der);
    } catch (err) {
      return `x509: malformed certificate: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return undefined;
}

/** ValidateSignerName: "<domain>/<path>" with a dotted DNS subdomain and a qualified-name path. */
export function validateSignerName(p: Path, signerName: string): FieldError[] {
  if (!signerName) return [required(p, '')];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [invalid(p, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, path] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.split('.').length < 2) errs.push(invalid(p, signerName, 'should be a domain with at least two segments separated by dots'));
  errs.push(...invalidEach(p, signerName, dns1123SubdomainErrors(domain)));
  errs.push(...invalidEach(p, signerName, qualifiedNameErrors(path)));
  return errs;
}

function validate(csr: Obj, opts: Options): FieldError[] {
  const errs = validateObjectMeta(csr.metadata, false, anyName);
  const spec = isObj(csr.spec) ? csr.spec : {};
  const specPath = Path.root('spec');
  const request = str(spec.request);
  try {
    parseCertificateRequest(Buffer.from(request, 'base64').toString('utf8'));
  } catch (err) {
    errs.push(invalid(specPath.child('request'), goBytes(request), (err as Error).message));
  }
  const usages = arr(spec.usages).map(str);
  if (usages.length === 0) errs.push(required(specPath.child('usages'), ''));
  if (!opts.allowUnknownUsages) {
    usages.forEach((u, i) => {
      if (!validUsages.includes(u)) errs.push(notSupported(specPath.child('usages').index(i), u, sortedUsages));
    });
  }
  if (!opts.allowDuplicateUsages) {
    usages.forEach((u, i) => {
      if (usages.indexOf(u) !== i) errs.push(duplicate(specPath.child('usages').index(i), u));
    });
  }
  const signerName = str(spec.signerName);
  if (!opts.allowLegacySignerName && signerName === LEGACY_UNKNOWN_SIGNER) {
    errs.push(invalid(specPath.child('signerName'), signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName(specPath.child('signerName'), signerName));
  }
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(invalid(specPath.child('expirationSeconds'), spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(csr, opts));
  if (!opts.allowArbitraryCertificate) {
    const why = certificateErrors(Buffer.from(certificateOf(csr), 'base64').toString('utf8'));
    if (why) errs.push(invalid(Path.root('status').child('certificate'), '<certificate data>', why));
  }
  return errs;
}

function validateConditions(csr: Obj, opts: Options): FieldError[] {
  const p = Path.root('status').child('conditions');
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions(csr).forEach((c, i) => {
    const type = str(c.type);
    const status = str(c.status);
    if (!opts.allowEmptyConditionType && !type) errs.push(required(p.index(i).child('type'), ''));
    const allowed = trueOnlyTypes.has(type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!status) errs.push(required(p.index(i).child('status'), ''));
    else if (!allowed.includes(status)) errs.push(notSupported(p.index(i).child('status'), status, allowed));
    if (!opts.allowBothApprovedAndDenied) {
      if (type === CSR_APPROVED) {
        approved = true;
        if (denied) errs.push(invalid(p, type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (type === CSR_DENIED) {
        denied = true;
        if (approved) errs.push(invalid(p, type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!opts.allowDuplicateConditionTypes && seen.has(type)) errs.push(duplicate(p.index(i).child('type'), type));
    seen.add(type);
  });
  return errs;
}

/** Options for a create (old undefined) or an update that tolerate what the stored object already has. */
function optionsFor(csr: Obj, old: Obj | undefined): Options {
  const oldConditions = old ? conditions(old) : [];
  const types = oldConditions.map((c) => str(c.type));
  const oldUsages = old && isObj(old.spec) ? arr(old.spec.usages).map(str) : [];
  const oldCert = old ? certificateOf(old) : '';
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: types.includes(CSR_APPROVED) && types.includes(CSR_DENIED),
    allowDuplicateConditionTypes: new Set(types).size !== types.length,
    allowEmptyConditionType: types.includes(''),
    allowArbitraryCertificate:
      old !== undefined && (certificateOf(csr) === oldCert || certificateErrors(Buffer.from(oldCert, 'base64').toString('utf8')) !== undefined),
    allowUnknownUsages: oldUsages.some((u) => !validUsages.includes(u)),
    allowDuplicateUsages: new Set(oldUsages).size !== oldUsages.length,
    allowLegacySignerName: old !== undefined && isObj(old.spec) && old.spec.signerName === LEGACY_UNKNOWN_SIGNER,
  };
}

function validateUpdateWith(csr: Obj, old: Obj, opts: Options): FieldError[] {
  const errs = validate(csr, opts);
  const p = Path.root('status').child('conditions');
  const ofType = (o: Obj, t: string) => conditions(o).filter((c) => c.type === t);
  for (const t of [CSR_APPROVED, CSR_DENIED, CSR_FAILED]) {
    if (ofType(csr, t).length < ofType(old, t).length) errs.push(forbidden(p, `updates may not remove a condition of type ${JSON.stringify(t)}`));
  }
  if (!opts.allowSettingApprovalConditions) {
    for (const t of [CSR_APPROVED, CSR_DENIED]) {
      const before = ofType(old, t);
      const after = ofType(csr, t);
      if (after.length > before.length) errs.push(forbidden(p, `updates may not add a condition of type ${JSON.stringify(t)}`));
      else if (after.length === before.length && !deepEqual(before, after)) errs.push(forbidden(p, `updates may not modify a condition of type ${JSON.stringify(t)}`));
    }
  }
  if (certificateOf(csr) !== certificateOf(old)) {
    if (!opts.allowSettingCertificate) errs.push(forbidden(Path.root('status').child('certificate'), 'updates may not set certificate content'));
    else if (certificateOf(old) !== '') errs.push(forbidden(Path.root('status').child('certificate'), 'updates may not modify existing certificate content'));
  }
  errs.push(...validateObjectMetaUpdate(csr.metadata, old.metadata));
  return errs;
}

export const validateCertificateSigningRequestCreate = (csr: Obj): FieldError[] => validate(csr, optionsFor(csr, undefined));
export const validateCertificateSigningRequestUpdate = (csr: Obj, old: Obj): FieldError[] => validateUpdateWith(csr, old, optionsFor(csr, old));
export const validateCertificateSigningRequestStatusUpdate = (csr: Obj, old: Obj): FieldError[] =>
  validateUpdateWith(csr, old, { ...optionsFor(csr, old), allowSettingCertificate: true });
export const validateCertificateSigningRequestApprovalUpdate = (csr: Obj, old: Obj): FieldError[] =>
  validateUpdateWith(csr, old, { ...optionsFor(csr, old), allowSettingApprovalConditions: true });
