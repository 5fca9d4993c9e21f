// Service-account JWTs as upstream's pkg/serviceaccount (jwt.go, claims.go, legacy.go): bound tokens
// that TokenRequest issues, legacy Secret tokens, their RS256 signing with the key made beside the
// PKI, and the OIDC discovery documents (openidmetadata.go) outside verifiers read.
import { createHash, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, decodeJwt, jwtVerify, type JWTPayload } from 'jose';

/** --service-account-issuer's default, as kubeadm sets it. */
export const defaultServiceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';
/** The issuer of legacy (Secret-stored) tokens. */
export const legacyIssuer = 'kubernetes/serviceaccount';
/** The lifetime the admission plugin asks for: its tokens get the one-year extension below. */
export const warnOnlyBoundTokenExpirationSeconds = 60 * 60 + 7;
/** How long a 3607 s pod-bound token really lives (upstream's ExpirationExtensionSeconds). */
export const expirationExtensionSeconds = 24 * 365 * 60 * 60;
/** TokenRequest's default expirationSeconds and its bounds. */
export const defaultTokenExpirationSeconds = 3600;
export const minTokenAgeSeconds = 600;
export const maxTokenAgeSeconds = 2 ** 32;
/** go-jose's default leeway on exp, nbf and iat. */
export const leewaySeconds = 60;

export const serviceAccountUsernamePrefix = 'system:serviceaccount:';
export const allServiceAccountsGroup = 'system:serviceaccounts';

/** apiserverserviceaccount.MakeUsername. */
export const serviceAccountUsername = (namespace: string, name: string): string => `${serviceAccountUsernamePrefix}${namespace}:${name}`;
/** apiserverserviceaccount.MakeGroupNames. */
export const serviceAccountGroups = (namespace: string): string[] => [allServiceAccountsGroup, `${allServiceAccountsGroup}:${namespace}`];

export interface ObjectRef {
  name: string;
  uid: string;
}

/** The `kubernetes.io` private claim of a bound token. */
export interface KubernetesClaims {
  namespace: string;
  node?: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  serviceaccount: ObjectRef;
  warnafter?: number;
}

export interface BoundClaimsRequest {
  issuer: string;
  namespace: string;
  serviceAccount: ObjectRef;
  audiences: readonly string[];
  /** ms since the epoch. */
  now: number;
  expirationSeconds: number;
  /** Non-zero for an extended token: when its holder should have rotated it. */
  warnAfterSeconds?: number;
  pod?: ObjectRef;
  secret?: ObjectRef;
  /** The pod's node, or the node a token is bound to. */
  node?: ObjectRef;
  jti?: string;
}

/** claims.go's Claims: keys in the order go-jose serializes them (sorted, as a Go map). */
export function boundClaims(r: BoundClaimsRequest): JWTPayload {
  const seconds = Math.floor(r.now / 1000);
  const k8s: KubernetesClaims = {
    namespace: r.namespace,
    ...(r.node ? { node: r.node } : {}),
    ...(r.pod ? { pod: r.pod } : r.secret ? { secret: r.secret } : {}),
    serviceaccount: r.serviceAccount,
    ...(r.warnAfterSeconds ? { warnafter: seconds + r.warnAfterSeconds } : {}),
  };
  return {
    aud: [...r.audiences],
    exp: seconds + r.expirationSeconds,
    iat: seconds,
    iss: r.issuer,
    jti: r.jti ?? randomUUID(),
    'kubernetes.io': k8s,
    nbf: seconds,
    sub: serviceAccountUsername(r.namespace, r.serviceAccount.name),
  };
}

/** legacy.go's LegacyClaims: what a kubernetes.io/service-account-token Secret's token says. */
export function legacyClaims(namespace: string, serviceAccount: ObjectRef, secretName: string): JWTPayload {
  return {
    iss: legacyIssuer,
    [legacyClaimKeys.namespace]: namespace,
    [legacyClaimKeys.secretName]: secretName,
    [legacyClaimKeys.serviceAccountName]: serviceAccount.name,
    [legacyClaimKeys.serviceAccountUID]: serviceAccount.uid,
    sub: serviceAccountUsername(namespace, serviceAccount.name),
  };
}

export const legacyClaimKeys = {
  namespace: 'kubernetes.io/serviceaccount/namespace',
  secretName: 'kubernetes.io/serviceaccount/secret.name',
  serviceAccountName: 'kubernetes.io/serviceaccount/service-account.name',
  serviceAccountUID: 'kubernetes.io/serviceaccount/service-account.uid',
} as const;

/** keyIDFromPublicKey: the unpadded base64url SHA-256 of the public key's DER (PKIX). */
export function keyID(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('base64url');
}

/** Signs and checks tokens with one RSA key. */
export class TokenSigner {
  readonly publicKey: KeyObject;
  readonly kid: string;

  constructor(private readonly privateKey: KeyObject) {
    this.publicKey = createPublicKey(privateKey);
    this.kid = keyID(privateKey);
  }

  sign(claims: JWTPayload): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.kid }).sign(this.privateKey);
  }

  /** The verified claims; throws for a bad signature, or exp/nbf/iat outside the leeway at now (ms). */
  async verify(token: string, now: number): Promise<JWTPayload> {
    const { payload } = await jwtVerify(token, this.publicKey, { algorithms: ['RS256'], currentDate: new Date(now), clockTolerance: leewaySeconds });
    return payload;
  }

  /** /openid/v1/jwks's single key. */
  jwk(): Record<string, unknown> {
    const { n, e } = this.publicKey.export({ format: 'jwk' });
    return { use: 'sig', kty: 'RSA', kid: this.kid, alg: 'RS256', n, e };
  }
}

/** The issuer a token claims, without checking anything: undefined when it is no JWT. */
export function unverifiedIssuer(token: string): string | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

export const openIDConfigurationPath = '/.well-known/openid-configuration';
export const jwksPath = '/openid/v1/jwks';

/**
 * openidmetadata.go's discovery document; undefined when the issuer is no https URL (upstream serves
 * none then). The keys are at the server's external address, as kube-apiserver's default --service-account-jwks-uri.
 */
export function openIDConfiguration(issuer: string, externalAddress: string): Record<string, unknown> | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:') return undefined;
  return {
    issuer,
    jwks_uri: `https://${externalAddress}${jwksPath}`,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
  };
}
