// Chooses the storage backend from the server's --storage flag.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdStore } from './etcd/etcd-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

const USAGE = '"sqlite" or "etcd://HOST:PORT[,HOST:PORT...][/PREFIX]"';

/**
 * `sqlite`: the embedded store in DATA/state.db. `etcd://h1:p1,h2:p2/prefix`: an etcd cluster, keys
 * under the optional prefix; the cluster must answer before this resolves (else Unavailable).
 */
export async function openStore(spec: string, dataDir: string): Promise<Store> {
  if (spec === 'sqlite') {
    mkdirSync(dataDir, { recursive: true });
    return new SqliteStore(join(dataDir, 'state.db'));
  }
  const etcd = /^etcd:\/\/([^/]+)(\/.*)?$/.exec(spec);
  if (!etcd) throw new Error(`unknown storage "${spec}": expected ${USAGE}`);
  const endpoints = etcd[1].split(',');
  if (endpoints.some((e) => !/^[^:\s]+:\d+$/.test(e))) throw new Error(`bad etcd endpoints in "${spec}": expected ${USAGE}`);
  const store = new EtcdStore({ endpoints, prefix: etcd[2] });
  try {
    await store.currentRevision();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
