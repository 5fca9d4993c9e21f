// Requests without credentials become system:anonymous, but only on the paths allowed, as upstream's
// anonymous authenticator with path conditions (AuthenticationConfiguration anonymous.conditions).
// Elsewhere they stay unauthenticated and get 401 rather than a 403 naming system:anonymous.
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from './authenticator.js';
import { anonymousUser, type UserInfo } from './user.js';
import { splitRequestTarget } from '../http/requestinfo.js';

export class AnonymousAuthenticator implements Authenticator {
  private readonly paths: ReadonlySet<string>;

  constructor(paths: Iterable<string>) {
    this.paths = new Set(paths);
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const { path } = splitRequestTarget(req.url ?? '/');
    return this.paths.has(path) ? { ...anonymousUser, groups: [...anonymousUser.groups] } : undefined;
  }
}
