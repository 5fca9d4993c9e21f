// A small flag parser for the kite commands: --name value, --name=value and boolean --flag.
export interface ParsedArgs {
  /** Each flag's last value. */
  flags: Map<string, string>;
  /** Every value of each flag, in order (a repeatable flag such as --group). */
  repeated: Map<string, string[]>;
  positional: string[];
}

export function parseArgs(argv: string[], booleans: readonly string[] = []): ParsedArgs {
  const flags = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const set = (name: string, value: string) => {
    flags.set(name, value);
    repeated.set(name, [...(repeated.get(name) ?? []), value]);
  };
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (eq > 0) set(name, arg.slice(eq + 1));
    else if (booleans.includes(name)) set(name, 'true');
    else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`flag --${name} needs a value`);
      set(name, value);
      i++;
    }
  }
  return { flags, repeated, positional };
}

/** Throws on flags the command does not know, so typos are not silently ignored. */
export function checkFlags(args: ParsedArgs, known: readonly string[]): void {
  for (const name of args.flags.keys()) if (!known.includes(name)) throw new Error(`unknown flag: --${name}`);
}
