// Reads the credential out of a kubeconfig the user picked, in the browser: the server is sent only
// the current context's token or client certificate and key, never the file or a path to read.
import { parse } from 'yaml';
import type { Credentials } from './api.js';

interface Named {
  name?: unknown;
  [k: string]: unknown;
}

function entry(list: unknown, name: unknown, field: string): Record<string, unknown> | undefined {
  if (!Array.isArray(list)) return undefined;
  const e = (list as Named[]).find((x) => x && typeof x === 'object' && x.name === name);
  const body = e && Object.hasOwn(e, field) ? e[field] : undefined;
  return body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

export function kubeconfigCredentials(text: string): Credentials {
  const kc = parse(text) as Record<string, unknown> | null;
  if (!kc || typeof kc !== 'object') throw new Error('not a kubeconfig');
  const contextName = kc['current-context'];
  const context = entry(kc.contexts, contextName, 'context');
  if (!context) throw new Error(`the kubeconfig has no current context`);
  const user = entry(kc.users, context.user, 'user');
  if (!user) throw new Error(`user "${String(context.user)}" is not in the kubeconfig`);
  const token = str(user.token);
  if (token) return { token };
  const cert = str(user['client-certificate-data']);
  const key = str(user['client-key-data']);
  if (cert && key) return { clientCertificate: atob(cert), clientKey: atob(key) };
  throw new Error('the kubeconfig user must carry its credential inline: token, or client-certificate-data and client-key-data');
}
