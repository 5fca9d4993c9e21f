// The kubelet's service-account token manager, as upstream's pkg/kubelet/token/token_manager.go:
// tokens asked for by projected volumes are fetched through TokenRequest, cached by what was asked
// (service account, audiences, lifetime, bound pod), and fetched again once 80 % of their life has
// passed or they are older than 24 hours (less a jitter of up to 10 s). A failed refresh keeps
// serving the cached token while it has not expired.
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import type { Clock } from '../../util/clock.js';

const maxTTLMs = 24 * 60 * 60 * 1000;
const maxJitterMs = 10_000;

/** POSTs a TokenRequest to serviceaccounts/<name>/token in namespace. */
export type TokenRequester = (namespace: string, name: string, tr: TokenRequest) => Promise<TokenRequest>;

/** What a serviceAccountToken projection reads. */
export interface ServiceAccountTokenSource {
  getServiceAccountToken(namespace: string, name: string, tr: TokenRequest): Promise<TokenRequest>;
  /** Forgets the tokens bound to a pod that is gone. */
  deleteServiceAccountToken(podUID: string): void;
}

export interface TokenManagerOptions {
  request: TokenRequester;
  clock: Clock;
  /** [0, 1): the jitter's draw (tests fix it). */
  random?: () => number;
}

export class TokenManager implements ServiceAccountTokenSource {
  private readonly cache = new Map<string, TokenRequest>();
  private readonly random: () => number;

  constructor(private readonly opts: TokenManagerOptions) {
    this.random = opts.random ?? Math.random;
  }

  async getServiceAccountToken(namespace: string, name: string, tr: TokenRequest): Promise<TokenRequest> {
    this.cleanup();
    const key = keyOf(namespace, name, tr);
    const cached = this.cache.get(key);
    if (cached && !this.requiresRefresh(cached)) return cached;
    let fresh: TokenRequest;
    try {
      fresh = await this.opts.request(namespace, name, tr);
    } catch (err) {
      if (cached && !this.expired(cached)) return cached;
      throw err;
    }
    this.cache.set(key, fresh);
    return fresh;
  }

  deleteServiceAccountToken(podUID: string): void {
    for (const [key, tr] of this.cache) if (tr.spec.boundObjectRef?.uid === podUID) this.cache.delete(key);
  }

  private expired(tr: TokenRequest): boolean {
    return this.opts.clock.now() > Date.parse(tr.status?.expirationTimestamp ?? '');
  }

  /** Upstream's requiresRefresh: older than 24 h, or within the last 20 % of its life (both less the jitter). */
  requiresRefresh(tr: TokenRequest): boolean {
    const seconds = tr.spec.expirationSeconds;
    if (seconds === undefined) return false;
    const now = this.opts.clock.now();
    const exp = Date.parse(tr.status?.expirationTimestamp ?? '');
    const iat = exp - seconds * 1000;
    const jitter = Math.floor(this.random() * (maxJitterMs / 1000)) * 1000;
    if (now > iat + maxTTLMs - jitter) return true;
    return now > exp - Math.floor((seconds * 20) / 100) * 1000 - jitter;
  }

  private cleanup(): void {
    for (const [key, tr] of this.cache) if (this.expired(tr)) this.cache.delete(key);
  }
}

/** Upstream's keyFunc: what the token was asked for. */
function keyOf(namespace: string, name: string, tr: TokenRequest): string {
  const ref = tr.spec.boundObjectRef;
  return JSON.stringify([name, namespace, tr.spec.audiences ?? [], tr.spec.expirationSeconds ?? null, ref ? [ref.apiVersion, ref.kind, ref.name, ref.uid] : null]);
}
