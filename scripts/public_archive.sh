#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds the installed libunvme.a so that it exports only the public API, as libunvme.so does.
# The library's pieces are compiled with -fvisibility=hidden and the API marked UNVME_API, but
# visibility means nothing to a static link: every internal function (qpair_free, ...) would
# still be a global symbol that clashes with the program's own. So the pieces are linked into
# one relocatable object (ld -r), every hidden symbol in it is made local (objcopy
# --localize-hidden), and that single object becomes the archive.
#
#   public_archive.sh LD OBJCOPY AR OUTPUT PIECE.a...
set -eu
LD=$1 OBJCOPY=$2 AR=$3 OUT=$4
shift 4
tmp="$OUT.tmp.o"
rm -f "$tmp" "$OUT"
"$LD" -r -o "$tmp" --whole-archive "$@" --no-whole-archive
"$OBJCOPY" --localize-hidden "$tmp"
"$AR" rcs "$OUT" "$tmp"
rm -f "$tmp"
