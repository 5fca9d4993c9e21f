#!/usr/bin/env bash
# The whole suite on a fresh machine: dependencies, build (type-check), lint, then every test
# (unit and end-to-end, the real kubectl and etcd included) in one node:test run.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
npx eslint .
# One runner, one summary; e2e tests need the build above.
tests=$(find src test -name '*.test.ts' | sort)
node --import tsx --test --test-concurrency=1 $tests
