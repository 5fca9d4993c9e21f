// The web console in a real browser (Debian's chromium, headless, driven by playwright-core) on a
// real containerd cluster: the seeds' web pod with its Service. A token of a privileged user logs
// in and sees the pod with kubectl's STATUS, its timeline waterfall and why line, its events, and
// a log line appear while following; a user without bindings logs in with a kubeconfig from
// `kite kubeconfig` and sees 403, not data. Screenshots go to test-results/console/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { eventually, examplesDir, kiteBin, kubectl, kubectlOk, repoRoot, tempDir } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const chromiumPath = '/usr/bin/chromium';
const skip = !canRunContainers ? 'running containers needs root' : !existsSync(chromiumPath) ? `no ${chromiumPath} (scripts/install-deps.sh installs it)` : false;
const shots = join(repoRoot, 'test-results', 'console');

describe('the web console on kite up (containerd, chromium)', { skip }, () => {
  let cluster: KiteCluster;
  let browser: BrowserContext;
  let page: Page;
  const dir = tempDir('tlc-console');
  const k = (args: string[]) => kubectlOk(cluster, args);
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  /**
   * page.goto, again when Chromium aborts it with ERR_NETWORK_CHANGED: each pod the cluster starts
   * adds a veth to the host, and Chromium cancels navigations in flight on any interface change.
   */
  const open = async (url: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await page.goto(url);
      } catch (err) {
        if (attempt === 5 || !String(err).includes('net::ERR_NETWORK_CHANGED')) throw err;
      }
    }
  };

  before(async () => {
    mkdirSync(shots, { recursive: true });
    console.log(`console screenshots: ${shots}`);
    writeFileSync(join(dir, 'tokens.csv'), 'tlc-admin-token,console-admin,9001,system:masters\n');
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-tlc', '--pod-cidr', '10.217.202.0/24', '--cgroup-root', '/kite-tlc', '--token-auth-file', join(dir, 'tokens.csv')] });
    browser = await chromium.launchPersistentContext(join(dir, 'chromium'), {
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      // The cluster's own CA signed the serving certificate; the browser does not know it.
      ignoreHTTPSErrors: true,
      viewport: { width: 1440, height: 900 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
  });

  after(async () => {
    await browser?.close();
    await stopAndReset(cluster);
  });

  it('serves the console at /ui/ with its login page', async () => {
    const res = await open(`${cluster.url}/ui`);
    assert.equal(res?.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/ui/');
    assert.equal(res?.headers()['x-frame-options'], 'DENY');
    await page.getByLabel('Bearer token').waitFor();
    await shot('login');
  });

  it('a privileged token sees the web pod with kubectl\'s STATUS, its waterfall, why line and events', async () => {
    k(['apply', '-f', join(examplesDir, 'web-pod.yaml')]);
    k(['apply', '-f', join(examplesDir, 'myservice.yaml')]);
    await eventually(() => (k(['get', 'pod', 'web', '--no-headers']).split(/\s+/)[1] === '1/1' ? true : undefined), 'web 1/1', 180_000);

    await page.getByLabel('Bearer token').fill('tlc-admin-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('header .user', { hasText: 'console-admin' }).waitFor();
    const webRow = page.locator('tr', { has: page.getByRole('link', { name: 'web', exact: true }) });
    await webRow.waitFor();
    await eventually(async () => {
      const kubectlStatus = k(['get', 'pod', 'web', '--no-headers']).split(/\s+/)[2];
      return (await webRow.locator('td.status').textContent()) === kubectlStatus ? true : undefined;
    }, "the console's STATUS of web to be kubectl's");
    await shot('pods');

    await page.getByRole('link', { name: 'web', exact: true }).click();
    await page.getByRole('heading', { name: 'web' }).waitFor();
    const rows = page.locator('.waterfall .step');
    await rows.first().waitFor({ timeout: 30_000 });
    const steps = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-step')));
    for (const step of ['Bound', 'ContainerStarted', 'Ready']) assert.ok(steps.includes(step), `waterfall rows ${steps.join(', ')} lack ${step}`);
    assert.ok(await page.locator('.waterfall section[aria-label="lane init wait-service"]').count(), 'a lane for the init container');
    // Keyboard: a row's details open on focus and close with Escape.
    await rows.first().focus();
    await page.locator('.waterfall .details').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.waterfall .details').waitFor({ state: 'detached' });
    const why = await page.locator('.why').textContent();
    assert.match(why ?? '', /^Running/);
    await page.locator('table.events td', { hasText: 'Scheduled' }).first().waitFor();
    await shot('pod-web');
  });

  it("a Pending pod's page shows the scheduler's per-node verdicts and its why line", async () => {
    const pending = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'tlc-pending' }, spec: { nodeSelector: { 'tlc.kite.dev/disk': 'none' }, terminationGracePeriodSeconds: 0, containers: [{ name: 'sh', image: 'busybox:1.35', command: ['sleep', '3600'] }] } };
    assert.equal(kubectlOk(cluster, ['apply', '-f', '-'], JSON.stringify(pending)).trim(), 'pod/tlc-pending created');
    await open(`${cluster.url}/ui/#/pods/default/tlc-pending`);
    const verdicts = page.locator('section[aria-label="Scheduling verdicts"]');
    await verdicts.waitFor({ timeout: 30_000 });
    await verdicts.locator('td', { hasText: cluster.nodeName }).first().waitFor();
    assert.match((await verdicts.textContent()) ?? '', /NodeAffinity/);
    assert.match((await verdicts.locator('.message').textContent()) ?? '', /^0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector/);
    assert.match((await page.locator('.why').textContent()) ?? '', /^Pending/);
    await shot('pod-pending');
    await page.getByRole('link', { name: 'Nodes' }).click();
    const nodeRow = page.locator('tr', { has: page.locator('td', { hasText: cluster.nodeName }) });
    await nodeRow.waitFor();
    assert.equal(await nodeRow.locator('td').nth(1).textContent(), 'Ready');
    assert.match((await nodeRow.textContent()) ?? '', /Ready=True/);
    await shot('nodes');
    await open(`${cluster.url}/ui/#/pods/default/web`);
    await page.getByRole('heading', { name: 'web' }).waitFor();
  });

  it('follows the web pod\'s log: a line written now appears', async () => {
    await page.locator('section[aria-label="Logs"] select').selectOption('nginx');
    await page.getByRole('button', { name: 'Follow' }).click();
    const marker = `tlc-console-${Date.now()}`;
    // nginx restarts now and then (its liveness probe asks for /healthz): write again until seen.
    let seen = '';
    await eventually(async () => {
      kubectl(cluster, ['exec', 'web', '-c', 'nginx', '--', 'sh', '-c', `echo ${marker} > /proc/1/fd/1`]);
      seen = (await page.locator('pre.logs').textContent()) ?? '';
      return seen.includes(marker) ? true : undefined;
    }, 'the marker line in the followed log', 30_000).catch(async (err: Error) => {
      await shot('pod-web-logs-failed');
      throw new Error(`${err.message}; the log box has:\n${seen.slice(-2000)}`);
    });
    await shot('pod-web-logs');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Bearer token').waitFor();
  });

  it('a user without bindings logs in with a kubeconfig and sees 403, not data', async () => {
    const file = join(dir, 'nobody.kubeconfig');
    const r = spawnSync(process.execPath, [kiteBin, 'kubeconfig', '--user', 'tlc-nobody', '--out', file, '--kubeconfig', cluster.kubeconfig], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(kubectl({ kubeconfig: file }, ['get', 'pods']).code, 1);
    // Whatever the tests before left, start logged out.
    await page.evaluate('sessionStorage.clear()');
    await open(`${cluster.url}/ui/`);
    await page.getByLabel(/Kubeconfig file/).setInputFiles(file);
    await page.locator('header .user', { hasText: 'tlc-nobody' }).waitFor();
    const error = page.getByRole('alert');
    await error.first().waitFor();
    const text = (await error.first().textContent()) ?? '';
    assert.match(text, /^403 Forbidden/);
    assert.match(text, /User "tlc-nobody" cannot list resource "pods"/);
    assert.equal(await page.getByRole('link', { name: 'web', exact: true }).count(), 0);
    await shot('forbidden');
  });
});
