#!/usr/bin/env bash
# `npm start`: installs and builds what is missing, then brings up a cluster on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build
# The kubectl plugins (kubectl timeline, kubectl why) are bin/kubectl-*: on PATH, kubectl finds them.
chmod +x bin/kubectl-*
echo "kubectl plugins: export PATH=$PWD/bin:\$PATH   # then: kubectl timeline POD, kubectl why POD"
exec node dist/src/cli/main.js up --data-dir "${KITE_DATA_DIR:-.data}" "$@"
