// The console's login: the browser sends the credential the user gave (a bearer token, or the
// client certificate and key from a kubeconfig, read in the browser) and gets a session for the
// user it proves. A token goes through the server's own token authenticators; a certificate must
// chain to the cluster CA, be in date, allow client authentication, and match the key sent with it
// (so a copied certificate alone proves nothing).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { badRequest } from '../../api/errors.js';
import type { Clock } from '../../util/clock.js';
import { getOwn } from '../../util/own.js';
import { authenticationFailed } from '../authn/authenticator.js';
import type { UserInfo } from '../authn/user.js';
import type { TokenAuthenticator } from '../reviews/authentication.js';

const clientAuthUsage = '1.3.6.1.5.5.7.3.2';

export interface LoginDependencies {
  tokens: TokenAuthenticator;
  caPem: string;
  clock: Clock;
}

/** The user the login body's credential proves; a 400 for a malformed body, a 401 for a bad credential. */
export async function loginUser(body: unknown, deps: LoginDependencies): Promise<UserInfo> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the login body must be a JSON object');
  const token = getOwn(body, 'token');
  const certificate = getOwn(body, 'clientCertificate');
  const key = getOwn(body, 'clientKey');
  if (typeof token === 'string' && token !== '') {
    const found = await deps.tokens.authenticateToken(token, []);
    if (!found) throw authenticationFailed('the token is not for this server');
    return found.user;
  }
  if (typeof certificate === 'string' && typeof key === 'string') return certificateUser(certificate, key, deps);
  throw badRequest('the login body needs "token", or "clientCertificate" and "clientKey" (PEM)');
}

function certificateUser(certPem: string, keyPem: string, { caPem, clock }: LoginDependencies): UserInfo {
  let cert: X509Certificate;
  let matches: boolean;
  try {
    cert = new X509Certificate(certPem);
    matches = cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch (err) {
    throw authenticationFailed(`unreadable client certificate or key: ${String(err)}`);
  }
  const ca = new X509Certificate(caPem);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) throw authenticationFailed(`client certificate ${cert.subject} was not issued by ${ca.subject}`);
  const now = clock.now();
  if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) throw authenticationFailed(`client certificate ${cert.subject} is not in date`);
  if (cert.keyUsage && !cert.keyUsage.includes(clientAuthUsage)) throw authenticationFailed(`client certificate ${cert.subject} is not for client authentication`);
  if (!matches) throw authenticationFailed('the client key does not match the certificate');
  // The names as the x509 authenticator maps them: the last CN is the user, every O a group.
  const names = subjectNames(cert.subject);
  const name = names.get('CN')?.at(-1);
  if (!name) throw authenticationFailed('client certificate has no common name');
  return { name, groups: names.get('O') ?? [] };
}

/** Node's subject text is one `KEY=value` per line. */
function subjectNames(subject: string): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const line of subject.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const k = line.slice(0, eq);
    names.set(k, [...(names.get(k) ?? []), line.slice(eq + 1)]);
  }
  return names;
}
