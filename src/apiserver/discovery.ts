// Discovery documents, derived from the resources of the group versions the router serves (stored
// and aggregated alike, in registration order): the aggregated form kubectl asks for first (its
// Content-Type must be exact), and the legacy APIVersions / APIGroupList / APIResourceList.
import type { ResourceInfo } from '../api/resources.js';
import { apiVersionOf } from '../api/meta.js';

export function aggregatedContentType(version: 'v2' | 'v2beta1'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

function discoveryResource(r: ResourceInfo) {
  return {
    resource: r.resource,
    responseKind: { group: r.group, version: r.version, kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: r.verbs,
    ...(r.shortNames ? { shortNames: r.shortNames } : {}),
    ...(r.categories ? { categories: r.categories } : {}),
    ...(r.subresources.length
      ? {
          subresources: r.subresources.map((s) => ({
            subresource: s.name,
            responseKind: { group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind },
            verbs: s.verbs,
          })),
        }
      : {}),
  };
}

function groupsOf(core: boolean, resources: readonly ResourceInfo[]): { group: string; versions: string[] }[] {
  const out = new Map<string, string[]>();
  for (const gv of resources) {
    if ((gv.group === '') !== core) continue;
    const list = out.get(gv.group) ?? [];
    if (!list.includes(gv.version)) list.push(gv.version);
    out.set(gv.group, list);
  }
  return [...out].map(([group, versions]) => ({ group, versions }));
}

/** The body of /api (core) or /apis (named groups) as an APIGroupDiscoveryList. */
export function aggregatedDiscovery(core: boolean, version: 'v2' | 'v2beta1', resources: readonly ResourceInfo[]): unknown {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groupsOf(core, resources).map(({ group, versions }) => ({
      metadata: group ? { name: group, creationTimestamp: null } : { creationTimestamp: null },
      versions: versions.map((v) => ({
        version: v,
        resources: resources.filter((r) => r.group === group && r.version === v).map(discoveryResource),
        freshness: 'Current',
      })),
    })),
  };
}

export function apiVersions(serverAddress: string): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(group: string, versions: string[]) {
  const vs = versions.map((v) => ({ groupVersion: apiVersionOf(group, v), version: v }));
  return { name: group, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(resources: readonly ResourceInfo[]): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groupsOf(false, resources).map((g) => apiGroup(g.group, g.versions)) };
}

export function apiGroupDoc(group: string, resources: readonly ResourceInfo[]): unknown | undefined {
  const g = groupsOf(false, resources).find((x) => x.group === group);
  return g && { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g.group, g.versions) };
}

export function apiResourceList(group: string, version: string, resources: readonly ResourceInfo[]): unknown | undefined {
  const rs = resources.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const list: unknown[] = [];
  for (const r of rs) {
    list.push({
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      ...(r.categories ? { categories: r.categories } : {}),
    });
    for (const s of r.subresources) {
      list.push({
        name: `${r.resource}/${s.name}`,
        singularName: '',
        namespaced: r.namespaced,
        ...(s.group !== undefined ? { group: s.group, version: s.version } : {}),
        kind: s.kind,
        verbs: s.verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources: list };
}
