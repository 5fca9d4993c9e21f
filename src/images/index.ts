// `kite images`: build the node's local images (pause, busybox, nginx) and push the missing ones
// into the local registry, where containerd's hosts.toml sends pulls of their references.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildImage, recipes, type BuiltImage } from './build.js';
import { Registry } from './registry.js';

export { buildImage, recipes, type BuiltImage, type ImageRecipe } from './build.js';
export { Registry, freeLoopbackPort, type RegistryConfig } from './registry.js';

const run = promisify(execFile);

export interface EnsureImagesOptions {
  /** Built OCI layouts are kept here, keyed by their inputs. */
  cacheDir: string;
  /** A started registry. */
  registry: Pick<Registry, 'host' | 'manifestDigest'>;
  /** Which recipes (all by default). */
  only?: string[];
}

export interface EnsuredImage {
  reference: string;
  /** Where the registry serves it, e.g. 127.0.0.1:5000/library/busybox:1.35. */
  pushedAs: string;
  manifestDigest: string;
  pushed: boolean;
}

/** Copies a built layout into the registry as `tag`, keeping its manifest byte for byte (and so its digest). */
export async function pushImage(image: BuiltImage, registryHost: string, tag = image.recipe.tag): Promise<void> {
  const { layout, recipe } = image;
  await run('skopeo', [
    '--insecure-policy', 'copy', '--quiet', '--preserve-digests', '--dest-tls-verify=false',
    `oci:${layout}:${recipe.tag}`, `docker://${registryHost}/${recipe.repository}:${tag}`,
  ]);
}

/** Builds what is not in the cache and pushes what the registry lacks (or holds in another build). */
export async function ensureImages(opts: EnsureImagesOptions): Promise<EnsuredImage[]> {
  const out: EnsuredImage[] = [];
  for (const recipe of recipes.filter((r) => !opts.only || opts.only.includes(r.name))) {
    const image = await buildImage(recipe, opts.cacheDir);
    let pushed = false;
    for (const tag of [recipe.tag, ...(recipe.aliasTags ?? [])]) {
      if ((await opts.registry.manifestDigest(recipe.repository, tag)) === image.manifestDigest) continue;
      await pushImage(image, opts.registry.host, tag);
      pushed = true;
    }
    out.push({ reference: recipe.reference, pushedAs: `${opts.registry.host}/${recipe.repository}:${recipe.tag}`, manifestDigest: image.manifestDigest, pushed });
  }
  return out;
}

/**
 * The `kite images` command: starts (or adopts) the registry under dataDir, ensures the images,
 * prints one line per image, and leaves the registry running for containerd to pull from.
 */
export async function imagesCommand(opts: { dataDir: string; cacheDir: string; port?: number }, print: (line: string) => void = console.log): Promise<Registry> {
  const registry = new Registry({ dataDir: opts.dataDir, port: opts.port });
  await registry.start();
  for (const img of await ensureImages({ cacheDir: opts.cacheDir, registry })) {
    print(`${img.reference}\t${img.pushedAs}@${img.manifestDigest}\t${img.pushed ? 'pushed' : 'up to date'}`);
  }
  return registry;
}
