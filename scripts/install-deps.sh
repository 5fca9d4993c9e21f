#!/usr/bin/env bash
# Installs what kite's tests and cluster need from Debian's packages, only when missing.
# Runs as root on the project's machines; idempotent.
set -euo pipefail

need=()
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
# The node's runtime: containerd + runc, the CNI plugins, and what the local images are built from
# (busybox-static, nginx) and served by (docker-registry, pushed with umoci + skopeo).
# python3-kubernetes: the official Python client, which the e2e tests drive as a non-Go client does.
# nftables: the node's service proxy and network policy; dnsutils (dig, nslookup) and curl: the Service tests.
# chromium: the web console's test drives it headless through playwright-core.
# util-linux (essential, named for its chrt): the pod timelines' process sets its idle CPU policy with it.
for pkg in containerd runc containernetworking-plugins docker-registry busybox-static nginx umoci skopeo python3-kubernetes nftables dnsutils curl chromium util-linux; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || need+=("$pkg")
done

if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # Packages with daemons (nginx, docker-registry, containerd) must not start them: kite runs its own
  # on loopback. invoke-rc.d asks policy-rc.d, and 101 means "not allowed".
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=1
  fi
  trap 'if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi' EXIT
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# Whatever the packaging did, none of their daemons may stay up (nginx listens on 0.0.0.0:80).
for daemon in nginx docker-registry; do
  for pidfile in /run/$daemon.pid /run/$daemon/$daemon.pid; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
done
if command -v ss >/dev/null 2>&1 && ss -ltnp 2>/dev/null | grep -E '"(nginx|docker-registry)"' | grep -vE '127\.0\.0\.1:|\[::1\]:' >&2; then
  echo "a packaged daemon is listening beyond loopback (above): stop it" >&2
  exit 1
fi

# The end-to-end tests drive the real kubectl, which this kind of machine ships (the dispatcher that
# runs kubectl 1.33 against a server reporting minor 33); Debian's own is far too old.
command -v kubectl >/dev/null 2>&1 || { echo "kubectl is missing: the e2e tests need the machine's kubectl" >&2; exit 1; }
