// The web console's sessions: after a login proved who the user is, the browser holds an opaque
// random token instead of the user's own credential (a client certificate cannot be sent by a page's
// fetch). The token names the user to the API server's authenticator chain until it expires or the
// user logs out; the number of live sessions is bounded, the oldest giving way.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../util/clock.js';
import { authenticationFailed, type Authenticator } from '../authn/authenticator.js';
import { bearerToken } from '../authn/tokenfile.js';
import type { UserInfo } from '../authn/user.js';

/** Every session token starts with this: other bearer tokens are left to the other authenticators. */
export const sessionTokenPrefix = 'kite-console.';
export const sessionLifetimeMs = 8 * 60 * 60 * 1000;
export const defaultMaxSessions = 1000;

interface Session {
  user: UserInfo;
  expires: number;
}

export interface ConsoleSession {
  token: string;
  user: UserInfo;
  /** ms since the epoch. */
  expires: number;
}

export class ConsoleSessions implements Authenticator {
  // Insertion order is creation order: the first entry is the oldest.
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly clock: Clock,
    private readonly maxSessions = defaultMaxSessions,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  open(user: UserInfo): ConsoleSession {
    const now = this.clock.now();
    if (this.sessions.size >= this.maxSessions) this.sweep(now);
    while (this.sessions.size >= this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    const token = sessionTokenPrefix + randomBytes(32).toString('base64url');
    const session = { user: { ...user, groups: [...user.groups] }, expires: now + sessionLifetimeMs };
    this.sessions.set(token, session);
    return { token, ...session };
  }

  /** Ends the session of the request's token; whether there was one. */
  revoke(req: IncomingMessage): boolean {
    const token = bearerToken(req);
    return token !== undefined && this.sessions.delete(token);
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const token = bearerToken(req);
    if (!token?.startsWith(sessionTokenPrefix)) return undefined;
    const session = this.sessions.get(token);
    if (session && this.clock.now() < session.expires) return { ...session.user, groups: [...session.user.groups] };
    this.sessions.delete(token);
    throw authenticationFailed('unknown or expired console session');
  }

  private sweep(now: number): void {
    for (const [token, s] of this.sessions) if (now >= s.expires) this.sessions.delete(token);
  }
}
