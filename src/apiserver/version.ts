// /version: minor "33" makes the kubectl dispatcher on these machines run kubectl 1.33.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

export const kubernetesVersion = { major: '1', minor: '33', patch: '0' };

export function versionInfo() {
  return {
    major: kubernetesVersion.major,
    minor: kubernetesVersion.minor,
    gitVersion: `v${kubernetesVersion.major}.${kubernetesVersion.minor}.${kubernetesVersion.patch}+kite.${pkg.version}`,
    gitCommit: 'kite',
    gitTreeState: 'clean',
    buildDate: '2026-11-29T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
