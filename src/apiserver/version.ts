// /version: minor "33" makes the kubectl dispatcher on these machines run kubectl 1.33.
import { existsSync, readFileSync } from 'node:fs';

/** kite's own package.json, found upward from this file (it runs from src/ under tsx and from dist/ when built). */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); dir.pathname !== '/'; dir = new URL('..', dir)) {
    const file = new URL('package.json', dir);
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  throw new Error('package.json not found');
}

const version = packageVersion();

export const kubernetesVersion = { major: '1', minor: '33', patch: '0' };

export function versionInfo() {
  return {
    major: kubernetesVersion.major,
    minor: kubernetesVersion.minor,
    gitVersion: `v${kubernetesVersion.major}.${kubernetesVersion.minor}.${kubernetesVersion.patch}+kite.${version}`,
    gitCommit: 'kite',
    gitTreeState: 'clean',
    buildDate: '2026-11-29T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
