#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Prints the directory of a configured fio source tree that matches the installed fio exactly,
# fetching it first if needed. The fio ioengine (plugins/fio) is compiled against it: fio ships
# no headers, and an engine built against other headers is rejected ("bad ioops version") or
# worse, misreads fio's structs.
#
#   scripts/fio-source.sh            -> prints e.g. /root/.cache/unvme/fio-3.33-3
#
# Steps, each skipped when already done (so a second run is instant and offline):
#   1. the installed fio's Debian version (dpkg) and its own version string (fio --version);
#   2. a deb-src line: /etc/apt/sources.list.d/unvme-fio-src.sources, derived from the existing
#      deb822 *.sources files by changing "Types: deb" to "Types: deb-src" (no host is invented),
#      then apt-get update;
#   3. apt-get source fio=<version> (dpkg-dev unpacks it) into a temporary directory;
#   4. ./configure --disable-native (writes config-host.h), then the tree moves into the cache
#      ($UNVME_FIO_CACHE, else $XDG_CACHE_HOME/unvme, else ~/.cache/unvme) under an atomic rename.
#
# Exit status: 0 and the path on stdout; 1 and one line on stderr saying what is wrong.
set -euo pipefail

die() { echo "fio-source: $*" >&2; exit 1; }

command -v fio >/dev/null 2>&1 || die "fio is not installed (apt-get install fio)"
deb_ver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null) ||
  die "fio is not a Debian package here; build the engine against its source by hand"
fio_ver=$(fio --version 2>/dev/null | head -n1)   # "fio-3.33"
upstream=${deb_ver#*:}
upstream=${upstream%-*}                             # 3.33-3 -> 3.33
[ "$fio_ver" = "fio-$upstream" ] ||
  die "the fio on PATH ($(command -v fio): $fio_ver) is not the Debian package fio $deb_ver"

cache=${UNVME_FIO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unvme}
dest="$cache/fio-$deb_ver"
if [ -f "$dest/.unvme-ready" ] && [ -f "$dest/config-host.h" ] && [ -f "$dest/ioengines.h" ]; then
  echo "$dest"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot add a deb-src line"
  SUDO="sudo"
fi

# dpkg-source (dpkg-dev) unpacks the source package.
if ! command -v dpkg-source >/dev/null 2>&1; then
  echo "fio-source: installing dpkg-dev" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >&2 ||
    die "cannot install dpkg-dev"
fi

# (no grep -q in a pipe: under pipefail its early exit would fail apt-cache with SIGPIPE)
have_src() { [ -n "$(apt-cache showsrc fio 2>/dev/null | sed -n "/^Version: ${deb_ver//./\\.}\$/p")" ]; }
if ! have_src; then
  srcfile=/etc/apt/sources.list.d/unvme-fio-src.sources
  if [ ! -f "$srcfile" ]; then
    tmp=$(mktemp)
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -e "$f" ] || continue
      case "$f" in "$srcfile") continue ;; esac
      # Only stanzas of type deb; each becomes a deb-src stanza with the same URIs and keys.
      awk 'BEGIN { RS = ""; ORS = "\n\n" }
           /(^|\n)Types:[ \t]*deb([ \t]|\n|$)/ { sub(/Types:[ \t]*deb/, "Types: deb-src"); print }' "$f" >>"$tmp"
    done
    if [ ! -s "$tmp" ] && [ -f /etc/apt/sources.list ]; then
      # One-line format: "deb URI suite comps" -> "deb-src URI suite comps".
      sed -n 's/^[ \t]*deb[ \t]/deb-src /p' /etc/apt/sources.list >"$tmp.list"
      if [ -s "$tmp.list" ]; then
        srcfile=/etc/apt/sources.list.d/unvme-fio-src.list
        $SUDO install -m 0644 "$tmp.list" "$srcfile"
      fi
      rm -f "$tmp.list"
    elif [ -s "$tmp" ]; then
      $SUDO install -m 0644 "$tmp" "$srcfile"
    fi
    rm -f "$tmp"
    [ -f "$srcfile" ] || [ -f "${srcfile%.sources}.list" ] ||
      die "no 'Types: deb' entry under /etc/apt/sources.list.d to derive a deb-src line from"
    echo "fio-source: added deb-src entries in $srcfile" >&2
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
  have_src || die "no source package for fio $deb_ver in the configured archives"
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/.fio-src.XXXXXX")
chmod 755 "$work"   # apt-get source downloads as _apt when it can write here
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -qq "fio=$deb_ver" >&2) || die "apt-get source fio=$deb_ver failed"
tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'fio-*' | head -n1)
[ -n "$tree" ] && [ -f "$tree/ioengines.h" ] || die "apt-get source fio gave no fio tree"
(cd "$tree" && ./configure --disable-native >"$work/configure.log" 2>&1) ||
  die "fio's ./configure failed (see a rerun of $tree/configure)"
[ -f "$tree/config-host.h" ] || die "fio's ./configure wrote no config-host.h"
# The version this tree is: the engine compares it with the running fio at load time.
echo "fio-$upstream" >"$tree/.unvme-fio-version"
touch "$tree/.unvme-ready"
rm -rf "$dest"
mv "$tree" "$dest"
echo "$dest"
