// Names the calling OS thread (as `top -H`, `ps -L` and /proc/PID/task/*/comm show it), so the
// threads of `kite server` and `kite node` can be told apart when measuring: a worker thread is
// otherwise indistinguishable from V8's helpers. Linux keeps 15 bytes; elsewhere it does nothing.
import { writeFileSync } from 'node:fs';

export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux, or /proc not mounted: the name is only a convenience.
  }
}
