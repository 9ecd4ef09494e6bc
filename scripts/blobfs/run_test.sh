#!/usr/bin/env bash
# RocksDB on BlobFS with Debian's unmodified db_bench: the original SDK's run_test.sh
# sequence (fillseq, readseq, fillseq, readrandom, overwrite, readwhilewriting, fillsync) on
# a fresh file system, each benchmark a db_bench process of its own, as the original ran it.
#
#   scripts/blobfs/run_test.sh [DEVICE]
#
# DEVICE: a device id that keeps its data between processes (a PCI address, an alias, or
# an emu:// URI with a file namespace); default a 4 GiB file namespace in $TMPDIR. A memory
# namespace (emu://...?ns=mem:...) lives only as long as one process: then the whole
# sequence runs in one db_bench.
#
# Settings (environment): NUM (keys, default 200000), VALUE_SIZE (1000), KEY_SIZE (16),
# THREADS (readwhilewriting readers, 1), RETAIN (1), PREFETCH (1), PREFETCH_THRESHOLD
# (131072), DIRECT_READ (0), DIRECT_WRITE (0), BLOBFS_CACHE (1073741824), WAL (1),
# BUILD (build directory, default build), EXTRA (more db_bench flags).
#
# The exact command each step runs is printed; it is the one to copy:
#   LD_PRELOAD=<build>/plugins/rocksdb/libblobfs_rocksdb.so db_bench \
#     --fs_uri='id=blobfs;device=<DEVICE>;retain_cache=true;...' --db=/rocksdb ...
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
[[ "$BUILD" = /* ]] || BUILD="$here/$BUILD"
PLUGIN="$BUILD/plugins/rocksdb/libblobfs_rocksdb.so"
UNVME="$BUILD/tools/unvme/unvme"
NUM=${NUM:-200000}
VALUE_SIZE=${VALUE_SIZE:-1000}
KEY_SIZE=${KEY_SIZE:-16}
THREADS=${THREADS:-1}
RETAIN=${RETAIN:-1}
PREFETCH=${PREFETCH:-1}
PREFETCH_THRESHOLD=${PREFETCH_THRESHOLD:-131072}
DIRECT_READ=${DIRECT_READ:-0}
DIRECT_WRITE=${DIRECT_WRITE:-0}
BLOBFS_CACHE=${BLOBFS_CACHE:-1073741824}
WAL=${WAL:-1}
EXTRA=${EXTRA:-}

die() { echo "run_test.sh: $*" >&2; exit 2; }
bool() { [ "$1" = 1 ] && echo true || echo false; }

# Without the plugin db_bench does not fail cleanly: an --fs_uri whose id nobody registered
# gives it a null FileSystem and it crashes (SIGSEGV). Check before running anything.
[ -f "$PLUGIN" ] || die "$PLUGIN is not built (meson needs librocksdb-dev and a C++ compiler)"
command -v db_bench >/dev/null || die "db_bench is not installed (Debian: rocksdb-tools)"
[ -x "$UNVME" ] || die "$UNVME is not built"

TMP=${TMPDIR:-/tmp}
DEV=${1:-"emu://runtest?ns=file:4G:512:$TMP/blobfs-run_test.img"}
case "$DEV" in *\;*) die "the device id may not contain ';' (use an alias from 'unvme devices')" ;; esac

URI="id=blobfs;device=$DEV;retain_cache=$(bool "$RETAIN");prefetch=$(bool "$PREFETCH")"
URI+=";prefetch_threshold=$PREFETCH_THRESHOLD;direct_read=$(bool "$DIRECT_READ")"
URI+=";direct_write=$(bool "$DIRECT_WRITE");cache_size=$BLOBFS_CACHE"

# Block cache off, as the original measured: every read goes to the file system.
COMMON=(--db=/rocksdb --key_size="$KEY_SIZE" --value_size="$VALUE_SIZE" --num="$NUM"
        --cache_size=0 --compression_type=none --disable_wal=$([ "$WAL" = 1 ] && echo false || echo true)
        --stats_per_interval=0 --histogram=0)
# shellcheck disable=SC2206
EXTRA_ARGS=($EXTRA)

run() {
	local uri=$1
	shift
	echo "+ LD_PRELOAD=$PLUGIN db_bench --fs_uri='$uri' $* ${COMMON[*]} ${EXTRA_ARGS[*]}" >&2
	LD_PRELOAD="$PLUGIN" db_bench --fs_uri="$uri" "$@" "${COMMON[@]}" "${EXTRA_ARGS[@]}" 2>&1 |
		grep -E '^(fillseq|readseq|readrandom|overwrite|readwhilewriting|fillsync)[[:space:]]*:' || {
		echo "run_test.sh: db_bench failed (see the command above)" >&2
		return 1
	}
}

STEPS=(fillseq readseq fillseq readrandom overwrite readwhilewriting fillsync)
echo "BlobFS on $DEV: ${STEPS[*]}, $NUM keys of $KEY_SIZE B, values of $VALUE_SIZE B" >&2
case "$DEV" in
emu://*ns=mem:*)
	# One process: a memory namespace does not outlive it.
	run "$URI;format=always" --benchmarks="$(IFS=,; echo "${STEPS[*]}")" --threads="$THREADS"
	;;
*)
	"$UNVME" mkfs "$DEV" --force >/dev/null
	run "$URI" --benchmarks=fillseq
	run "$URI" --benchmarks=readseq --use_existing_db=1
	run "$URI" --benchmarks=fillseq
	run "$URI" --benchmarks=readrandom --use_existing_db=1
	run "$URI" --benchmarks=overwrite --use_existing_db=1
	run "$URI" --benchmarks=readwhilewriting --use_existing_db=1 --threads="$THREADS"
	run "$URI" --benchmarks=fillsync
	"$UNVME" fsck "$DEV" | tail -1 >&2
	;;
esac
