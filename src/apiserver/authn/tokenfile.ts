// Static bearer tokens from a CSV file, as upstream's --token-auth-file:
//   token,user,uid[,"group1,group2"]
import type { IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import { authenticationFailed, type Authenticator } from './authenticator.js';
import type { UserInfo } from './user.js';

export class TokenFileAuthenticator implements Authenticator {
  constructor(private readonly tokens: ReadonlyMap<string, UserInfo>) {}

  static async load(path: string): Promise<TokenFileAuthenticator> {
    return new TokenFileAuthenticator(parseTokenFile(await readFile(path, 'utf8'), path));
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const token = bearerToken(req);
    if (token === undefined) return undefined;
    const user = this.tokens.get(token);
    if (!user) throw authenticationFailed('invalid bearer token');
    return { ...user, groups: [...user.groups] };
  }
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), else undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const parts = (req.headers.authorization ?? '').trim().split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer' || parts[1] === '') return undefined;
  return parts[1];
}

/** Parses the token file; source names it in errors. Rows with an empty token are skipped, a repeated token keeps its last row. */
export function parseTokenFile(text: string, source: string): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  for (const record of parseCsv(text, source)) {
    if (record.length < 3) {
      throw new Error(`token file '${source}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    }
    const [token, name, uid, groups] = record as [string, string, string, string?];
    if (token === '') continue;
    tokens.set(token, { name, uid, groups: groups === undefined ? [] : groups.split(',') });
  }
  return tokens;
}

/** RFC 4180 records as Go's encoding/csv reads them: quoted fields with "" escapes, blank lines skipped. */
function parseCsv(text: string, source: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    if (record.length > 1 || record[0] !== '') records.push(record);
    record = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRecord();
    } else {
      field += c;
    }
    i++;
  }
  if (quoted) throw new Error(`token file '${source}': unterminated quoted field`);
  if (field !== '' || record.length > 0) endRecord();
  return records;
}
