// Accept and Content-Type negotiation: JSON, YAML, server-side Tables and partial object metadata.
// Protobuf is never produced; clients that list it first also accept JSON.
import { badRequest, notAcceptable } from '../../api/errors.js';
import { fieldErrorMessage, invalid, Path } from '../../api/field.js';
import type { IncludeObject } from '../printers/table.js';

export type OutputKind = 'object' | 'table' | 'partial';

export interface Output {
  kind: OutputKind;
  yaml: boolean;
  /** A Table's TableOptions (set by tableOptions). */
  includeObject?: IncludeObject;
}

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

export function parseMediaRanges(header: string | undefined): MediaRange[] {
  if (!header) return [];
  return header.split(',').map((part) => {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const i = p.indexOf('=');
      if (i > 0) params[p.slice(0, i).trim()] = p.slice(i + 1).trim();
    }
    return { type: (type ?? '').toLowerCase(), params };
  });
}

const acceptedText =
  'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

/**
 * The ranges in goautoneg.ParseAccept's order: higher q first (an unparsable q is 0), then concrete
 * types before wildcards, else as sent. A q of 0 is not a refusal there: it only sorts last.
 */
function byPreference(ranges: MediaRange[]): MediaRange[] {
  const q = (r: MediaRange) => (r.params.q === undefined ? 1 : Number.parseFloat(r.params.q) || 0);
  const wild = (r: MediaRange) => (r.type.startsWith('*') ? 2 : 0) + (r.type.endsWith('*') ? 1 : 0);
  return ranges.map((r) => ({ r, q: q(r), w: wild(r) })).sort((a, b) => b.q - a.q || a.w - b.w).map((x) => x.r);
}

/** Picks the first acceptable rendering in the client's order of preference. */
export function negotiateOutput(accept: string | undefined, allowTable: boolean): Output {
  const ranges = byPreference(parseMediaRanges(accept));
  if (ranges.length === 0) return { kind: 'object', yaml: false };
  for (const r of ranges) {
    // A bare `*` is `*/*` to goautoneg.
    const json = r.type === 'application/json' || r.type === '*/*' || r.type === '*' || r.type === 'application/*';
    const yaml = r.type === 'application/yaml';
    if (!json && !yaml) continue;
    const as = r.params.as;
    if (!as) return { kind: 'object', yaml };
    if (r.params.g !== 'meta.k8s.io' || (r.params.v !== 'v1' && r.params.v !== 'v1beta1')) continue;
    if (as === 'Table' && allowTable) return { kind: 'table', yaml };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { kind: 'partial', yaml };
  }
  throw notAcceptable(acceptedText);
}

/**
 * The TableOptions of a Table answer, checked as upstream's ValidateTableOptions checks them. Upstream
 * reads them only when it renders the answer, after a write; kite reads them first so an error answer
 * never follows a write that was done.
 */
export function tableOptions(output: Output, query: URLSearchParams): Output {
  if (output.kind !== 'table') return output;
  const v = query.get('includeObject') ?? '';
  if (v === '' || v === 'None' || v === 'Metadata' || v === 'Object') return { ...output, includeObject: v || 'Metadata' };
  const err = invalid(Path.root('includeObject'), v, "must be 'Metadata', 'Object', 'None', or empty");
  throw badRequest(`Unable to convert to Table as requested: ${fieldErrorMessage(err)}`);
}

/** Whether the client asked for aggregated discovery (and which version of it). */
export function wantsAggregatedDiscovery(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const r of parseMediaRanges(accept)) {
    if (r.type !== 'application/json' || r.params.g !== 'apidiscovery.k8s.io' || r.params.as !== 'APIGroupDiscoveryList') continue;
    if (r.params.v === 'v2' || r.params.v === 'v2beta1') return r.params.v;
  }
  return undefined;
}

export type BodyFormat = 'json' | 'yaml';
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
