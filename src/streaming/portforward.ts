// Port numbers as both ends of port-forward parse them: the API server's PodPortForwardOptions
// conversion and the kubelet's WebSocket options use Go's strconv.ParseUint(s, 10, 16).

/** strconv.ParseUint(s, 10, 16); throws with Go's error text. */
export function parseUint16(s: string): number {
  if (!/^[0-9]+$/.test(s)) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = Number(s);
  if (n > 0xffff) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}
