// The node's local images, built without Docker: a rootfs folder from Debian's packages and our own
// code becomes one layer of an OCI layout (umoci), which `push.ts` copies into the local registry.
// Builds are content-addressed: the key hashes every input (recipe files, binaries, libraries), so
// an unchanged image is not rebuilt, and fixed timestamps make the same inputs give the same digest.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, lutimes, mkdir, mkdtemp, readFile, readdir, rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Bumped when a recipe's code changes in a way its inputs don't show. */
const recipeVersion = '1';
/** Every file's mtime and every history/created time: builds of the same inputs are byte-identical. */
const epoch = new Date('2024-01-01T00:00:00Z');

const busyboxBinary = '/bin/busybox';
const nginxBinary = '/usr/sbin/nginx';
const defaultPath = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ImageRecipe {
  /** Recipe folder under images/ and the OCI layout's name. */
  name: string;
  /** The repository inside the local registry (what the mirror for its registry host is asked for). */
  repository: string;
  tag: string;
  /**
   * More tags the registry serves the same image under: `latest`, so that the untagged
   * references of common examples (`image: busybox`) resolve too.
   */
  aliasTags?: string[];
  /** The reference pods use, which containerd's hosts.toml resolves to the local registry. */
  reference: string;
  /** Files whose content decides the build (besides the recipe folder). */
  inputs(): Promise<string[]>;
  populate(rootfs: string, recipeDir: string): Promise<void>;
  /** umoci config flags. */
  config: string[];
}

export interface BuiltImage {
  recipe: ImageRecipe;
  /** The OCI layout folder; the image is tagged `tag` in it. */
  layout: string;
  /** Digest of the image manifest, as the registry will report it. */
  manifestDigest: string;
}

/** The repository's images/ folder, found from this module whether it runs from src/ or dist/src/. */
export function recipesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'images', 'pause', 'pause.c'))) return join(dir, 'images');
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the images/ recipes folder above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

async function installBusybox(rootfs: string, recipeDir: string): Promise<void> {
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  await copyFile(busyboxBinary, join(rootfs, 'bin/busybox'));
  await chmod(join(rootfs, 'bin/busybox'), 0o755);
  const { stdout } = await run(busyboxBinary, ['--list-full']);
  for (const applet of stdout.split('\n').map((s) => s.trim()).filter(Boolean)) {
    if (applet === 'bin/busybox') continue;
    await mkdir(join(rootfs, dirname(applet)), { recursive: true });
    await symlink('/bin/busybox', join(rootfs, applet)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  const busyboxRecipe = join(dirname(recipeDir), 'busybox');
  await mkdir(join(rootfs, 'etc'), { recursive: true });
  await copyFile(join(busyboxRecipe, 'passwd'), join(rootfs, 'etc/passwd'));
  await copyFile(join(busyboxRecipe, 'group'), join(rootfs, 'etc/group'));
  for (const d of ['tmp', 'root', 'home', 'var', 'proc', 'sys', 'dev', 'etc']) await mkdir(join(rootfs, d), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
}

/** The shared libraries a dynamic binary loads, from ldd (with the loader). */
async function lddClosure(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  const libs: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  return libs;
}

export const recipes: ImageRecipe[] = [
  {
    name: 'pause',
    repository: 'pause',
    tag: '3.10',
    reference: 'registry.k8s.io/pause:3.10',
    inputs: async () => [],
    async populate(rootfs, recipeDir) {
      // Upstream's pause image: one static binary, run as 65535.
      await run('gcc', ['-static', '-Os', '-s', '-o', join(rootfs, 'pause'), join(recipeDir, 'pause.c')]);
    },
    config: ['--config.entrypoint', '/pause', '--config.user', '65535:65535', '--config.workingdir', '/'],
  },
  {
    name: 'busybox',
    repository: 'library/busybox',
    tag: '1.35',
    aliasTags: ['latest'],
    reference: 'docker.io/library/busybox:1.35',
    inputs: async () => [busyboxBinary],
    populate: installBusybox,
    config: ['--config.cmd', 'sh', '--config.env', defaultPath],
  },
  {
    name: 'nginx',
    repository: 'library/nginx',
    tag: '1.22',
    aliasTags: ['latest'],
    reference: 'docker.io/library/nginx:1.22',
    inputs: async () => {
      if (!existsSync(nginxBinary)) throw new Error(`${nginxBinary} is missing: install Debian's nginx (scripts/install-deps.sh)`);
      return [busyboxBinary, nginxBinary, '/etc/nginx/mime.types', ...(await lddClosure(nginxBinary))];
    },
    async populate(rootfs, recipeDir) {
      // busybox gives /bin/sh and friends, so exec probes and hooks work as in upstream's image.
      await installBusybox(rootfs, recipeDir);
      for (const file of [nginxBinary, '/etc/nginx/mime.types', ...(await lddClosure(nginxBinary))]) {
        await mkdir(join(rootfs, dirname(file)), { recursive: true });
        await copyFile(file, join(rootfs, file));
      }
      await chmod(join(rootfs, nginxBinary), 0o755);
      await copyFile(join(recipeDir, 'nginx.conf'), join(rootfs, 'etc/nginx/nginx.conf'));
      await mkdir(join(rootfs, 'usr/share/nginx/html'), { recursive: true });
      await copyFile(join(recipeDir, 'index.html'), join(rootfs, 'usr/share/nginx/html/index.html'));
      for (const d of ['var/log/nginx', 'var/lib/nginx', 'var/cache/nginx', 'run']) await mkdir(join(rootfs, d), { recursive: true });
    },
    config: [
      '--config.cmd', 'nginx', '--config.cmd', '-g', '--config.cmd', 'daemon off;',
      '--config.exposedports', '80/tcp',
      '--config.stopsignal', 'SIGQUIT',
      '--config.env', defaultPath,
      '--config.env', 'NGINX_VERSION=1.22.1',
    ],
  },
];

async function hashFiles(h: ReturnType<typeof createHash>, files: string[]): Promise<void> {
  for (const f of files) {
    h.update(`${f}\0`);
    h.update(await readFile(f));
  }
}

async function recipeFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort().map((f) => join(dir, f));
}

/** The content key of a recipe: its code version, its folder's files and its inputs. */
export async function buildKey(recipe: ImageRecipe, dir = recipesDir()): Promise<string> {
  const h = createHash('sha256');
  h.update(`${recipeVersion}\0${recipe.name}\0${recipe.tag}\0${JSON.stringify(recipe.config)}\0`);
  await hashFiles(h, await recipeFiles(join(dir, recipe.name)));
  // nginx includes busybox's files; hashing them for every recipe is cheap and keeps this simple.
  await hashFiles(h, await recipeFiles(join(dir, 'busybox')));
  await hashFiles(h, await recipe.inputs());
  return h.digest('hex').slice(0, 16);
}

async function setEpoch(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await setEpoch(p);
    await lutimes(p, epoch, epoch);
  }
  await lutimes(dir, epoch, epoch);
}

/** Digest of the manifest tagged `tag` in an OCI layout. */
export async function layoutManifestDigest(layout: string, tag: string): Promise<string> {
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as {
    manifests?: { digest: string; annotations?: Record<string, string> }[];
  };
  const m = index.manifests?.find((d) => d.annotations?.['org.opencontainers.image.ref.name'] === tag);
  if (!m) throw new Error(`no tag ${tag} in ${layout}`);
  return m.digest;
}

/**
 * Builds the recipe into `cacheDir/<name>-<key>` unless that layout exists already. The layout is
 * built beside and renamed into place, so a crash never leaves a half-built image that looks done.
 */
export async function buildImage(recipe: ImageRecipe, cacheDir: string): Promise<BuiltImage> {
  const dir = recipesDir();
  const key = await buildKey(recipe, dir);
  const layout = join(cacheDir, `${recipe.name}-${key}`);
  if (!existsSync(join(layout, 'index.json'))) {
    await mkdir(cacheDir, { recursive: true });
    const work = await mkdtemp(join(cacheDir, `.build-${recipe.name}-`));
    try {
      const rootfs = join(work, 'rootfs');
      await mkdir(rootfs);
      await recipe.populate(rootfs, join(dir, recipe.name));
      await setEpoch(rootfs);
      const oci = join(work, 'oci');
      const image = `${oci}:${recipe.tag}`;
      const created = epoch.toISOString();
      await run('umoci', ['init', '--layout', oci]);
      await run('umoci', ['new', '--image', image]);
      await run('umoci', ['insert', '--image', image, '--history.created', created, '--history.created_by', `kite images ${recipe.name}`, rootfs, '/']);
      await run('umoci', ['config', '--image', image, '--created', created, '--history.created', created, '--history.created_by', `kite images ${recipe.name} config`, ...recipe.config]);
      await run('umoci', ['gc', '--layout', oci]);
      await rename(oci, layout);
      // Older builds of this recipe are garbage now.
      for (const f of await readdir(cacheDir)) {
        if (f.startsWith(`${recipe.name}-`) && f !== basename(layout)) await rm(join(cacheDir, f), { recursive: true, force: true });
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  return { recipe, layout, manifestDigest: await layoutManifestDigest(layout, recipe.tag) };
}
