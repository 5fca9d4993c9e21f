// A small flag parser for the kite commands: --name value, --name=value and boolean --flag.
export interface ParsedArgs {
  flags: Map<string, string>;
  positional: string[];
}

export function parseArgs(argv: string[], booleans: readonly string[] = []): ParsedArgs {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (eq > 0) flags.set(name, arg.slice(eq + 1));
    else if (booleans.includes(name)) flags.set(name, 'true');
    else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`flag --${name} needs a value`);
      flags.set(name, value);
      i++;
    }
  }
  return { flags, positional };
}

/** Throws on flags the command does not know, so typos are not silently ignored. */
export function checkFlags(args: ParsedArgs, known: readonly string[]): void {
  for (const name of args.flags.keys()) if (!known.includes(name)) throw new Error(`unknown flag: --${name}`);
}
