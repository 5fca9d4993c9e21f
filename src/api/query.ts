// Query parameters as upstream's parameter codec converts them (apimachinery runtime/conversion.go),
// one pair for every boolean and integer option the API server and the kubelet read.

/** A present boolean: false only for "0" and any case of "false"; anything else (`True`, `yes`, ``) is true. */
export function queryBool(value: string): boolean {
  return !(value === '0' || value.toLowerCase() === 'false');
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(value, 10, 64); throws an Error with Go's message, which callers answer as a 400. */
export function queryInt64(value: string): number {
  if (!/^[+-]?\d+$/.test(value)) throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  const n = BigInt(value);
  if (n < int64Min || n > int64Max) throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  return Number(n);
}
