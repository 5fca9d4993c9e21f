// What one attempt of a probe action finds (upstream's pkg/probe): its result, the output the
// events quote, and an error when the action could not run at all (then the attempt is retried
// and, failing that, thrown away by the worker rather than counted).
import type { Container } from '../../api/types.js';

export type ProbeActionResult = 'success' | 'warning' | 'failure' | 'unknown';

export interface ProbeOutcome {
  result: ProbeActionResult;
  output: string;
  /** Go's non-nil err: the probe errored (bad port, runtime unreachable ...). */
  error?: string;
}

/** Probe output and HTTP bodies are read up to 10 KiB, as upstream. */
export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;

/** The kubelet version the User-Agent headers carry (kube-probe/1.33, kube-lifecycle/1.33). */
export const KUBE_VERSION = '1.33';

export function userAgent(purpose: 'probe' | 'lifecycle'): string {
  return `kube-${purpose}/${KUBE_VERSION}`;
}

/** An action that could not run; its message is Go's err text. */
export class ProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeError';
  }
}

/**
 * probe.ResolveContainerPort: a number as is, a name through the container's ports, else a
 * numeric string; throws ProbeError with upstream's texts.
 */
export function resolveContainerPort(param: number | string | undefined, container: Container): number {
  let port: number;
  if (typeof param === 'number') port = param;
  else if (typeof param === 'string') {
    const named = (container.ports ?? []).find((p) => p.name === param);
    if (named) port = named.containerPort;
    else if (/^[+-]?\d+$/.test(param)) port = Number.parseInt(param, 10);
    else throw new ProbeError(`strconv.Atoi: parsing ${JSON.stringify(param)}: invalid syntax`);
  } else throw new ProbeError(`intOrString had no kind: ${String(param)}`);
  if (port > 0 && port < 65536) return port;
  throw new ProbeError(`invalid port number: ${port}`);
}
