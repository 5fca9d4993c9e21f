// api/timeline/why.ts reaches api/validation/meta.ts through api/quota; only the server runs its
// validateAnnotations, which counts bytes with Node's Buffer. The console never calls it: this
// names the global for the type-checker only (no polyfill is bundled).
declare const Buffer: { byteLength(text: string): number };
