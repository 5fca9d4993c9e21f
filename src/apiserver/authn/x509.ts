// Client-certificate authentication: the TLS layer verified the chain against the CA it was given
// (chain, validity, client-auth purpose); this checks the leaf came from the cluster CA and maps
// CN to the user name and O to the groups, as upstream's CommonNameUserConversion.
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { authenticationFailed, type Authenticator } from './authenticator.js';
import type { UserInfo } from './user.js';

export class X509Authenticator implements Authenticator {
  private readonly ca: X509Certificate;

  /** caPem: the CA whose client certificates are accepted; the HTTPS server must trust it too (its `ca` option). */
  constructor(caPem: string) {
    this.ca = new X509Certificate(caPem);
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const socket = req.socket as Partial<TLSSocket>;
    if (typeof socket.getPeerCertificate !== 'function') return undefined;
    const peer = socket.getPeerCertificate();
    if (!peer?.raw) return undefined;
    if (!socket.authorized) throw authenticationFailed(`client certificate rejected: ${String(socket.authorizationError)}`);
    const leaf = new X509Certificate(peer.raw);
    // The server may trust more CAs than this authenticator (e.g. a front proxy's): insist on ours.
    if (!leaf.checkIssued(this.ca) || !leaf.verify(this.ca.publicKey)) {
      throw authenticationFailed(`client certificate ${leaf.subject} was not issued by ${this.ca.subject}`);
    }
    // Go keeps the last CN when a subject repeats it.
    const name = all(peer.subject?.CN).at(-1);
    if (!name) return undefined;
    return { name, groups: all(peer.subject?.O) };
  }
}

// Node gives a string for a single value and an array when a name repeats an attribute.
function all(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
