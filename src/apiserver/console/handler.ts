// /ui/ on the API server's own listener: the console's static build (no credentials needed, it holds
// no data), and its login and logout. Everything the console shows it reads from the normal API
// paths with its session token, so authorization applies to it as to any client.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { methodNotAllowed, notFoundPath } from '../../api/errors.js';
import { parseJson, readBody } from '../http/body.js';
import { writeError } from '../http/respond.js';
import { loginUser, type LoginDependencies } from './login.js';
import type { ConsoleSessions } from './sessions.js';
import { staticFile } from './static.js';

export const consolePrefix = '/ui/';
const loginPath = '/ui/api/login';
const logoutPath = '/ui/api/logout';
/** A login body is a token or a certificate and key: far below this. */
const maxLoginBytes = 64 * 1024;

/**
 * No inline script or style, nothing from elsewhere, no framing: the console talks to this server
 * only. Styles set from script (element.style) are not inline styles and stay allowed.
 */
export const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function isConsolePath(path: string): boolean {
  return path === '/ui' || path.startsWith(consolePrefix);
}

/** dist/console beside the built server (dist/src/...), or under the repository when run from src/ by tsx. */
export function defaultConsoleDir(): string {
  const top = fileURLToPath(new URL('../../../', import.meta.url));
  return basename(top) === 'dist' ? join(top, 'console') : join(top, 'dist', 'console');
}

export interface ConsoleDependencies extends LoginDependencies {
  sessions: ConsoleSessions;
  /** The console's build. */
  root: string;
}

export class ConsoleHandler {
  constructor(private readonly deps: ConsoleDependencies) {}

  /** Answers a request for path (isConsolePath); errors are thrown as StatusErrors. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    res.setHeader('Content-Security-Policy', contentSecurityPolicy);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (path === '/ui') {
      res.writeHead(301, { Location: consolePrefix, 'Content-Length': '0' });
      res.end();
      return;
    }
    if (path === loginPath || path === logoutPath) {
      if (req.method !== 'POST') throw methodNotAllowed();
      if (path === logoutPath) {
        this.deps.sessions.revoke(req);
        res.writeHead(204).end();
        return;
      }
      const user = await loginUser(parseJson(await readBody(req, maxLoginBytes)), this.deps);
      const session = this.deps.sessions.open(user);
      const body = JSON.stringify({ token: session.token, user: { username: user.name, groups: user.groups }, expires: new Date(session.expires).toISOString() });
      // The session token must not be kept by any cache.
      res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-store' });
      res.end(body);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed();
    const file = await staticFile(this.deps.root, path.slice(consolePrefix.length));
    if (!file) return writeError(res, notFoundPath());
    res.writeHead(200, { 'Content-Type': file.contentType, 'Content-Length': String(file.body.length), 'Cache-Control': file.cacheControl });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }
}
