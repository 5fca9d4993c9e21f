// The legacy service-account token controller, as upstream's pkg/controller/serviceaccount/tokens_controller.go:
// a Secret of type kubernetes.io/service-account-token that names a ServiceAccount gets a legacy JWT,
// the CA and the namespace in its data and the account's UID annotation; a Secret whose account is
// missing (or has another UID) is deleted, and deleting an account deletes its token Secrets.
import type { Secret, ServiceAccount } from '../../api/types.js';
import { hasStatusCode, unlessNotFound } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import { namespaceIndex, unwrapDeleted, type DeletedFinalStateUnknown, type Indexer } from '../../client/indexer.js';
import { legacyClaims, type TokenSigner } from '../../apiserver/authn/satoken.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';

export const serviceAccountTokenSecretType = 'kubernetes.io/service-account-token';
export const serviceAccountNameKey = 'kubernetes.io/service-account.name';
export const serviceAccountUIDKey = 'kubernetes.io/service-account.uid';

const secretsResource = findResource('', 'v1', 'secrets')!;
const serviceAccountsResource = findResource('', 'v1', 'serviceaccounts')!;

export interface TokensControllerOptions extends Omit<ControllerOptions, 'recorder'> {
  /** Signs the tokens: the API server's service-account key (--service-account-private-key-file). */
  signer: TokenSigner;
  /** --root-ca-file's PEM, put in each token Secret's ca.crt; none leaves ca.crt alone. */
  rootCA?: string;
}

/** The deleted ServiceAccount a sync looks for: namespace, name and the UID it had. */
interface DeletedAccount {
  namespace: string;
  name: string;
  uid: string;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** serviceaccount.IsServiceAccountToken: the Secret is a token of this account (a UID annotation must agree). */
export function isServiceAccountToken(secret: Secret, sa: DeletedAccount): boolean {
  if (secret.type !== serviceAccountTokenSecretType || secret.metadata?.namespace !== sa.namespace) return false;
  const annotations = secret.metadata?.annotations ?? {};
  if (annotations[serviceAccountNameKey] !== sa.name) return false;
  const uid = annotations[serviceAccountUIDKey];
  return !uid || uid === sa.uid;
}

export class TokensController {
  private readonly secrets: Indexer<Secret>;
  private readonly serviceAccounts: Indexer<ServiceAccount>;
  private readonly secretQueue: QueueController;
  private readonly accountQueue: QueueController;
  /** The deleted accounts waiting for their tokens to go, by queue key. */
  private readonly deleted = new Map<string, DeletedAccount>();

  constructor(private readonly opts: TokensControllerOptions) {
    const secretInformer = opts.informers.informerFor<Secret>(secretsResource);
    const saInformer = opts.informers.informerFor<ServiceAccount>(serviceAccountsResource);
    this.secrets = secretInformer.indexer;
    this.serviceAccounts = saInformer.indexer;
    const base = { clock: opts.clock, logger: opts.logger, sources: [secretInformer, saInformer], workers: opts.workers };
    this.secretQueue = new QueueController({ ...base, name: 'serviceaccount-token-secrets', sync: (key) => this.syncSecret(key) });
    this.accountQueue = new QueueController({ ...base, name: 'serviceaccount-token-accounts', sync: (key) => this.syncDeletedAccount(key) });
    const onSecret = (s: Secret) => s.type === serviceAccountTokenSecretType && this.secretQueue.enqueue(`${s.metadata?.namespace}/${s.metadata?.name}`);
    secretInformer.addEventHandler({ onAdd: onSecret, onUpdate: (_old, cur) => onSecret(cur) });
    saInformer.addEventHandler({
      onDelete: (obj: ServiceAccount | DeletedFinalStateUnknown<ServiceAccount>) => {
        const sa = unwrapDeleted(obj);
        const account = { namespace: sa.metadata?.namespace ?? '', name: sa.metadata?.name ?? '', uid: sa.metadata?.uid ?? '' };
        const key = `${account.namespace}/${account.name}/${account.uid}`;
        this.deleted.set(key, account);
        this.accountQueue.enqueue(key);
      },
    });
  }

  start(): void {
    this.secretQueue.start();
    this.accountQueue.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.secretQueue.stop(), this.accountQueue.stop()]);
  }

  /** syncServiceAccount for a deleted account: its token Secrets go too, unless an account with its UID is back. */
  async syncDeletedAccount(key: string): Promise<void> {
    const account = this.deleted.get(key);
    if (!account) return;
    const current = this.serviceAccounts.getByKey(`${account.namespace}/${account.name}`);
    if (current?.metadata?.uid !== account.uid) {
      for (const secret of this.secrets.byIndex(namespaceIndex, account.namespace)) {
        if (isServiceAccountToken(secret, account)) await this.deleteToken(secret);
      }
    }
    this.deleted.delete(key);
  }

  async syncSecret(key: string): Promise<void> {
    const secret = this.secrets.getByKey(key);
    if (!secret || secret.type !== serviceAccountTokenSecretType || secret.metadata?.deletionTimestamp) return;
    const annotations = secret.metadata?.annotations ?? {};
    const sa = await this.serviceAccount(secret.metadata?.namespace ?? '', annotations[serviceAccountNameKey] ?? '', annotations[serviceAccountUIDKey] ?? '');
    if (!sa) {
      await this.deleteToken(secret);
      return;
    }
    await this.generateTokenIfNeeded(sa, secret);
  }

  /** getServiceAccount with fetchOnCacheMiss: the cache, then a live read; undefined when missing or of another UID. */
  private async serviceAccount(namespace: string, name: string, uid: string): Promise<ServiceAccount | undefined> {
    if (!name) return undefined;
    const matches = (sa: ServiceAccount | undefined) => (sa && (!uid || sa.metadata?.uid === uid) ? sa : undefined);
    const cached = matches(this.serviceAccounts.getByKey(`${namespace}/${name}`));
    if (cached) return cached;
    return matches(await unlessNotFound(this.opts.client.resource<ServiceAccount>(serviceAccountsResource).namespace(namespace).get(name)));
  }

  /** What the Secret lacks: a CA that differs from the root CA, a token, a namespace. */
  private needs(secret: Secret): { ca: boolean; token: boolean; namespace: boolean } {
    const data = secret.data ?? {};
    return {
      ca: this.opts.rootCA !== undefined && this.opts.rootCA !== '' && data['ca.crt'] !== b64(this.opts.rootCA),
      token: !data.token,
      namespace: !data.namespace,
    };
  }

  private async generateTokenIfNeeded(sa: ServiceAccount, cached: Secret): Promise<void> {
    const cachedNeeds = this.needs(cached);
    if (!cachedNeeds.ca && !cachedNeeds.token && !cachedNeeds.namespace) return;
    const secrets = this.opts.client.resource<Secret>(secretsResource).namespace(cached.metadata?.namespace ?? '');
    // The cache's copy stays untouched: the token goes on a fresh read, only when the cache is current.
    const live = await unlessNotFound(secrets.get(cached.metadata?.name ?? ''));
    if (!live || live.metadata?.resourceVersion !== cached.metadata?.resourceVersion) return;
    const needs = this.needs(live);
    const data = { ...live.data };
    if (needs.ca) data['ca.crt'] = b64(this.opts.rootCA!);
    if (needs.namespace) data.namespace = b64(live.metadata?.namespace ?? '');
    if (needs.token) {
      const ref = { name: sa.metadata?.name ?? '', uid: sa.metadata?.uid ?? '' };
      data.token = b64(await this.opts.signer.sign(legacyClaims(live.metadata?.namespace ?? '', ref, live.metadata?.name ?? '')));
    }
    const annotations = { ...live.metadata?.annotations, [serviceAccountNameKey]: sa.metadata?.name ?? '', [serviceAccountUIDKey]: sa.metadata?.uid ?? '' };
    try {
      await secrets.update({ ...live, metadata: { ...live.metadata, annotations }, data });
    } catch (err) {
      // Changed meanwhile (its update event brings it back) or gone: nothing to fill.
      if (!hasStatusCode(err, 409, 404)) throw err;
    }
  }

  /** deleteToken: only the Secret this sync saw (its UID as the precondition). */
  private async deleteToken(secret: Secret): Promise<void> {
    try {
      await this.opts.client
        .resource<Secret>(secretsResource)
        .namespace(secret.metadata?.namespace ?? '')
        .delete(secret.metadata?.name ?? '', { preconditions: { uid: secret.metadata?.uid } });
    } catch (err) {
      if (!hasStatusCode(err, 409, 404)) throw err;
    }
  }
}
