import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { FakeClock } from '../../util/clock.js';
import { RuntimeError, type Container, type ContainerStatus } from '../runtime/types.js';
import { ContainerLogManager, LOG_MONITOR_PERIOD_MS, rotationSuffix } from './manager.js';

const logger = pino({ level: 'silent' });

/** The slice of a runtime the manager uses: one running container whose log is at path. */
class FakeLogRuntime {
  reopened: string[] = [];
  failReopen = false;
  constructor(readonly path: string) {}
  async listContainers(): Promise<Container[]> {
    return [{ id: 'c1' } as Container];
  }
  async containerStatus(): Promise<ContainerStatus> {
    return { id: 'c1', log_path: this.path } as ContainerStatus;
  }
  async reopenContainerLog(id: string): Promise<void> {
    if (this.failReopen) throw new RuntimeError('UNKNOWN', 'reopen failed');
    this.reopened.push(id);
    await writeFile(this.path, ''); // the runtime creates a new file at the path
  }
}

test('rotationSuffix is YYYYMMDD-hhmmss', () => {
  assert.equal(rotationSuffix(Date.UTC(2026, 0, 2, 3, 4, 5)), '20260102-030405');
});

test('rotates in virtual time: rename, reopen, compress older files, keep maxFiles', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kite-logrot-'));
  try {
    const path = join(dir, '0.log');
    const runtime = new FakeLogRuntime(path);
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const mgr = new ContainerLogManager({ runtime, clock, logger, maxSize: 10, maxFiles: 3 });
    mgr.start();

    await writeFile(path, 'small\n');
    await clock.advance(LOG_MONITOR_PERIOD_MS);
    assert.deepEqual(runtime.reopened, [], 'under the limit: untouched');

    for (let i = 1; i <= 3; i++) {
      await writeFile(path, `generation ${i} is over ten bytes\n`);
      await clock.advance(LOG_MONITOR_PERIOD_MS);
      // Compression is real file I/O: wait for the pass to finish before the next tick.
      while (runtime.reopened.length < i) await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(runtime.reopened, ['c1', 'c1', 'c1']);
    const files = (await readdir(dir)).sort();
    const t2 = rotationSuffix(Date.UTC(2026, 0, 1) + 3 * LOG_MONITOR_PERIOD_MS);
    const t3 = rotationSuffix(Date.UTC(2026, 0, 1) + 4 * LOG_MONITOR_PERIOD_MS);
    // maxFiles 3: the current file, the newest rotated (plain) and one older (gzipped).
    assert.deepEqual(files, ['0.log', `0.log.${t2}.gz`, `0.log.${t3}`]);
    assert.equal(await readFile(join(dir, `0.log.${t3}`), 'utf8'), 'generation 3 is over ten bytes\n');
    assert.equal(gunzipSync(await readFile(join(dir, `0.log.${t2}.gz`))).toString(), 'generation 2 is over ten bytes\n');
    assert.equal(await readFile(path, 'utf8'), '');

    await mgr.clean(path);
    assert.deepEqual(await readdir(dir), ['0.log']);
    await mgr.stop();
    assert.equal(clock.pending(), 0, 'stop cancels the timer');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a failed reopen renames the log back', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kite-logrot-'));
  try {
    const path = join(dir, '0.log');
    const runtime = new FakeLogRuntime(path);
    runtime.failReopen = true;
    const mgr = new ContainerLogManager({ runtime, clock: new FakeClock(), logger, maxSize: 1, maxFiles: 5 });
    await writeFile(path, 'over the limit\n');
    await assert.rejects(mgr.rotateLog('c1', path), /failed to reopen container log "c1": reopen failed/);
    assert.deepEqual(await readdir(dir), ['0.log']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('cleans leftovers of an interrupted compression', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kite-logrot-'));
  try {
    const path = join(dir, '0.log');
    const runtime = new FakeLogRuntime(path);
    const mgr = new ContainerLogManager({ runtime, clock: new FakeClock(Date.UTC(2026, 0, 1)), logger, maxSize: 1, maxFiles: 5 });
    await writeFile(path, 'current\n');
    await writeFile(`${path}.20250101-000000`, 'old\n');
    await writeFile(`${path}.20250101-000000.gz`, 'x'); // finished compression; the original should have gone
    await writeFile(`${path}.20250102-000000.gz.tmp`, 'partial');
    await mgr.rotateLog('c1', path);
    assert.deepEqual((await readdir(dir)).sort(), ['0.log', '0.log.20250101-000000.gz', '0.log.20260101-000000']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
