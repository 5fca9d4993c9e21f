// Shutting down an HTTP(S) listener: keep-alive and long-lived responses (watches, log streams)
// would hold close() open forever, so their connections are dropped too.
import type { Server } from 'node:http';

/** Stops accepting, drops every connection it still has, and resolves once the listener is closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
