#!/usr/bin/env bash
# uNVMe in one minute, with no NVMe hardware: an emulated controller speaking the real NVMe
# protocol to the user-space driver, driven by the `unvme` tool.
#   scripts/demo.sh            (after building; `make demo` does both)
# The build directory is $BUILD (default: build); installed, it runs the unvme on PATH.
# Device state goes to $UNVME_STATE_DIR, or a temporary directory removed at the end, so the
# demo never touches anything else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
# $UNVME, else the built tool, else (the demo installed by the unvme-tools package, as
# /usr/share/unvme/demo.sh) the unvme on PATH
if [ -z "${UNVME:-}" ]; then
  UNVME="$BUILD/tools/unvme/unvme"
  if [ ! -x "$UNVME" ] && command -v unvme >/dev/null 2>&1; then
    UNVME="$(command -v unvme)"
  fi
fi
if [ ! -x "$UNVME" ]; then
  echo "demo: $UNVME is not built; run 'make' first (or set BUILD to the build directory)" >&2
  exit 1
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/unvme-demo.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
if [ -z "${UNVME_STATE_DIR:-}" ]; then
  export UNVME_STATE_DIR="$WORK/state"
fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ unvme %s\n' "$*"; "$UNVME" "$@"; }
counters() { "$UNVME" smart-log | grep -E '^(data_units_read|data_units_written|host_reads|host_writes) ' || true; }

step "Devices: emu0 is an emulated NVMe controller backed by a file in $UNVME_STATE_DIR"
run list

# The library's notice about hugepages has been seen once; keep the rest of the demo quiet.
export UNVME_QUIET=1

step "Identify Controller (summary)"
printf '$ unvme id-ctrl | grep ...\n'
"$UNVME" id-ctrl | grep -E '^(vid|sn|mn|fr|mdts|oacs|frmw|nn|oncs|vwc) '

step "SMART counters before the I/O"
counters

step "Write 256 KiB of random data at LBA 4096, read it back, compare"
head -c 262144 /dev/urandom > "$WORK/data.bin"
run write -s 4096 -c 511 -d "$WORK/data.bin"
run read -s 4096 -c 511 -d "$WORK/back.bin"
cmp "$WORK/data.bin" "$WORK/back.bin" && echo "demo: the data read back is identical"
run compare -s 4096 -c 511 -d "$WORK/data.bin"

step "SMART counters after: data units and host commands moved"
counters

step "A bad command gets the device's answer by name (exit code 1)"
printf '$ unvme io-passthru --opcode 0x7f\n'
"$UNVME" io-passthru --opcode 0x7f || echo "demo: exit code $?"

step "perf: 4 KiB random reads on a null namespace, device run inline on the caller's thread, QD 128"
run perf 'emu://perf?ns=null:1T:512' -w randread -b 4k -q 128 -t 3

step "perf: 4 KiB random reads on a memory namespace, every block written first, QD 32"
run perf 'emu://mem?ns=mem:256M:4096' --fill -w randread -b 4k -q 32 -t 2

printf '\ndemo: done. Try "%s help".\n' "$UNVME"
