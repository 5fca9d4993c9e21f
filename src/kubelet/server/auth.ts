// Authorization of the kubelet's HTTPS API as upstream's webhook mode (pkg/kubelet/server/auth.go
// with the apiserver's delegating authorizer): each request is mapped to attributes on the `nodes`
// resource — the subresource by path, the verb by method — and the API server answers through a
// SubjectAccessReview created with the kubelet's own credentials. Answers are cached as upstream's
// defaults: allowed for 5 minutes, denied for 30 seconds.
import type { SubjectAccessReview } from 'kubernetes-types/authorization/v1.js';
import type { UserInfo } from '../../apiserver/authn/user.js';
import type { Clock } from '../../util/clock.js';

/** The attributes of one kubelet request, as upstream's GetRequestAttributes. */
export interface KubeletRequestAttributes {
  user: UserInfo;
  verb: string;
  /** proxy, stats, metrics, log, spec, pods, healthz, configz or checkpoint. */
  subresource: string;
  /** The node's name. */
  name: string;
}

/** Creates a SubjectAccessReview and returns the server's answer (authorization.k8s.io/v1 subjectaccessreviews). */
export type CreateSubjectAccessReview = (review: SubjectAccessReview) => Promise<SubjectAccessReview>;

export const allowedTtlMs = 5 * 60_000;
export const deniedTtlMs = 30_000;

/** The verb the kubelet's authorizer sees: the HTTP method's API verb (HEAD and others read as get). */
export function verbOf(method: string | undefined): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

/** The nodes subresource of a kubelet path (its first segment); anything else is "proxy". */
export function subresourceOf(first: string | undefined): string {
  switch (first) {
    case 'stats':
    case 'metrics':
    case 'spec':
    case 'pods':
    case 'healthz':
    case 'configz':
    case 'checkpoint':
      return first;
    case 'logs':
      return 'log';
    default:
      return 'proxy';
  }
}

/** Upstream's refusal text, e.g. `Forbidden (user=bob, verb=get, resource=nodes, subresource=stats)`. */
export function forbiddenMessage(a: KubeletRequestAttributes): string {
  return `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=nodes, subresource=${a.subresource})`;
}

/**
 * Asks the API server, caching each answer by user and attributes. A fine-grained subresource
 * (healthz, pods, configz, ...) also passes with `proxy`, which covers every path, as upstream's
 * KubeletFineGrainedAuthz (on by default in 1.33) asks for both.
 */
export class DelegatingKubeletAuthorizer {
  private readonly cache = new Map<string, { allowed: boolean; expires: number }>();

  constructor(
    private readonly createReview: CreateSubjectAccessReview,
    private readonly clock: Clock,
  ) {}

  /** Whether the user may make the request; a failing review is an error (the request gets a 500), never a cached answer. */
  async authorize(a: KubeletRequestAttributes): Promise<boolean> {
    if (await this.allowed(a)) return true;
    return a.subresource !== 'proxy' && ['healthz', 'pods', 'configz'].includes(a.subresource) && this.allowed({ ...a, subresource: 'proxy' });
  }

  private async allowed(a: KubeletRequestAttributes): Promise<boolean> {
    const { user } = a;
    const key = JSON.stringify([user.name, user.uid ?? '', user.groups, user.extra ?? {}, a.verb, a.subresource, a.name]);
    const now = this.clock.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now) return cached.allowed;
    const answer = await this.createReview({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.name,
        ...(user.uid && { uid: user.uid }),
        groups: user.groups,
        ...(user.extra && { extra: user.extra }),
        resourceAttributes: { verb: a.verb, version: 'v1', resource: 'nodes', subresource: a.subresource, name: a.name },
      },
    });
    const allowed = answer.status?.allowed === true;
    // Drop expired answers now and then so the cache stays as large as its live entries.
    if (this.cache.size > 1000) for (const [k, v] of this.cache) if (v.expires <= now) this.cache.delete(k);
    this.cache.set(key, { allowed, expires: now + (allowed ? allowedTtlMs : deniedTtlMs) });
    return allowed;
  }
}
