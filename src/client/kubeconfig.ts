// Kubeconfig loading (the subset kite writes and kubectl users have): the current (or a named)
// context → its cluster's server and CA, its user's client certificate/key or token.
// File references resolve against the kubeconfig's own directory, as clientcmd does.
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { RestConfig } from './rest.js';

interface Kubeconfig {
  'current-context'?: string;
  clusters?: { name: string; cluster?: ClusterEntry }[];
  users?: { name: string; user?: UserEntry }[];
  contexts?: { name: string; context?: ContextEntry }[];
}
interface ClusterEntry {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
}
interface UserEntry {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
}
interface ContextEntry {
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** The named entry's body (`cluster:`, `user:`, `context:`), {} when the body is empty. */
function entry<T>(list: { name: string }[] | undefined, name: string, field: string): T | undefined {
  const e = list?.find((x) => x.name === name) as Record<string, unknown> | undefined;
  return e ? ((e[field] ?? {}) as T) : undefined;
}

/** Inline base64 data wins over a file (both set is an error, as upstream). */
function material(data: string | undefined, file: string | undefined, dir: string, what: string, owner: string): Buffer | undefined {
  if (data && file) throw new Error(`${what}-data and ${what} are both specified for ${owner}; please specify only one`);
  if (data) return Buffer.from(data, 'base64');
  if (file) return readFileSync(path.resolve(dir, file));
  return undefined;
}

/** Builds the RestConfig of a kubeconfig's text; dir resolves relative file references. */
export function parseKubeconfig(text: string, opts: { dir?: string; context?: string } = {}): RestConfig {
  const kc = (parse(text) ?? {}) as Kubeconfig;
  const dir = opts.dir ?? process.cwd();
  const contextName = opts.context || kc['current-context'];
  if (!contextName) throw new Error('invalid configuration: no configuration has been provided');
  const context = entry<ContextEntry>(kc.contexts, contextName, 'context');
  if (!context) throw new Error(`context was not found for specified context: ${contextName}`);
  const clusterName = context.cluster ?? '';
  const c = entry<ClusterEntry>(kc.clusters, clusterName, 'cluster');
  if (!c) throw new Error(`cluster "${clusterName}" was not found for context "${contextName}"`);
  if (!c.server) throw new Error(`no server found for cluster "${clusterName}"`);
  const userName = context.user ?? '';
  const user = entry<UserEntry>(kc.users, userName, 'user') ?? {};

  const config: RestConfig = {
    server: c.server,
    ca: material(c['certificate-authority-data'], c['certificate-authority'], dir, 'certificate-authority', clusterName),
    cert: material(user['client-certificate-data'], user['client-certificate'], dir, 'client-certificate', userName),
    key: material(user['client-key-data'], user['client-key'], dir, 'client-key', userName),
    token: user.token ?? (user.tokenFile ? readFileSync(path.resolve(dir, user.tokenFile), 'utf8').trim() : undefined),
    insecureSkipTLSVerify: c['insecure-skip-tls-verify'] === true,
    namespace: context.namespace,
  };
  if (config.insecureSkipTLSVerify && config.ca) throw new Error('specifying a root certificates file with the insecure flag is not allowed');
  return config;
}

const fileFields: Record<string, string[]> = {
  clusters: ['certificate-authority'],
  users: ['client-certificate', 'client-key', 'tokenFile'],
};

/**
 * Several kubeconfigs as one, as clientcmd merges $KUBECONFIG: the first file to name a cluster,
 * user or context (or to set current-context) wins; each file's relative paths resolve against
 * its own directory; files that do not exist are skipped.
 */
export function mergeKubeconfigs(files: readonly string[]): string {
  const merged: Kubeconfig & Record<string, unknown> = { clusters: [], users: [], contexts: [] };
  for (const file of files) {
    if (!existsSync(file)) continue;
    const kc = (parse(readFileSync(file, 'utf8')) ?? {}) as Kubeconfig & Record<string, unknown>;
    const dir = path.dirname(path.resolve(file));
    merged['current-context'] ||= kc['current-context'];
    for (const list of ['clusters', 'users', 'contexts'] as const) {
      const field = list.slice(0, -1);
      for (const e of kc[list] ?? []) {
        const target = merged[list] as { name: string }[];
        if (target.some((x) => x.name === e.name)) continue;
        const body = { ...((e as Record<string, unknown>)[field] as Record<string, unknown> | undefined) };
        for (const f of fileFields[list] ?? []) if (typeof body[f] === 'string' && body[f]) body[f] = path.resolve(dir, body[f]);
        target.push({ name: e.name, [field]: body } as { name: string });
      }
    }
  }
  return JSON.stringify(merged);
}

/** The kubeconfig files kubectl would read: --kubeconfig, else each of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigFiles(explicit: string | undefined, env: string | undefined = process.env.KUBECONFIG): string[] {
  if (explicit) return [explicit];
  const fromEnv = (env ?? '').split(path.delimiter).filter(Boolean);
  return fromEnv.length ? fromEnv : [path.join(os.homedir(), '.kube', 'config')];
}

/** The RestConfig kubectl would use: the files above merged, then --context (or the current context). */
export function loadKubeconfigChain(opts: { kubeconfig?: string; context?: string; env?: string }): RestConfig {
  const files = kubeconfigFiles(opts.kubeconfig, opts.env);
  if (opts.kubeconfig && !existsSync(opts.kubeconfig)) throw new Error(`stat ${opts.kubeconfig}: no such file or directory`);
  return parseKubeconfig(mergeKubeconfigs(files), { context: opts.context });
}

export async function loadKubeconfig(file: string, context?: string): Promise<RestConfig> {
  return parseKubeconfig(await readFile(file, 'utf8'), { dir: path.dirname(path.resolve(file)), context });
}
