// The service-account token authenticator, as upstream's pkg/serviceaccount jwt.go with the bound
// (claims.go) and legacy (legacy.go) validators: the signature, the issuer, the audiences and the
// times first, then the objects the token names must still exist with the same UIDs. A bound
// token dies with its pod (a minute after the pod's deletionTimestamp, as upstream).
import type { IncomingMessage } from 'node:http';
import type { ResourceTypes } from '../../api/kinds.js';
import type { Clock } from '../../util/clock.js';
import { authenticationFailed, type Authenticator } from './authenticator.js';
import {
  legacyClaimKeys,
  legacyIssuer,
  serviceAccountGroups,
  serviceAccountUsername,
  unverifiedIssuer,
  type KubernetesClaims,
  type ObjectRef,
  type TokenSigner,
} from './satoken.js';
import { bearerToken } from './tokenfile.js';
import type { UserInfo } from './user.js';

export const podNameKey = 'authentication.kubernetes.io/pod-name';
export const podUIDKey = 'authentication.kubernetes.io/pod-uid';
export const nodeNameKey = 'authentication.kubernetes.io/node-name';
export const nodeUIDKey = 'authentication.kubernetes.io/node-uid';
export const credentialIDKey = 'authentication.kubernetes.io/credential-id';

/** How long after its deletionTimestamp an object still backs its tokens (upstream's 60 s). */
const deletedGraceMs = 60_000;

type Bindable = 'serviceaccounts' | 'pods' | 'secrets' | 'nodes';

/** The objects tokens name, as the registries' caches (with a live read on a miss) hold them. */
export type ServiceAccountTokenGetter = <R extends Bindable>(resource: R, namespace: string, name: string) => Promise<ResourceTypes[R] | undefined>;

export interface ServiceAccountAuthenticatorOptions {
  signer: TokenSigner;
  /** --service-account-issuer: the issuers whose bound tokens are accepted. */
  issuers: readonly string[];
  /** --api-audiences (default: the issuers): a token must name one of them. */
  apiAudiences: readonly string[];
  get: ServiceAccountTokenGetter;
  clock: Clock;
}

interface ValidatedToken {
  namespace: string;
  name: string;
  uid: string;
  pod?: ObjectRef;
  node?: ObjectRef;
  credentialID?: string;
}

export class ServiceAccountAuthenticator implements Authenticator {
  constructor(private readonly opts: ServiceAccountAuthenticatorOptions) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const token = bearerToken(req);
    if (token === undefined) return undefined;
    return this.authenticateToken(token);
  }

  /** The user a token proves; undefined when it is not a token of these issuers (another authenticator's). */
  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const iss = unverifiedIssuer(token);
    const legacy = iss === legacyIssuer;
    if (iss === undefined || (!legacy && !this.opts.issuers.includes(iss))) return undefined;
    let payload;
    try {
      payload = await this.opts.signer.verify(token, this.opts.clock.now());
    } catch (err) {
      throw authenticationFailed(`service account token: ${(err as Error).message}`);
    }
    // Legacy tokens name no audience: they get the API server's, as upstream's implicit audiences.
    const auds = payload.aud === undefined ? [] : typeof payload.aud === 'string' ? [payload.aud] : payload.aud;
    if (auds.length > 0 && !auds.some((a) => this.opts.apiAudiences.includes(a))) {
      throw authenticationFailed(`token audiences ${JSON.stringify(auds)} is invalid for the target audiences ${JSON.stringify(this.opts.apiAudiences)}`);
    }
    return userOf(legacy ? await this.validateLegacy(payload as Record<string, unknown>, token) : await this.validateBound(payload['kubernetes.io'] as KubernetesClaims | undefined, payload.jti));
  }

  /** claims.go's Validate: the service account, and the pod, secret or node the token is bound to. */
  private async validateBound(k: KubernetesClaims | undefined, jti: string | undefined): Promise<ValidatedToken> {
    if (!k || typeof k !== 'object' || typeof k.namespace !== 'string' || !k.serviceaccount) throw authenticationFailed('service account token claims could not be retrieved');
    const ns = k.namespace;
    await this.check('serviceaccounts', ns, k.serviceaccount, `service account ${ns}/${k.serviceaccount.name}`);
    if (k.pod) await this.check('pods', ns, k.pod, `pod ${ns}/${k.pod.name}`);
    else if (k.secret) await this.check('secrets', ns, k.secret, `secret ${ns}/${k.secret.name}`);
    // A pod-bound token's node is informational; a node-bound token lives as long as its node.
    else if (k.node) await this.check('nodes', '', k.node, `node ${k.node.name}`);
    return { namespace: ns, name: k.serviceaccount.name, uid: k.serviceaccount.uid, pod: k.pod, node: k.node, credentialID: jti ? `JTI=${jti}` : undefined };
  }

  /** legacy.go's Validate: the Secret still holds this very token, and its service account is the same one. */
  private async validateLegacy(claims: Record<string, unknown>, token: string): Promise<ValidatedToken> {
    const str = (key: string) => (typeof claims[key] === 'string' ? (claims[key] as string) : '');
    const ns = str(legacyClaimKeys.namespace);
    const secretName = str(legacyClaimKeys.secretName);
    const sa = { name: str(legacyClaimKeys.serviceAccountName), uid: str(legacyClaimKeys.serviceAccountUID) };
    if (!ns || !secretName || !sa.name || !sa.uid) throw authenticationFailed('legacy service account token is missing claims');
    const secret = await this.opts.get('secrets', ns, secretName);
    if (!secret || this.deleted(secret.metadata?.deletionTimestamp)) throw authenticationFailed('token has been invalidated');
    const stored = secret.data?.token === undefined ? '' : Buffer.from(secret.data.token, 'base64').toString('utf8');
    if (stored !== token) throw authenticationFailed("token does not match server's copy");
    await this.check('serviceaccounts', ns, sa, `service account ${ns}/${sa.name}`);
    return { namespace: ns, ...sa };
  }

  /** The object exists, is not deleted past the grace, and has the claimed UID. */
  private async check(resource: Bindable, namespace: string, ref: ObjectRef, what: string): Promise<void> {
    const obj = typeof ref.name === 'string' ? await this.opts.get(resource, namespace, ref.name) : undefined;
    if (!obj || this.deleted(obj.metadata?.deletionTimestamp)) throw authenticationFailed(`${what} has been deleted`);
    const uid = obj.metadata?.uid ?? '';
    if (uid !== ref.uid) throw authenticationFailed(`${what}: UID (${uid}) does not match claim (${String(ref.uid)})`);
  }

  private deleted(deletionTimestamp: string | undefined): boolean {
    return deletionTimestamp !== undefined && Date.parse(deletionTimestamp) < this.opts.clock.now() - deletedGraceMs;
  }
}

/** ServiceAccountInfo.UserInfo. */
function userOf(t: ValidatedToken): UserInfo {
  const extra: Record<string, string[]> = {};
  if (t.pod?.name && t.pod.uid) {
    extra[podNameKey] = [t.pod.name];
    extra[podUIDKey] = [t.pod.uid];
  }
  if (t.credentialID) extra[credentialIDKey] = [t.credentialID];
  if (t.node?.name) {
    extra[nodeNameKey] = [t.node.name];
    if (t.node.uid) extra[nodeUIDKey] = [t.node.uid];
  }
  return {
    name: serviceAccountUsername(t.namespace, t.name),
    uid: t.uid,
    groups: serviceAccountGroups(t.namespace),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}
