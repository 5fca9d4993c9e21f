// How the node's proxy and network policy reach the kernel: nft scripts applied as one transaction
// (`nft -f -`, all or nothing), and the ruleset read back as JSON. Unit tests use FakeNftables.
import { spawn } from 'node:child_process';

export interface Nftables {
  /** Applies a script atomically; rejects with nft's own message when any line fails. */
  apply(script: string): Promise<void>;
  /** `nft -j list table <family> <name>`, parsed; undefined when the table does not exist. */
  listTable(family: string, name: string): Promise<unknown[] | undefined>;
}

function nft(args: string[], input?: string, netns?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = netns ? spawn('ip', ['netns', 'exec', netns, 'nft', ...args], { stdio: ['pipe', 'pipe', 'pipe'] }) : spawn('nft', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    // An nft that exits before reading its stdin closes the pipe (EPIPE): its exit code and stderr
    // say what happened, and an unhandled stream error would take the whole agent down.
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

export class NftCommand implements Nftables {
  /** netns: run inside that named network namespace (tests and benchmarks), not the host's. */
  constructor(private readonly opts: { netns?: string } = {}) {}

  async apply(script: string): Promise<void> {
    const { code, stderr } = await nft(['-f', '-'], script, this.opts.netns);
    if (code !== 0) throw new Error(`nft: ${stderr.trim() || `exit ${code}`}`);
  }

  async listTable(family: string, name: string): Promise<unknown[] | undefined> {
    const { code, stdout, stderr } = await nft(['-j', 'list', 'table', family, name], undefined, this.opts.netns);
    if (code !== 0) {
      if (/No such file or directory/.test(stderr)) return undefined;
      throw new Error(`nft: ${stderr.trim() || `exit ${code}`}`);
    }
    return (JSON.parse(stdout) as { nftables: unknown[] }).nftables;
  }
}

/** Records the scripts it is given; tables are whatever a test puts in `tables`. */
export class FakeNftables implements Nftables {
  readonly scripts: string[] = [];
  readonly tables = new Map<string, unknown[]>();
  failNext?: Error;

  async apply(script: string): Promise<void> {
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    this.scripts.push(script);
  }

  async listTable(family: string, name: string): Promise<unknown[] | undefined> {
    return this.tables.get(`${family} ${name}`);
  }
}
