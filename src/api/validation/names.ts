// Name and string-format checks of apimachinery's util/validation, worded as upstream: each returns the
// list of problems (empty when valid), and callers turn each into a FieldError at their path.
import { invalid, type FieldError, type Path } from '../field.js';
import { labelValueErrors, qualifiedNameErrors } from '../labels.js';

export { labelValueErrors, qualifiedNameErrors };

export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
export const maxLenError = (n: number) => `must be no more than ${n} characters`;
export const inclusiveRangeError = (lo: number, hi: number) => `must be between ${lo} and ${hi}, inclusive`;
export const isNegativeErrorMsg = 'must be greater than or equal to 0';
export const fieldImmutableErrorMsg = 'field is immutable';

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain of valid length can only fail as a label because of its dots.
    errs.push(dns1123SubdomainRe.test(value) ? 'must not contain dots' : regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

const labelWithUnderscoreFmt = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const subdomainWithUnderscoreFmt = `${labelWithUnderscoreFmt}(\\.${labelWithUnderscoreFmt})*`;
const subdomainWithUnderscoreRe = new RegExp(`^${subdomainWithUnderscoreFmt}$`);

/** IsDNS1123SubdomainWithUnderscore. */
export function dns1123SubdomainWithUnderscoreErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!subdomainWithUnderscoreRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
        subdomainWithUnderscoreFmt,
        'example.com',
      ),
    );
  }
  return errs;
}

function dns1035LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

/** A name validator: `prefix` is true when checking a generateName, whose trailing '-' is allowed. */
export type NameValidator = (name: string, prefix: boolean) => string[];

// A generateName may end in '-' since random characters follow it.
const maskTrailingDash = (name: string) => (name.length > 1 && name.endsWith('-') ? `${name.slice(0, -1)}a` : name);

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => dns1123SubdomainErrors(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => dns1123LabelErrors(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => dns1035LabelErrors(prefix ? maskTrailingDash(name) : name);
/** path.ValidatePathSegmentName: what the generic registry checks of kinds without a name rule of their own. */
export const nameIsPathSegment: NameValidator = (name, prefix) => {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
};

export const portNumErrors = (port: number): string[] => (port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)]);

export function portNameErrors(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

function chDirPrefixErrors(value: string): string[] {
  if (value === '.') return [`must not be '.'`];
  if (value === '..') return [`must not be '..'`];
  if (value.startsWith('..')) return [`must not start with '..'`];
  return [];
}

/** IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is on by default in 1.33). */
export function envVarNameErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length === 0) errs.push('environment variable name must be non-empty');
  // Printable ASCII is ' ' through '~'.
  if (/[^ -~]|=/.test(value)) errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
  return errs;
}

const configMapKeyFmt = '[-._a-zA-Z0-9]+';
const configMapKeyRe = new RegExp(`^${configMapKeyFmt}$`);

export function configMapKeyErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!configMapKeyRe.test(value)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", configMapKeyFmt, 'key.name', 'KEY_NAME', 'key-name'));
  }
  return [...errs, ...chDirPrefixErrors(value)];
}

const percentFmt = '[0-9]+%';
export const percentErrors = (value: string): string[] =>
  new RegExp(`^${percentFmt}$`).test(value) ? [] : [regexError("a valid percent string must be a numeric string followed by an ending '%'", percentFmt, '1%', '93%')];

const httpHeaderNameFmt = "[-A-Za-z0-9]+";
export const httpHeaderNameErrors = (value: string): string[] =>
  new RegExp(`^${httpHeaderNameFmt}$`).test(value) ? [] : [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", httpHeaderNameFmt, 'X-Header-Name')];

// ---- IP addresses, as Go's net.ParseIP accepts them ----

const ipv4Re = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;

export const isIPv4 = (s: string): boolean => ipv4Re.test(s);

export function isIPv6(s: string): boolean {
  if (!s.includes(':')) return false;
  let rest = s;
  // An embedded IPv4 tail stands for two groups.
  const lastColon = rest.lastIndexOf(':');
  const tail = rest.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return false;
    rest = `${rest.slice(0, lastColon + 1)}0:0`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return false;
  const parts = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  if (!parts.every((p) => /^[0-9a-fA-F]{1,4}$/.test(p))) return false;
  return halves.length === 2 ? parts.length < 8 : parts.length === 8;
}

export const isIP = (s: string): boolean => isIPv4(s) || isIPv6(s);

/** validation.IsValidIP as a FieldError list. */
export const ipErrors = (p: Path, value: string): FieldError[] =>
  isIP(value) ? [] : [invalid(p, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];

/** A CIDR as Go's net.ParseCIDR accepts it. */
export function isCIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const ip = s.slice(0, i);
  const bits = s.slice(i + 1);
  if (!/^[0-9]{1,3}$/.test(bits)) return false;
  const n = Number(bits);
  return isIPv4(ip) ? n <= 32 : isIPv6(ip) && n <= 128;
}

/** A list of messages turned into Invalid errors at one path, the common shape of upstream's callers. */
export const invalidEach = (p: Path, value: unknown, msgs: string[]): FieldError[] => msgs.map((m) => invalid(p, value, m));
