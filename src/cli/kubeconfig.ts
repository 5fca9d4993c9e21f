// `kite kubeconfig --user NAME`: a kubeconfig for a user of the cluster, as an administrator makes one
// upstream: a new key, a CertificateSigningRequest for kubernetes.io/kube-apiserver-client with
// subject CN=NAME, O=each group, approved with the admin kubeconfig, and the certificate the
// controller manager's signer issues for it. The server and CA come from the admin kubeconfig.
import { resolve } from 'node:path';
import { CSR_APPROVED, KUBE_APISERVER_CLIENT_SIGNER, createCertificateRequest } from '../api/certificates.js';
import { rfc3339 } from '../api/time.js';
import { Client } from '../client/client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { writeKubeconfig } from '../client/kubeconfig-write.js';
import { RestClient } from '../client/rest.js';
import { certificateOf } from '../kubelet/bootstrap/bootstrap.js';
import { csrClient } from '../controllers/certificates/controller.js';
import { checkFlags, parseArgs } from '../util/args.js';
import { realClock, type Clock } from '../util/clock.js';

export const kubeconfigUsage = `  kubeconfig  Write a kubeconfig for a user, with a client certificate signed by the cluster CA.
           --user NAME                 the user name (the certificate's CN) (required)
           --group GROUP               a group of the user (the certificate's O); repeat for more
           --out FILE                  where to write it (default NAME.kubeconfig)
           --expiration-seconds N      the certificate's lifetime (at least 600; default the signer's, a year)
           --kubeconfig FILE           an administrator's kubeconfig (default DATA/admin.kubeconfig)
           --data-dir DIR              the server's data directory, for its admin.kubeconfig
`;

export interface UserKubeconfigOptions {
  user: string;
  groups: readonly string[];
  out: string;
  expirationSeconds?: number;
  adminKubeconfig: string;
  clock?: Clock;
  /** How long to wait for the signer (default 60 s). */
  timeoutMs?: number;
}

/** kube-apiserver-client with an ECDSA key: no key encipherment. */
const usages = ['digital signature', 'client auth'];

export async function writeUserKubeconfig(opts: UserKubeconfigOptions): Promise<void> {
  const clock = opts.clock ?? realClock;
  const admin = await loadKubeconfig(opts.adminKubeconfig);
  if (!admin.ca) throw new Error(`${opts.adminKubeconfig} names no certificate authority for its cluster`);
  const rest = new RestClient({ ...admin, userAgent: 'kite-kubeconfig/v1.33.0' });
  try {
    const csrs = csrClient(new Client(rest));
    const { keyPem, csrPem } = await createCertificateRequest({ commonName: opts.user, organizations: [...opts.groups] });
    const created = await csrs.create({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'kite-user-' },
      spec: {
        request: Buffer.from(csrPem).toString('base64'),
        signerName: KUBE_APISERVER_CLIENT_SIGNER,
        usages,
        ...(opts.expirationSeconds !== undefined ? { expirationSeconds: opts.expirationSeconds } : {}),
      },
    });
    const name = created.metadata!.name!;
    const condition = { type: CSR_APPROVED, status: 'True', reason: 'KiteKubeconfig', message: `approved by kite kubeconfig for user ${opts.user}`, lastUpdateTime: rfc3339(clock.now()) };
    await csrs.subresource('PUT', name, 'approval', { ...created, status: { ...created.status, conditions: [...(created.status?.conditions ?? []), condition] } });
    const deadline = clock.now() + (opts.timeoutMs ?? 60_000);
    for (;;) {
      const certPem = certificateOf(await csrs.get(name));
      if (certPem) {
        await writeKubeconfig(opts.out, { server: admin.server, caPem: String(admin.ca), certPem, keyPem, user: opts.user });
        return;
      }
      if (clock.now() >= deadline) throw new Error(`timed out waiting for the certificate of certificate signing request ${name}: is the controller manager's csrsigning controller running?`);
      await clock.sleep(250);
    }
  } finally {
    rest.close();
  }
}

export async function kubeconfigCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, ['user', 'group', 'out', 'expiration-seconds', 'kubeconfig', 'data-dir']);
  const user = args.flags.get('user');
  if (!user) throw new Error('--user is required');
  const seconds = args.flags.get('expiration-seconds');
  if (seconds !== undefined && (!/^\d+$/.test(seconds) || Number(seconds) < 600)) throw new Error(`--expiration-seconds must be a whole number of at least 600, got "${seconds}"`);
  const dataDir = args.flags.get('data-dir');
  const adminKubeconfig = args.flags.get('kubeconfig') ?? (dataDir === undefined ? undefined : resolve(dataDir, 'admin.kubeconfig'));
  if (!adminKubeconfig) throw new Error('--kubeconfig or --data-dir is required (the admin kubeconfig approves the request)');
  const out = resolve(args.flags.get('out') ?? `${user}.kubeconfig`);
  await writeUserKubeconfig({ user, groups: args.repeated.get('group') ?? [], out, expirationSeconds: seconds === undefined ? undefined : Number(seconds), adminKubeconfig });
  process.stdout.write(`kubeconfig for user ${user} written to ${out}\n`);
}
