// Image references as the kubelet reads them (distribution/reference's ParseNormalizedNamed behind
// kubelet's parsers.ParseImageName): the grammar, docker.io normalization, and the default tag.

const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const domainAndPort = `${host}(?::[0-9]+)?`;
const name = `(?:${domainAndPort}/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const referenceRe = new RegExp(`^(${name})(?::(${tag}))?(?:@(${digest}))?$`);
const identifierRe = /^[a-f0-9]{64}$/;

const NAME_TOTAL_LENGTH_MAX = 255;
export const DEFAULT_DOMAIN = 'docker.io';

export interface ImageReference {
  /** The normalized repository, e.g. docker.io/library/busybox. */
  repository: string;
  /** The registry host (and port). */
  domain: string;
  tag: string;
  digest: string;
}

/** A reference that does not parse; the message is upstream's ("couldn't parse image name ..."). */
export class InvalidImageNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidImageNameError';
  }
}

function splitDomain(n: string): { domain: string; remainder: string } {
  const i = n.indexOf('/');
  const first = n.slice(0, i);
  if (i < 0 || (!/[.:]/.test(first) && first !== 'localhost' && first.toLowerCase() === first)) {
    return { domain: DEFAULT_DOMAIN, remainder: n };
  }
  return { domain: first, remainder: n.slice(i + 1) };
}

function parseNormalized(s: string): ImageReference {
  if (identifierRe.test(s)) throw new Error(`invalid repository name (${s}), cannot specify 64-byte hexadecimal strings`);
  const { domain, remainder } = splitDomain(s);
  // Official images live under library/ (docker.io/library/busybox).
  const path = domain === DEFAULT_DOMAIN && !s.includes('/') ? `library/${remainder}` : remainder;
  const remoteName = path.split(':', 1)[0]!;
  if (remoteName.toLowerCase() !== remoteName) throw new Error(`invalid reference format: repository name (${remoteName}) must be lowercase`);
  const m = referenceRe.exec(`${domain}/${path}`);
  if (!m) {
    if (s === '') throw new Error('repository name must have at least one component');
    throw new Error('invalid reference format');
  }
  if (m[1]!.length > NAME_TOTAL_LENGTH_MAX) throw new Error(`repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`);
  return { repository: m[1]!, domain, tag: m[2] ?? '', digest: m[3] ?? '' };
}

/** parsers.ParseImageName: the tag defaults to "latest" when there is neither tag nor digest. */
export function parseImageName(image: string): ImageReference {
  let ref: ImageReference;
  try {
    ref = parseNormalized(image);
  } catch (err) {
    throw new InvalidImageNameError(`couldn't parse image name ${JSON.stringify(image)}: ${(err as Error).message}`);
  }
  if (!ref.tag && !ref.digest) ref.tag = 'latest';
  return ref;
}

/** applyDefaultImageTag: "busybox" → "busybox:latest"; references with a tag or digest are unchanged. */
export function applyDefaultImageTag(image: string): string {
  const ref = parseImageName(image);
  if (!ref.digest && ref.tag && !image.endsWith(`:${ref.tag}`)) return `${image}:${ref.tag}`;
  return image;
}
