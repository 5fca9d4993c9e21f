#!/usr/bin/env bash
# Installs what kite's tests and cluster need from Debian's packages, only when missing.
# Runs as root on the project's machines; idempotent.
set -euo pipefail

need=()
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)

if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# The end-to-end tests drive the real kubectl, which this kind of machine ships (the dispatcher that
# runs kubectl 1.33 against a server reporting minor 33); Debian's own is far too old.
command -v kubectl >/dev/null 2>&1 || { echo "kubectl is missing: the e2e tests need the machine's kubectl" >&2; exit 1; }
