// `--encryption-provider-config`: upstream's EncryptionConfiguration (apiserver.config.k8s.io/v1),
// YAML or JSON. Each entry names resources (`secrets`, `deployments.apps`, `*.apps`, `*.*`) and the
// providers for them, the first of which encrypts; a resource takes the first entry that names it.
// kms is refused: kite has no KMS plugin client.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { getOwn } from '../../util/own.js';
import { aescbc, aesgcm, aesKeySizes, identity, prefixTransformers, secretbox, type PrefixTransformer, type Transformer } from '../../storage/value/transformer.js';

const API_VERSION = 'apiserver.config.k8s.io/v1';
const KIND = 'EncryptionConfiguration';

/** The transformer of a group's resource, or undefined when it is stored in plain. */
export type TransformerFor = (group: string, resource: string) => Transformer | undefined;

interface Entry {
  readonly patterns: readonly string[];
  readonly transformer: Transformer;
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

function list(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v) || v.length === 0) throw new Error(`${path}: Required value: at least one is required`);
  return v;
}

function text(v: unknown, path: string): string {
  if (typeof v !== 'string' || v === '') throw new Error(`${path}: Required value`);
  return v;
}

/** One key of aescbc, aesgcm or secretbox: a name and a base64 secret of an allowed length. */
function keyOf(v: unknown, path: string, sizes: readonly number[]): { name: string; secret: Buffer } {
  if (!isObject(v)) throw new Error(`${path}: Invalid value: expected {name, secret}`);
  const name = text(getOwn(v, 'name'), `${path}.name`);
  if (name.includes(':')) throw new Error(`${path}.name: Invalid value: ${JSON.stringify(name)}: should not contain ':'`);
  const encoded = text(getOwn(v, 'secret'), `${path}.secret`);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) throw new Error(`${path}.secret: Invalid value: "REDACTED": secrets must be base64 encoded`);
  const secret = Buffer.from(encoded, 'base64');
  if (!sizes.includes(secret.length)) throw new Error(`${path}.secret: Invalid value: "REDACTED": secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`);
  return { name, secret };
}

const keyed: Record<string, { sizes: readonly number[]; make: (name: string, secret: Buffer) => PrefixTransformer }> = {
  aescbc: { sizes: aesKeySizes, make: aescbc },
  aesgcm: { sizes: aesKeySizes, make: aesgcm },
  secretbox: { sizes: [32], make: secretbox },
};

/** A provider entry: exactly one of aescbc, aesgcm, secretbox, identity; each key becomes one transformer. */
function providerOf(v: unknown, path: string): PrefixTransformer[] {
  if (!isObject(v)) throw new Error(`${path}: Invalid value: expected a provider`);
  const names = Object.keys(v);
  if (names.length !== 1) throw new Error(`${path}: Invalid value: ${JSON.stringify(names)}: more than one provider specified in a single element, should split into different list elements`);
  const [kind] = names as [string];
  if (kind === 'identity') return [identity];
  if (kind === 'kms') throw new Error(`${path}.kms: Forbidden: kms providers are not supported by kite (no KMS plugin client); use aescbc, aesgcm or secretbox`);
  const spec = getOwn(keyed, kind) as (typeof keyed)[string] | undefined;
  if (!spec) throw new Error(`${path}: Invalid value: unknown provider ${JSON.stringify(kind)}: expected aescbc, aesgcm, secretbox, identity or kms`);
  const config = getOwn(v, kind);
  if (!isObject(config)) throw new Error(`${path}.${kind}.keys: Required value`);
  return list(getOwn(config, 'keys'), `${path}.${kind}.keys`).map((k, i) => {
    const { name, secret } = keyOf(k, `${path}.${kind}.keys[${i}]`, spec.sizes);
    return spec.make(name, secret);
  });
}

/** Upstream's resource patterns: `secrets` (core), `NAME.GROUP`, `*.GROUP`, `*.` (all core) and `*.*`. */
function checkPattern(p: unknown, path: string): string {
  const s = text(p, path);
  if (s === '*') throw new Error(`${path}: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`);
  if (s.startsWith('*') && !s.startsWith('*.')) throw new Error(`${path}: Invalid value: ${JSON.stringify(s)}: resource name should not contain wildcards except as the first character`);
  return s;
}

/** Parses and checks an EncryptionConfiguration document. */
export function parseEncryptionConfiguration(source: string): TransformerFor {
  let doc: unknown;
  try {
    doc = parse(source);
  } catch (err) {
    // The YAML parser's message goes on to draw the spot over several lines: its first line says it.
    throw new Error(`error while parsing encryption provider configuration file: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  if (!isObject(doc)) throw new Error('error while parsing encryption provider configuration file: expected an EncryptionConfiguration object');
  if (getOwn(doc, 'kind') !== KIND || getOwn(doc, 'apiVersion') !== API_VERSION) {
    throw new Error(`error while parsing encryption provider configuration file: expected kind ${KIND} of apiVersion ${API_VERSION}`);
  }
  const entries: Entry[] = list(getOwn(doc, 'resources'), 'resources').map((r, i) => {
    if (!isObject(r)) throw new Error(`resources[${i}]: Invalid value: expected {resources, providers}`);
    const patterns = list(getOwn(r, 'resources'), `resources[${i}].resources`).map((p, j) => checkPattern(p, `resources[${i}].resources[${j}]`));
    const providers = list(getOwn(r, 'providers'), `resources[${i}].providers`).flatMap((p, j) => providerOf(p, `resources[${i}].providers[${j}]`));
    return { patterns, transformer: prefixTransformers(providers) };
  });
  return (group, resource) => entries.find((e) => e.patterns.some((p) => matches(p, group, resource)))?.transformer;
}

function matches(pattern: string, group: string, resource: string): boolean {
  if (pattern === '*.*') return true;
  const dot = pattern.indexOf('.');
  const [name, patternGroup] = dot < 0 ? [pattern, ''] : [pattern.slice(0, dot), pattern.slice(dot + 1)];
  return patternGroup === group && (name === '*' || name === resource);
}

export async function loadEncryptionConfiguration(path: string): Promise<TransformerFor> {
  return parseEncryptionConfiguration(await readFile(path, 'utf8'));
}
