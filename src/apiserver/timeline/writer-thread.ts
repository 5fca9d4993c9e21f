// The pod timeline writer's thread entry: SQLite transactions for the API server's timeline store,
// taken in the order they were posted, each answered with its id (and the error,
// if it failed).
import { parentPort, workerData } from 'node:worker_threads';
import { nameThisThread } from '../../util/threadname.js';
import { SqliteTimelineWriter, type WriterMessage } from './file.js';

nameThisThread('timeline-writer');

const port = parentPort!;
const writer = new SqliteTimelineWriter((workerData as { file: string }).file);
port.on('message', (m: WriterMessage) => {
  if (m === 'close') {
    void writer.close().then(() => port.postMessage('closed' satisfies WriterMessage));
    return;
  }
  if (typeof m !== 'object' || !('commit' in m)) return;
  try {
    writer.commit(m.commit);
    port.postMessage({ id: m.id } satisfies WriterMessage);
  } catch (err) {
    port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies WriterMessage);
  }
});
