#!/usr/bin/env node
// kite: the command line. `kite server` runs the API server; `kite up` brings up a cluster on this
// machine (for now the control plane; the kubelet joins in a later issue).
import { resolve } from 'node:path';
import { ApiServer, allComponents, type Component } from '../apiserver/server.js';
import { newLogger } from '../util/log.js';
import { checkFlags, parseArgs } from './args.js';
import { simCommand, simUsage } from '../sim/sim.js';

const usage = `Usage: kite <command> [flags]

Commands:
  server   Run the API server.
           --data-dir DIR              state, certificates and admin.kubeconfig (required)
           --listen HOST:PORT          default 127.0.0.1:6443
           --store sqlite|etcd://HOST:PORT[,HOST:PORT...]   default sqlite
           --token-auth-file FILE      static bearer tokens (token,user,uid,"group1,group2")
           --components LIST           what runs beside the API server: controllers,scheduler (default both; "apiserver" alone for none)
  up       Bring up a cluster on this machine; same flags as server.
${simUsage}`;

async function runServer(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, ['data-dir', 'listen', 'store', 'token-auth-file', 'components']);
  const dataDir = args.flags.get('data-dir');
  if (!dataDir) throw new Error('--data-dir is required');
  const logger = newLogger('apiserver');
  const server = new ApiServer({
    dataDir: resolve(dataDir),
    listen: args.flags.get('listen') ?? '127.0.0.1:6443',
    storage: args.flags.get('store') ?? 'sqlite',
    tokenAuthFile: args.flags.get('token-auth-file'),
    components: parseComponents(args.flags.get('components')),
    logger,
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await server.start();
  process.stdout.write(`kite API server listening on ${server.url}\nkubeconfig: ${server.kubeconfigPath}\n`);
}

function parseComponents(text: string | undefined): Component[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').filter((c) => c !== '' && c !== 'apiserver');
  for (const c of list) if (!allComponents.includes(c as Component)) throw new Error(`unknown component "${c}": expected ${allComponents.join(', ')}`);
  return list as Component[];
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'server':
    case 'up':
      return runServer(rest);
    case 'sim':
      return simCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return;
    default:
      throw new Error(`unknown command "${command}"\n\n${usage}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`kite: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
