// How the kite command reports a failure on stderr: an error the user can act on (a bad flag, a
// missing file, a refused request, a template that does not fit) is one line, `error: <message>`;
// a programming error (a TypeError or the like that no system call raised) keeps its stack.

const BUG_TYPES = [TypeError, ReferenceError, RangeError];

/** Whether err is a bug in kite rather than something the user can fix. */
function isBug(err: Error): boolean {
  // Node's own argument and system errors (ERR_*, ENOENT...) carry a code: those are about the input.
  return BUG_TYPES.some((t) => err instanceof t) && (err as { code?: unknown }).code === undefined;
}

/** The text to print for a failure, ending in a newline. */
export function failureText(err: unknown): string {
  if (err instanceof Error && isBug(err)) return `error: ${err.stack ?? err.message}\n`;
  const message = err instanceof Error ? err.message : String(err);
  // Multi-line messages (a YAML parser's excerpt of the bad line) keep their first line.
  const line = message.split('\n').find((l) => l.trim() !== '') ?? message;
  return `error: ${line.trim()}\n`;
}
