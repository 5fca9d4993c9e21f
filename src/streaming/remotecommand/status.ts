// The metav1.Status a remote command ends with: what the runtime reports on its v4 error stream,
// and what the API server's stream translator passes on to a v5 WebSocket client.
import { UpgradeFailedError } from '../upgrade.js';
import { EXIT_CODE_CAUSE_TYPE, NON_ZERO_EXIT_CODE_REASON } from './constants.js';

/** metav1.Status as it travels on the error channel (field order as Go marshals it). */
export interface RemoteCommandStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
  code?: number;
}

export function successStatus(): RemoteCommandStatus {
  return { metadata: {}, status: 'Success' };
}

/** What the translator reports for a command that exited non-zero (kubectl exits with the code). */
export function exitCodeStatus(exitCode: number): RemoteCommandStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: command terminated with exit code ${exitCode}`,
    reason: NON_ZERO_EXIT_CODE_REASON,
    details: { causes: [{ reason: EXIT_CODE_CAUSE_TYPE, message: String(exitCode) }] },
  };
}

/** apierrors.NewInternalError. */
export function internalErrorStatus(message: string): RemoteCommandStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

/** The exit code in a v4 status, undefined for success; throws what client-go's errorDecoderV4 returns as an error. */
function decodeV4(bytes: Buffer): number | undefined {
  const text = bytes.toString('utf8');
  if (text.length === 0) return undefined;
  let status: Partial<RemoteCommandStatus>;
  try {
    status = JSON.parse(text) as Partial<RemoteCommandStatus>;
  } catch (err) {
    throw new Error(`error stream protocol error: ${(err as Error).message} in ${JSON.stringify(text)}`, { cause: err });
  }
  if (status.status === 'Success') return undefined;
  if (status.status !== 'Failure') throw new Error('error stream protocol error: unknown error');
  if (status.reason !== NON_ZERO_EXIT_CODE_REASON) throw new Error(status.message ?? '');
  if (!status.details) throw new Error('error stream protocol error: details must be set');
  const cause = status.details.causes?.find((c) => c.reason === EXIT_CODE_CAUSE_TYPE);
  if (!cause) throw new Error(`error stream protocol error: no ${EXIT_CODE_CAUSE_TYPE} cause given`);
  const value = cause.message ?? '';
  // ParseUint(value, 10, 8): exit codes are 0..255.
  if (!/^\d+$/.test(value) || Number(value) > 255) throw new Error(`error stream protocol error: invalid exit code value ${JSON.stringify(value)}`);
  return Number(value);
}

/** The v5 status for what the runtime wrote on its v4 error stream. */
export function statusFromV4ErrorStream(bytes: Buffer): RemoteCommandStatus {
  try {
    const code = decodeV4(bytes);
    return code === undefined ? successStatus() : exitCodeStatus(code);
  } catch (err) {
    return internalErrorStatus((err as Error).message);
  }
}

/** The status for a failed connection to the streaming server: its own Status body if it sent one. */
export function statusFromDialError(err: unknown): RemoteCommandStatus {
  if (err instanceof UpgradeFailedError) {
    try {
      const body = JSON.parse(err.body) as Partial<RemoteCommandStatus> & { kind?: string };
      if (body && body.kind === 'Status' && (body.status === 'Success' || body.status === 'Failure')) return body as RemoteCommandStatus;
    } catch {
      // not a Status: fall through to the generic message
    }
  }
  return internalErrorStatus(err instanceof Error ? err.message : String(err));
}
