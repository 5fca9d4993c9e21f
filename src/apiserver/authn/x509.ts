// Client-certificate authentication: the TLS layer verified the chain against the CA it was given
// (chain, validity, client-auth purpose); this checks the leaf came from the cluster CA and maps
// CN to the user name and O to the groups, as upstream's CommonNameUserConversion.
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { authenticationFailed, type Authenticator } from './authenticator.js';
import type { UserInfo } from './user.js';

/** What one connection's certificate proved; a TLS connection keeps its peer certificate for its life. */
interface Verdict {
  user?: UserInfo;
  error?: Error;
  /** The certificate's notAfter (ms): past it, the connection must re-verify (and fail). */
  validUntil: number;
}

export class X509Authenticator implements Authenticator {
  private readonly ca: X509Certificate;
  // Parsing and verifying the certificate costs more than the rest of a small request.
  private readonly verdicts = new WeakMap<object, Verdict>();

  /** caPem: the CA whose client certificates are accepted; the HTTPS server must trust it too (its `ca` option). */
  constructor(caPem: string) {
    this.ca = new X509Certificate(caPem);
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const socket = req.socket as Partial<TLSSocket>;
    let verdict = this.verdicts.get(socket);
    if (!verdict || Date.now() > verdict.validUntil) {
      verdict = this.verify(socket);
      this.verdicts.set(socket, verdict);
    }
    if (verdict.error) throw verdict.error;
    return verdict.user;
  }

  private verify(socket: Partial<TLSSocket>): Verdict {
    const forever = Number.POSITIVE_INFINITY;
    if (typeof socket.getPeerCertificate !== 'function') return { validUntil: forever };
    const peer = socket.getPeerCertificate();
    if (!peer?.raw) return { validUntil: forever };
    const leaf = new X509Certificate(peer.raw);
    const validUntil = Date.parse(leaf.validTo);
    if (!socket.authorized) return { error: authenticationFailed(`client certificate rejected: ${String(socket.authorizationError)}`), validUntil: forever };
    if (Date.now() > validUntil) return { error: authenticationFailed(`client certificate ${leaf.subject} has expired`), validUntil: forever };
    // The server may trust more CAs than this authenticator (e.g. a front proxy's): insist on ours.
    if (!leaf.checkIssued(this.ca) || !leaf.verify(this.ca.publicKey)) {
      return { error: authenticationFailed(`client certificate ${leaf.subject} was not issued by ${this.ca.subject}`), validUntil: forever };
    }
    // Go keeps the last CN when a subject repeats it.
    const name = all(peer.subject?.CN).at(-1);
    return { user: name ? { name, groups: all(peer.subject?.O) } : undefined, validUntil };
  }
}

// Node gives a string for a single value and an array when a name repeats an attribute.
function all(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
