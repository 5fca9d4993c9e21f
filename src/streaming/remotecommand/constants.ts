// The remote command (exec, attach) and port-forward wire vocabulary of k8s.io/apimachinery's
// util/remotecommand and core/v1's stream constants.

/** WebSocket subprotocols: one-byte channel prefix; v5 adds the close-channel message. */
export const WS_PROTOCOL_V5 = 'v5.channel.k8s.io';
export const WS_PROTOCOL_V4 = 'v4.channel.k8s.io';

/** SPDY stream protocol versions (X-Stream-Protocol-Version), newest first. */
export const STREAM_PROTOCOL_V4 = 'v4.channel.k8s.io';
export const STREAM_PROTOCOL_V3 = 'v3.channel.k8s.io';
export const STREAM_PROTOCOL_V2 = 'v2.channel.k8s.io';
export const STREAM_PROTOCOL_V1 = 'channel.k8s.io';

/** Port-forward over SPDY, and that same SPDY tunnelled in a WebSocket (kubectl 1.30+). */
export const PORT_FORWARD_PROTOCOL_V1 = 'portforward.k8s.io';
export const WS_PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

/** The SPDY header naming a stream's role (sent lowercase, as Go's framer does). */
export const STREAM_TYPE_HEADER = 'streamtype';
export const PORT_HEADER = 'port';
export const REQUEST_ID_HEADER = 'requestid';

export const StreamType = {
  Stdin: 'stdin',
  Stdout: 'stdout',
  Stderr: 'stderr',
  Error: 'error',
  Resize: 'resize',
  Data: 'data',
} as const;

/** WebSocket channel numbers (the first byte of each binary message). */
export const Channel = {
  Stdin: 0,
  Stdout: 1,
  Stderr: 2,
  Error: 3,
  Resize: 4,
  /** v5: the payload's first byte names a channel the sender will write no more to. */
  Close: 255,
} as const;

export const NON_ZERO_EXIT_CODE_REASON = 'NonZeroExitCode';
export const EXIT_CODE_CAUSE_TYPE = 'ExitCode';

/** Which streams a remote command uses (the exec/attach query's stdin, stdout, stderr, tty). */
export interface RemoteCommandOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}
