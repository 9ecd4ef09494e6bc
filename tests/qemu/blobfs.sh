# SPDX-License-Identifier: BSD-3-Clause
# In the QEMU guest (from tests/qemu/guest.sh, with 00:04.0 bound to vfio-pci): BlobFS on
# QEMU's NVMe controller through the VFIO transport. mkfs, fsck and the fs commands,
# blobfs_perf with verify (buffered and direct), then Debian's db_bench and ldb on BlobFS
# through the RocksDB plugin: a fill, a second process reading it back, and a kill -9 during
# a synced fill after which the database reopens and fsck is clean.
# Sourced by guest.sh: its helpers (t, tout, pass, fail), $B, $UNVME, $N0 and $W are in use.
PERF=/src/$B/tools/blobfs/blobfs_perf
PLUGIN=/src/$B/plugins/rocksdb/libblobfs_rocksdb.so
export UNVME_LOCK_DIR=/tmp

# ---- the file system and its tools ----
t blobfs-mkfs-vfio $UNVME mkfs $N0 --force --label guest
tout blobfs-fsck-clean "clean" $UNVME fsck $N0
head -c 300000 /dev/urandom > $W/blob
t blobfs-fs-mkdir $UNVME fs $N0 mkdir -p /in/the/guest
t blobfs-fs-put $UNVME fs $N0 put $W/blob /in/the/guest/blob
t blobfs-fs-get $UNVME fs $N0 get /in/the/guest/blob $W/blob2
cmp -s $W/blob $W/blob2 && pass blobfs-data-round-trip || fail blobfs-data-round-trip
tout blobfs-fs-ls "blob" $UNVME fs $N0 ls -l /in/the/guest

# ---- blobfs_perf: each thread its own queue pair on the real controller ----
P="-u $N0 --cache-size 32m"
t blobfs-perf-write-verify $PERF $P -w write -b 256k -s 32m -m 2 -v
t blobfs-perf-read-verify $PERF $P -w read -b 4k -s 32m -m 2 -a -e -v
t blobfs-perf-randread-direct-verify $PERF $P -w randread -b 64k -s 32m -m 2 -a -d -v

# ---- RocksDB: Debian's db_bench and ldb on BlobFS ----
if command -v db_bench >/dev/null 2>&1 && [ -f $PLUGIN ]; then
	U="id=blobfs;device=$N0;cache_size=33554432"
	A="--num=10000 --value_size=400 --key_size=16 --cache_size=0 --write_buffer_size=1048576"
	tout blobfs-db_bench-fill "fillseq" env LD_PRELOAD=$PLUGIN db_bench --fs_uri="$U;format=always" \
		--db=/db --benchmarks=fillseq $A
	tout blobfs-db_bench-second-process-reads "(10000 of 10000 found)" env LD_PRELOAD=$PLUGIN db_bench \
		--fs_uri="$U" --db=/db --benchmarks=readrandom --use_existing_db=1 $A
	# kill -9 during a synced fill: every acknowledged key must be there
	LD_PRELOAD=$PLUGIN db_bench --fs_uri="$U" --db=/crash --benchmarks=fillseq --sync=1 \
		--num=100000000 --stats_interval=100 --value_size=100 --key_size=16 > $W/fill.out 2>&1 &
	pid=$!
	sleep 8
	kill -9 $pid
	wait $pid 2>/dev/null
	acked=$(tr '\r' '\n' < $W/fill.out | sed -n 's/.*(\([0-9]*\),\([0-9]*\)) ops.*/\2/p' | tail -n1)
	LD_PRELOAD=$PLUGIN ldb --fs_uri="$U" --db=/crash scan --key_hex > $W/scan 2>&1
	got=$(grep -c '^0x' $W/scan)
	if [ "${acked:-0}" -gt 0 ] && [ "$got" -ge "$acked" ]; then
		pass "blobfs-db_bench-kill-9 ($got keys back, $acked acknowledged)"
	else
		fail blobfs-db_bench-kill-9 "$got keys back, ${acked:-0} acknowledged"
		tail -n 5 $W/scan | sed 's/^/    /'
	fi
	tout blobfs-fsck-after-crash '"errors": 0' $UNVME fsck $N0 -o json
else
	fail blobfs-db_bench "db_bench or the plugin is missing in the guest"
fi
