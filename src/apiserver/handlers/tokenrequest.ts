// serviceaccounts/token, as upstream's TokenREST (pkg/registry/core/serviceaccount/storage/token.go):
// a TokenRequest for an existing service account, optionally bound to a pod, secret or node of the
// same namespace (by name and, when given, UID), answered with a signed JWT and its expiration.
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { badRequest, conflict, invalid } from '../../api/errors.js';
import { invalid as invalidField, Path, type FieldError } from '../../api/field.js';
import { rfc3339 } from '../../api/time.js';
import { addResponseWarning, writeObject } from '../http/respond.js';
import {
  boundClaims,
  defaultTokenExpirationSeconds,
  maxTokenAgeSeconds,
  minTokenAgeSeconds,
  warnOnlyBoundTokenExpirationSeconds,
  type ObjectRef,
  type TokenSigner,
} from '../authn/satoken.js';
import type { ResourceRequest } from './context.js';

/** What issuing needs: kube-apiserver's --service-account-* settings. */
export interface TokenIssuer {
  signer: TokenSigner;
  /** --service-account-issuer (the first one signs). */
  issuer: string;
  /** --api-audiences: the default audiences, and the ones the extension applies to. */
  apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; 0: no cap. */
  maxExpirationSeconds: number;
  /** --service-account-extend-token-expiration (default true). */
  extendExpiration: boolean;
  /** The lifetime an extended token really gets (upstream's maxExtendedExpirationSeconds: one year). */
  maxExtendedExpirationSeconds: number;
}

const group = 'authentication.k8s.io';
const spec = Path.root('spec');

/** authentication validation's ValidateTokenRequest. */
function validateTokenRequest(expirationSeconds: number): FieldError[] {
  if (expirationSeconds < minTokenAgeSeconds) return [invalidField(spec.child('expirationSeconds'), expirationSeconds, 'may not specify a duration less than 10 minutes')];
  if (expirationSeconds > maxTokenAgeSeconds) return [invalidField(spec.child('expirationSeconds'), expirationSeconds, 'may not specify a duration larger than 2^32 seconds')];
  return [];
}

export async function createToken(r: ResourceRequest, body: TokenRequest, issuer: TokenIssuer): Promise<void> {
  const { namespace, name } = r.info;
  const meta = body.metadata ?? {};
  if (meta.name && meta.name !== name) {
    throw invalid('TokenRequest', group, name, [invalidField(Path.root('metadata').child('name'), meta.name, 'must match the service account name if specified')]);
  }
  if (meta.namespace && meta.namespace !== namespace) {
    throw invalid('TokenRequest', group, name, [invalidField(Path.root('metadata').child('namespace'), meta.namespace, 'must match the service account namespace if specified')]);
  }
  const sa = await r.registries.read('serviceaccounts', namespace, name);
  const saUID = sa.metadata.uid ?? '';
  if (meta.uid && meta.uid !== saUID) {
    throw conflict({ group, resource: 'TokenRequest' }, name, `the UID in the token request (${meta.uid}) does not match the UID of the service account (${saUID})`);
  }
  const audiences = body.spec?.audiences?.length ? body.spec.audiences : [...issuer.apiAudiences];
  let expirationSeconds = body.spec?.expirationSeconds ?? defaultTokenExpirationSeconds;
  const now = r.clock.now();
  const errs = validateTokenRequest(expirationSeconds);
  if (errs.length) throw invalid('TokenRequest', group, '', errs);

  const bound = await boundObjects(r, body, name);
  if (issuer.maxExpirationSeconds > 0 && expirationSeconds > issuer.maxExpirationSeconds) {
    addResponseWarning(r.res, `requested expiration of ${expirationSeconds} seconds shortened to ${issuer.maxExpirationSeconds} seconds`);
    expirationSeconds = issuer.maxExpirationSeconds;
  }
  // The safe transition of projected tokens: a pod-bound 3607 s token for the API server's own
  // audiences lives a year, and only warns after its requested life.
  let exp = expirationSeconds;
  let warnAfterSeconds = 0;
  if (issuer.extendExpiration && bound.pod && expirationSeconds === warnOnlyBoundTokenExpirationSeconds && audiences.every((a) => issuer.apiAudiences.includes(a))) {
    warnAfterSeconds = expirationSeconds;
    exp = issuer.maxExtendedExpirationSeconds;
  }
  const token = await issuer.signer.sign(
    boundClaims({ issuer: issuer.issuer, namespace, serviceAccount: { name, uid: saUID }, audiences, now, expirationSeconds: exp, warnAfterSeconds, ...bound }),
  );
  writeObject(r.res, 201, {
    kind: 'TokenRequest',
    apiVersion: `${group}/v1`,
    metadata: { ...meta, name, namespace, creationTimestamp: rfc3339(now) },
    spec: { ...body.spec, audiences, expirationSeconds },
    // The expiration the client sees is the requested one: the kubelet rotates on it.
    status: { token, expirationTimestamp: rfc3339(now + expirationSeconds * 1000) },
  });
}

/** The object the token is bound to, checked as upstream: it exists, its UID matches, a pod runs as this service account. */
async function boundObjects(r: ResourceRequest, body: TokenRequest, saName: string): Promise<{ pod?: ObjectRef; secret?: ObjectRef; node?: ObjectRef }> {
  const ref = body.spec?.boundObjectRef;
  if (!ref) return {};
  const refName = ref.name ?? '';
  const apiVersion = ref.apiVersion ?? '';
  const refGroup = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const checkUID = (uid: string) => {
    if (ref.uid && ref.uid !== uid) {
      throw conflict({ group: refGroup, resource: ref.kind ?? '' }, refName, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    return { name: refName, uid };
  };
  if (refGroup === '' && ref.kind === 'Pod') {
    const pod = await r.registries.read('pods', r.info.namespace, refName);
    const podSA = pod.spec?.serviceAccountName ?? '';
    if (podSA !== saName) throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(saName)} to pod running with serviceaccount ${JSON.stringify(podSA)}`);
    const bound = { pod: checkUID(pod.metadata.uid ?? '') };
    const nodeName = pod.spec?.nodeName;
    // The node is informational: a node that is gone leaves it out.
    const node = nodeName ? await r.registries.lookup('nodes', '', nodeName) : undefined;
    return node ? { ...bound, node: { name: nodeName!, uid: node.metadata.uid ?? '' } } : bound;
  }
  if (refGroup === '' && ref.kind === 'Secret') {
    const secret = await r.registries.read('secrets', r.info.namespace, refName);
    return { secret: checkUID(secret.metadata.uid ?? '') };
  }
  if (refGroup === '' && ref.kind === 'Node') {
    const node = await r.registries.read('nodes', '', refName);
    return { node: checkUID(node.metadata.uid ?? '') };
  }
  const gvk = `${refGroup ? `${refGroup}/` : '/'}${apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion}, Kind=${ref.kind ?? ''}`;
  throw badRequest(`cannot bind token to object of type ${gvk}`);
}
