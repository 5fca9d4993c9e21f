// Registry credentials from a pod's imagePullSecrets (kubernetes.io/dockerconfigjson and the older
// kubernetes.io/dockercfg), matched to an image's registry as upstream's credentialprovider keyring:
// by host (with '*' globs per label), then by the longest path prefix of the repository.
import type { Secret } from '../../api/types.js';
import type { AuthConfig } from '../runtime/types.js';
import type { ImageReference } from './reference.js';

interface DockerConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
  email?: string;
}

function entriesOf(secret: Secret): Record<string, DockerConfigEntry> {
  const decode = (key: string): unknown => {
    const raw = secret.data?.[key];
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
    } catch {
      return undefined;
    }
  };
  const json = decode('.dockerconfigjson') as { auths?: Record<string, DockerConfigEntry> } | undefined;
  if (json?.auths) return json.auths;
  return (decode('.dockercfg') as Record<string, DockerConfigEntry> | undefined) ?? {};
}

/** The registry key without scheme, as host[:port]/path; index.docker.io's aliases become docker.io. */
function normalizeKey(key: string): { host: string; path: string } {
  let k = key.replace(/^[a-z]+:\/\//, '').replace(/\/+$/, '');
  if (k === 'index.docker.io/v1' || k.startsWith('index.docker.io/v1/')) k = 'docker.io';
  const slash = k.indexOf('/');
  const host = slash < 0 ? k : k.slice(0, slash);
  return { host: host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host, path: slash < 0 ? '' : k.slice(slash + 1) };
}

function hostMatches(pattern: string, host: string): boolean {
  const [pHost, pPort] = pattern.split(':');
  const [hHost, hPort] = host.split(':');
  if ((pPort ?? '') !== (hPort ?? '')) return false;
  const p = pHost!.split('.');
  const h = hHost!.split('.');
  if (p.length !== h.length) return false;
  return p.every((label, i) => label === '*' || label === h[i]);
}

/** The credentials to try for the image, best match first; empty when none apply (pull anonymously). */
export function credentialsFor(ref: ImageReference, secrets: Secret[]): AuthConfig[] {
  const repoPath = ref.repository.slice(ref.domain.length + 1);
  const found: { score: number; auth: AuthConfig }[] = [];
  for (const secret of secrets) {
    for (const [key, entry] of Object.entries(entriesOf(secret))) {
      const { host, path } = normalizeKey(key);
      if (!hostMatches(host, ref.domain)) continue;
      if (path && repoPath !== path && !repoPath.startsWith(`${path}/`)) continue;
      let { username, password } = entry;
      if (!username && entry.auth) {
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon > 0) [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
      }
      found.push({ score: path.length, auth: { username, password, server_address: host } });
    }
  }
  return found.sort((a, b) => b.score - a.score).map((f) => f.auth);
}
