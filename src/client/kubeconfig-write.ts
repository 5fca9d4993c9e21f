// Writes a kubeconfig that kubectl and client-go read: one cluster, one user, one context, with the
// certificates embedded (base64 *-data fields) so the file stands alone.
import { stringify } from 'yaml';
import { writeFileAtomic } from '../util/file.js';

export type KubeconfigCredentials = { certPem: string; keyPem: string } | { token: string };

export type KubeconfigOptions = KubeconfigCredentials & {
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  caPem: string;
  user: string;
  /** Defaults to 'kite'. */
  cluster?: string;
  /** Defaults to `<user>@<cluster>`, as kubeadm names it. */
  context?: string;
};

/** Writes the kubeconfig atomically with mode 0600: it holds a private key or token. */
export async function writeKubeconfig(path: string, opts: KubeconfigOptions): Promise<void> {
  const cluster = opts.cluster ?? 'kite';
  const context = opts.context ?? `${opts.user}@${cluster}`;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const user = 'token' in opts ? { token: opts.token } : { 'client-certificate-data': b64(opts.certPem), 'client-key-data': b64(opts.keyPem) };
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: opts.server, 'certificate-authority-data': b64(opts.caPem) } }],
    users: [{ name: opts.user, user }],
    contexts: [{ name: context, context: { cluster, user: opts.user } }],
    'current-context': context,
    preferences: {},
  };
  await writeFileAtomic(path, stringify(config), 0o600);
}
