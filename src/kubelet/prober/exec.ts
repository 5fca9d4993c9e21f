// Exec probes (upstream's pkg/probe/exec over the runtime's ExecSync): exit 0 succeeds, another
// exit code fails with the command's output, a timeout fails with the CRI client's timeout text,
// and a runtime error means the probe could not run.
import type { Container } from '../../api/types.js';
import { expand, mappingFor } from '../kuberuntime/env.js';
import { RuntimeError, formatRuntimeError, type RuntimeService } from '../runtime/types.js';
import { goQuote, goSeconds } from './goformat.js';
import { MAX_PROBE_OUTPUT_BYTES, type ProbeOutcome } from './probe.js';

/** What probes and hooks need of the runtime: ExecSync (upstream's CommandRunner). */
export type CommandRunner = Pick<RuntimeService, 'execSync'>;

/** The combined output of an ExecSync (stdout, then stderr, as upstream's RunInContainer) and its error, Go-style. */
export interface ExecResult {
  output: Buffer;
  exitCode?: number;
  /** "command 'x' exited with 1: <stderr>", `command timed out: "x" timed out after 1s`, or the runtime's error. */
  error?: string;
  timedOut?: boolean;
}

export async function runInContainer(runner: CommandRunner, containerID: string, cmd: string[], timeoutSeconds: number): Promise<ExecResult> {
  try {
    const res = await runner.execSync(containerID, cmd, timeoutSeconds);
    const output = Buffer.concat([res.stdout ?? Buffer.alloc(0), res.stderr ?? Buffer.alloc(0)]);
    if (res.exit_code === 0) return { output, exitCode: 0 };
    return { output, exitCode: res.exit_code, error: `command '${cmd.join(' ')}' exited with ${res.exit_code}: ${(res.stderr ?? Buffer.alloc(0)).toString('utf8')}` };
  } catch (err) {
    // The CRI client (k8s.io/cri-client) reads a DeadlineExceeded ExecSync as ErrCommandTimedOut.
    if (err instanceof RuntimeError && err.code === 'DEADLINE_EXCEEDED') {
      return { output: Buffer.alloc(0), error: `command timed out: ${goQuote(cmd.join(' '))} timed out after ${goSeconds(timeoutSeconds)}`, timedOut: true };
    }
    return { output: Buffer.alloc(0), error: formatRuntimeError(err) };
  }
}

/** kubecontainer.ExpandContainerCommandOnlyStatic: $(VAR) from the container's literal env values only. */
export function expandCommandOnlyStatic(command: string[], container: Container): string[] {
  const mapping = mappingFor(new Map((container.env ?? []).map((e) => [e.name, e.value ?? ''])));
  return command.map((c) => expand(c, mapping));
}

export async function execProbe(runner: CommandRunner, containerID: string, command: string[], timeoutSeconds: number): Promise<ProbeOutcome> {
  const res = await runInContainer(runner, containerID, command, timeoutSeconds);
  const output = res.output.subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
  if (res.exitCode === 0) return { result: 'success', output };
  if (res.exitCode !== undefined) return { result: 'failure', output };
  if (res.timedOut) return { result: 'failure', output: res.error! };
  return { result: 'unknown', output: '', error: res.error };
}
