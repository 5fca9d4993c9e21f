#!/usr/bin/env node
// kite: the command line.
import { serverCommand, serverUsage } from './server.js';
import { agentCommand, imagesCli, nodeUsage, resetCommand, upCommand } from './node.js';
import { simCommand, simUsage } from '../sim/sim.js';

const usage = `Usage: kite <command> [flags]

Commands:
${serverUsage}${nodeUsage}${simUsage}`;

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'server':
      return serverCommand(rest);
    case 'up':
      return upCommand(rest);
    case 'agent':
      return agentCommand(rest);
    case 'reset':
      return resetCommand(rest);
    case 'images':
      return imagesCli(rest);
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
