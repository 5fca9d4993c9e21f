// Builds the web console (console/) into dist/console: one script and one stylesheet bundled by
// esbuild under content-hashed names in assets/, and index.html naming them. The API server serves
// this folder at /ui/ (src/apiserver/console).
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'console');

await rm(out, { recursive: true, force: true });
await mkdir(join(out, 'assets'), { recursive: true });
const result = await build({
  entryPoints: [join(root, 'console', 'src', 'main.tsx'), join(root, 'console', 'src', 'style.css')],
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  metafile: true,
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).filter((f) => !f.endsWith('.map'));
const script = outputs.find((f) => f.endsWith('.js'));
const style = outputs.find((f) => f.endsWith('.css'));
if (!script || !style) throw new Error(`the console build wrote no script or stylesheet: ${outputs.join(', ')}`);
const html = (await readFile(join(root, 'console', 'index.html'), 'utf8')).replace('%SCRIPT%', `assets/${basename(script)}`).replace('%STYLE%', `assets/${basename(style)}`);
await writeFile(join(out, 'index.html'), html);
console.log(`console built into ${out}`);
