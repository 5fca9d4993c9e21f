// Keys that come from requests are data. A plain object inherits `__proto__` (an accessor that swaps
// the object's prototype), `constructor`, `toString` and the rest from Object.prototype, so reading
// `obj[key]` may return something the request never sent and writing `obj['__proto__']` reparents the
// object (or, merged into, pollutes Object.prototype itself). Every walk over request data reads and
// writes its keys through these two helpers.

/** The value `obj` itself holds under `key`; undefined for inherited or absent keys. */
export function getOwn(obj: object, key: string): unknown {
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** Stores `value` under `key` as an own, enumerable data property, whatever the key. */
export function setOwn(obj: object, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else (obj as Record<string, unknown>)[key] = value;
}
