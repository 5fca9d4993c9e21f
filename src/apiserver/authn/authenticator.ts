// Authentication turns a request's credentials into a user, as upstream's authenticator.Request.
import type { IncomingMessage } from 'node:http';
import { unauthorized, type StatusError } from '../../api/errors.js';
import type { UserInfo } from './user.js';

export interface Authenticator {
  /**
   * The user the request's credentials of this authenticator's kind prove, undefined when the request
   * carries none; throws a 401 StatusError for credentials that are present but bad.
   */
  authenticate(req: IncomingMessage): Promise<UserInfo | undefined>;
}

/** The 401 every authentication failure becomes; why is kept as the cause for logs, never sent to the client. */
export function authenticationFailed(why: string): StatusError {
  const err = unauthorized();
  err.cause = new Error(why);
  return err;
}
