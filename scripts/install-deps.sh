#!/usr/bin/env bash
# Installs every Debian package (and PyPI test tool) the project needs. Idempotent and
# non-interactive: it only calls apt-get when something is missing, so a second run is instant.
set -euo pipefail

PKGS=(build-essential meson ninja-build pkg-config libjson-c-dev liburing-dev python3 python3-pip fio)
# Each part of the project that needs more (the fio engine, the QEMU rig, the benchmarks) lists
# its Debian packages in scripts/deps.d/<part>.txt, one per line, '#' for comments.
for f in "$(dirname "$0")"/deps.d/*.txt; do
  [ -e "$f" ] || continue
  while read -r p _; do
    case "$p" in ''|'#'*) ;; *) PKGS+=("$p") ;; esac
  done < "$f"
done

# one dpkg-query for all of them: every make target runs this, so it must cost nothing
declare -A installed=()
while read -r name state; do
  [ "$state" = "install ok installed" ] && installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null || true)
missing=()
for p in "${PKGS[@]}"; do
  [ -n "${installed[$p]:-}" ] || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# pytest drives the integration tests; the python3 on PATH may not be Debian's.
if ! python3 -c 'import pytest' 2>/dev/null; then
  echo "install-deps: installing pytest"
  python3 -m pip install --quiet pytest 2>/dev/null || python3 -m pip install --quiet --break-system-packages pytest
fi
