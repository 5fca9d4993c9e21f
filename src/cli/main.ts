#!/usr/bin/env node
// kite: the command line.
import { serverCommand, serverUsage } from './server.js';
import { agentCommand, imagesCli, nodeUsage, resetCommand, upCommand } from './node.js';
import { simCommand, simUsage } from '../sim/sim.js';
import { failureText } from './report.js';
import { kubeconfigCommand, kubeconfigUsage } from './kubeconfig.js';
import { timelineCommand, timelineUsage, whyCommand } from './timeline.js';

const usage = `Usage: kite <command> [flags]

Commands:
${serverUsage}${nodeUsage}${kubeconfigUsage}${timelineUsage}${simUsage}`;

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
    case 'kubeconfig':
      return kubeconfigCommand(rest);
    case 'timeline':
      return timelineCommand(rest);
    case 'why':
      return whyCommand(rest);
    case 'sim':
      return simCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return;
    default:
      throw new Error(`unknown command "${command}" (kite help lists the commands)`);
  }
}

function fail(err: unknown): never {
  process.stderr.write(failureText(err));
  process.exit(1);
}

// A failure in background work (a node that cannot register) is reported the same way.
process.on('unhandledRejection', fail);
main().catch(fail);
