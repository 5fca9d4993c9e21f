// Configuration and identity: ConfigMap, Secret, ServiceAccount, ResourceQuota.
import type { ConfigMap, ResourceQuota, Secret, ServiceAccount } from '../../api/types.js';
import { age, ageColumn, column, nameColumn, printer } from './printer.js';

const count = (map: Record<string, string> | undefined) => Object.keys(map ?? {}).length;

export const configMapPrinter = printer<ConfigMap>(
  [
    nameColumn,
    column(
      'Data',
      'string',
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    ageColumn,
  ],
  (cm, now) => ({ cells: [cm.metadata.name, count(cm.data) + count(cm.binaryData), age(cm, now)] }),
);

export const secretPrinter = printer<Secret>(
  [
    nameColumn,
    column('Type', 'string', 'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types'),
    column(
      'Data',
      'string',
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    ageColumn,
  ],
  // Only data counts: stringData is merged into data on write and never stored.
  (secret, now) => ({ cells: [secret.metadata.name, secret.type ?? '', count(secret.data), age(secret, now)] }),
);

export const serviceAccountPrinter = printer<ServiceAccount>(
  [
    nameColumn,
    column(
      'Secrets',
      'string',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret',
    ),
    ageColumn,
  ],
  (sa, now) => ({ cells: [sa.metadata.name, sa.secrets?.length ?? 0, age(sa, now)] }),
);

/** "resource: used/hard" for each hard limit, sorted; limits.* go to LIMIT, the rest to REQUEST. */
function quotaCells(quota: ResourceQuota): [request: string, limit: string] {
  const hard = quota.status?.hard ?? {};
  const used = quota.status?.used ?? {};
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    (name.startsWith('limits.') ? limit : request).push(`${name}: ${used[name] ?? '0'}/${hard[name]}`);
  }
  return [request.join(', '), limit.join(', ')];
}

export const resourceQuotaPrinter = printer<ResourceQuota>(
  [
    nameColumn,
    ageColumn,
    column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
    column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
  ],
  (quota, now) => ({ cells: [quota.metadata.name, age(quota, now), ...quotaCells(quota)] }),
);
