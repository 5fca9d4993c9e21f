// One bounded pass over a JSON request body before it is parsed: the nesting depth, and the keys
// JSON.parse would silently collapse (upstream's strict decoder reports them as `duplicate field "…"`).
// The pass keeps one frame per open object or array and never recurses, whatever the input.

/**
 * The deepest nesting a body may have. Go's encoding/json stops at 10,000 levels; kite stops earlier
 * because V8 serializes and walks objects recursively (JSON.stringify overflows its stack a few thousand
 * levels down), and no Kubernetes object comes near this depth.
 */
export const maxNestingDepth = 1_000;

/** A body nested deeper than the bound; the message is Go's scanner's (`invalid character '{' exceeded max depth`). */
export class NestingDepthError extends Error {
  constructor(char: string) {
    super(`invalid character '${char}' exceeded max depth`);
  }
}

interface Frame {
  object: boolean;
  /** The frame's path from the root in upstream's strict-error spelling (`spec.containers[0]`). */
  path: string;
  keys?: Set<string>;
  expectKey: boolean;
  lastKey: string;
  index: number;
}

const childPath = (parent: string, key: string) => (parent ? `${parent}.${key}` : key);

/**
 * Scans `text` and returns the paths of duplicate keys in document order (`metadata.name`); throws
 * NestingDepthError past `maxDepth`. Malformed JSON is left for JSON.parse to report.
 */
export function scanJson(text: string, maxDepth = maxNestingDepth): string[] {
  const duplicates: string[] = [];
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 34 /* " */) {
      const start = i;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
      if (!top?.object || !top.expectKey) continue;
      let key: string;
      try {
        key = JSON.parse(text.slice(start, i + 1)) as string;
      } catch {
        return duplicates; // malformed: JSON.parse reports it
      }
      top.keys ??= new Set();
      if (top.keys.has(key)) duplicates.push(childPath(top.path, key));
      else top.keys.add(key);
      top.lastKey = key;
      top.expectKey = false;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (stack.length >= maxDepth) throw new NestingDepthError(text[i]!);
      const path = !top ? '' : top.object ? childPath(top.path, top.lastKey) : `${top.path}[${top.index}]`;
      stack.push({ object: c === 123, path, expectKey: c === 123, lastKey: '', index: 0 });
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      stack.pop();
    } else if (c === 44 /* , */ && top) {
      if (top.object) top.expectKey = true;
      else top.index++;
    }
  }
  return duplicates;
}

// The duplicate keys of each decoded body, by its root object: decoding happens in the HTTP layer, the
// strict checks that report them later (decode.ts, the patch handler).
const duplicatesByBody = new WeakMap<object, readonly string[]>();

export function recordDuplicateFields(body: unknown, duplicates: readonly string[]): void {
  if (duplicates.length > 0 && typeof body === 'object' && body !== null) duplicatesByBody.set(body, duplicates);
}

/** The duplicate keys the body decoded into `body` carried, as paths. */
export function duplicateFields(body: unknown): readonly string[] {
  return (typeof body === 'object' && body !== null && duplicatesByBody.get(body)) || [];
}

/** The depth of a decoded value, without recursion (YAML nests by indentation, which no text scan sees). */
export function nestingDepth(value: unknown, maxDepth = maxNestingDepth): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const d = depth + 1;
    if (d > deepest) deepest = d;
    if (d > maxDepth) return d;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d]);
  }
  return deepest;
}
