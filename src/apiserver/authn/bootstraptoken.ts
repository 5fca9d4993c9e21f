// Bootstrap tokens as upstream (kubeadm tokens, plugin/pkg/auth/authenticator/token/bootstrap):
// `<id>.<secret>` stored as a Secret bootstrap-token-<id> in kube-system; the token authenticates
// as system:bootstrap:<id> in system:bootstrappers, and signs the cluster-info ConfigMap with a
// detached JWS (HS256 keyed by the whole token) so a joining node can trust the CA it reads there.
import type { IncomingMessage } from 'node:http';
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { authenticationFailed, type Authenticator } from './authenticator.js';
import { bearerToken } from './tokenfile.js';
import type { UserInfo } from './user.js';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
/** The extra group kubeadm gives its default node-joining token. */
export const DEFAULT_NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
export const CLUSTER_INFO_CONFIGMAP = 'cluster-info';
export const KUBE_PUBLIC_NAMESPACE = 'kube-public';
export const JWS_SIGNATURE_PREFIX = 'jws-kubeconfig-';

const tokenPattern = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const extraGroupPattern = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const tokenChars = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface BootstrapToken {
  id: string;
  secret: string;
}

/** Splits `<6 chars>.<16 chars>`; undefined for anything else. */
export function parseBootstrapToken(token: string): BootstrapToken | undefined {
  const m = tokenPattern.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

export const formatBootstrapToken = (t: BootstrapToken): string => `${t.id}.${t.secret}`;

export function generateBootstrapToken(): BootstrapToken {
  const pick = (n: number) => Array.from({ length: n }, () => tokenChars[randomInt(tokenChars.length)]).join('');
  return { id: pick(6), secret: pick(16) };
}

export interface BootstrapTokenSecretOptions {
  description?: string;
  /** ms since the epoch; none means the token never expires. */
  expiresAt?: number;
  usages?: ('authentication' | 'signing')[];
  extraGroups?: string[];
}

/** The Secret that stores a token, with its data keys as kubeadm writes them. */
export function bootstrapTokenSecret(token: BootstrapToken, opts: BootstrapTokenSecretOptions = {}): Secret {
  const data: Record<string, string> = { 'token-id': token.id, 'token-secret': token.secret };
  if (opts.description) data.description = opts.description;
  if (opts.expiresAt !== undefined) data.expiration = new Date(opts.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (const u of opts.usages ?? ['authentication', 'signing']) data[`usage-bootstrap-${u}`] = 'true';
  if (opts.extraGroups?.length) data['auth-extra-groups'] = opts.extraGroups.join(',');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${token.id}`, namespace: 'kube-system' },
    type: BOOTSTRAP_TOKEN_SECRET_TYPE,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

const secretString = (s: Secret, key: string): string => (s.data?.[key] === undefined ? '' : Buffer.from(s.data[key], 'base64').toString('utf8'));

/** Why a stored token cannot authenticate `token`, or undefined when it can (upstream's checks, in its order). */
export function bootstrapTokenRejection(secret: Secret | undefined, token: BootstrapToken, now: number): string | undefined {
  if (!secret) return 'no such token';
  if (secret.metadata?.deletionTimestamp) return 'token is being deleted';
  if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || !secret.data) return `secret has type ${JSON.stringify(secret.type ?? '')}`;
  const stored = Buffer.from(secretString(secret, 'token-secret'));
  const given = Buffer.from(token.secret);
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return 'token secret does not match';
  if (secretString(secret, 'token-id') !== token.id) return 'token id does not match';
  const expiration = secretString(secret, 'expiration');
  if (expiration && !(Date.parse(expiration) > now)) return 'token has expired';
  if (secretString(secret, 'usage-bootstrap-authentication') !== 'true') return 'token is not for authentication';
  for (const g of extraGroups(secret)) if (!extraGroupPattern.test(g)) return `invalid extra group ${JSON.stringify(g)}`;
  return undefined;
}

function extraGroups(secret: Secret): string[] {
  return secretString(secret, 'auth-extra-groups')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
}

export interface BootstrapTokenAuthenticatorOptions {
  /** The Secret kube-system/<name>, undefined when there is none. */
  getSecret(name: string): Promise<Secret | undefined>;
  clock: Clock;
}

/** Authenticates `Authorization: Bearer <id>.<secret>`; other bearer tokens are left to other authenticators. */
export class BootstrapTokenAuthenticator implements Authenticator {
  constructor(private readonly opts: BootstrapTokenAuthenticatorOptions) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const raw = bearerToken(req);
    const token = raw === undefined ? undefined : parseBootstrapToken(raw);
    if (!token) return undefined;
    const secret = await this.opts.getSecret(`${BOOTSTRAP_TOKEN_SECRET_PREFIX}${token.id}`);
    const why = bootstrapTokenRejection(secret, token, this.opts.clock.now());
    if (why) throw authenticationFailed(`bootstrap token ${token.id}: ${why}`);
    return { name: `${BOOTSTRAP_USER_PREFIX}${token.id}`, groups: [BOOTSTRAPPERS_GROUP, ...extraGroups(secret!)] };
  }
}

// ---- detached JWS over the cluster-info kubeconfig --------------------------------------------

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** `<header>..<signature>`: a compact HS256 JWS of content with the payload left out, kid = token id. */
export function computeDetachedSignature(content: string, token: BootstrapToken): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', kid: token.id }));
  const signature = createHmac('sha256', formatBootstrapToken(token)).update(`${header}.${b64url(content)}`).digest();
  return `${header}..${b64url(signature)}`;
}

/** Whether detached is the token's signature of content (recomputed and compared in constant time). */
export function detachedSignatureIsValid(detached: string, content: string, token: BootstrapToken): boolean {
  const expected = Buffer.from(computeDetachedSignature(content, token));
  const given = Buffer.from(detached);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
