// Who made a request, as upstream's user.Info.

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const anonymousUser: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

export function isAnonymous(u: UserInfo): boolean {
  return u.name === anonymousUser.name;
}
