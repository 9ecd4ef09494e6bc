#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# In the QEMU guest: the original SDK's headline comparison on one emulated controller
# (00:04.0): 4 KiB random reads at QD 1..128, fio through the guest kernel's nvme driver
# (io_uring and libaio, O_DIRECT) against `unvme perf` through VFIO. One thread each.
# Prints a table with the ratios; every number must be positive (PASS/FAIL marker).
B=${UNVME_BUILD:-build}
UNVME=/src/$B/tools/unvme/unvme
N0=0000:00:04.0
T=${BENCH_TIME:-3}
QDS=$(echo "${BENCH_QDS:-1,2,4,8,16,32,64,128}" | tr ',' ' ')
R=/tmp/bench
mkdir -p $R
D=""
for n in /sys/bus/pci/devices/$N0/nvme/nvme*/nvme*n1; do D=/dev/$(basename $n | sed 's/c[0-9]*n/n/'); done
[ -b "$D" ] || { echo "UNVME-TEST FAIL bench: no kernel block device for $N0"; exit 1; }
echo "# kernel side: $D ($(cat /sys/block/$(basename $D)/queue/scheduler 2>/dev/null))"
echo none > /sys/block/$(basename $D)/queue/scheduler 2>/dev/null

fio_iops() { # engine qd -> IOPS (terse v3: field 8 is read IOPS)
	fio --name=b --filename=$D --direct=1 --rw=randread --bs=4k --ioengine=$1 --iodepth=$2 \
		--runtime=$T --time_based --ramp_time=0 --norandommap --randrepeat=0 --size=512M \
		--output-format=terse --terse-version=3 2>/dev/null | awk -F';' 'NR==1 {print $8}'
}
for qd in $QDS; do
	echo "$qd $(fio_iops io_uring $qd) $(fio_iops libaio $qd)" >> $R/fio
	echo "# fio qd $qd: $(tail -n1 $R/fio)"
done

NRHUGE=256 sh /src/scripts/setup.sh config $N0 >/dev/null || { echo "UNVME-TEST FAIL bench: setup"; exit 1; }
for qd in $QDS; do
	iops=$(UNVME_QUIET=1 $UNVME perf $N0 -w randread -b 4k -q $qd -t $T -o json 2>/dev/null |
		sed -n 's/.*"iops": *\([0-9.]*\).*/\1/p' | head -n1)
	echo "$qd ${iops:-0}" >> $R/unvme
	echo "# unvme qd $qd: ${iops:-0}"
done
# BlobFS: db_bench readrandom on BlobFS through VFIO (the RocksDB plugin) ...
PLUGIN=/src/$B/plugins/rocksdb/libblobfs_rocksdb.so
DBA="--benchmarks=fillseq,readrandom --num=${BENCH_DB_NUM:-20000} --value_size=1000 --key_size=16 --cache_size=0 --compression_type=none --write_buffer_size=4194304"
if command -v db_bench >/dev/null 2>&1 && [ -f $PLUGIN ]; then
	UNVME_LOCK_DIR=/tmp LD_PRELOAD=$PLUGIN db_bench --fs_uri="id=blobfs;device=$N0;format=always;cache_size=134217728" \
		--db=/db $DBA > $R/db_blobfs 2>&1
fi
sh /src/scripts/setup.sh reset $N0 >/dev/null
sleep 1
# ... against the same db_bench on ext4 through the guest kernel's nvme driver, same controller.
for n in /sys/bus/pci/devices/$N0/nvme/nvme*/nvme*n1; do D=/dev/$(basename $n | sed 's/c[0-9]*n/n/'); done
if command -v db_bench >/dev/null 2>&1 && command -v mkfs.ext4 >/dev/null 2>&1 && [ -b "$D" ]; then
	mkfs.ext4 -q -F $D >/dev/null 2>&1 && mkdir -p /mnt/e4 && mount -t ext4 $D /mnt/e4 &&
		db_bench --db=/mnt/e4/db $DBA > $R/db_ext4 2>&1
	umount /mnt/e4 2>/dev/null
fi

echo "BENCH 4 KiB random read, 1 thread, QEMU TCG guest, same emulated controller (IOPS)"
echo "BENCH    QD   unvme(vfio)  fio(io_uring)  fio(libaio)  unvme/io_uring  unvme/libaio"
awk 'NR == FNR { u[$1] = $2; next } { print $1, u[$1], $2, $3 }' $R/unvme $R/fio | awk '
	{ r1 = ($3 > 0) ? $2 / $3 : 0; r2 = ($4 > 0) ? $2 / $4 : 0
	  printf "BENCH %5d %13.0f %14.0f %12.0f %15.2fx %13.2fx\n", $1, $2, $3, $4, r1, r2
	  if ($2 <= 0 || $3 <= 0 || $4 <= 0) bad = 1 }
	END { exit bad }' && echo "UNVME-TEST PASS bench-table" || echo "UNVME-TEST FAIL bench-table: a run produced no IOPS"

ops() { sed -n "s/^$2 *: *[0-9.]* micros\/op \([0-9]*\) ops\/sec.*/\1/p" $1 2>/dev/null | head -n1; }
echo "BENCH RocksDB db_bench, ${BENCH_DB_NUM:-20000} keys of 1000 B, block cache off, same controller (ops/s)"
echo "BENCH   benchmark   BlobFS(vfio)   ext4(kernel nvme)   ratio"
bad=0
for b in fillseq readrandom; do
	o=$(ops $R/db_blobfs $b) e=$(ops $R/db_ext4 $b)
	[ -n "$o" ] && [ -n "$e" ] || bad=1
	echo "$b ${o:-0} ${e:-0}" | awk '{ printf "BENCH %11s %14d %19d %7.2fx\n", $1, $2, $3, ($3 > 0) ? $2 / $3 : 0 }'
done
[ $bad = 0 ] && echo "UNVME-TEST PASS bench-blobfs-db_bench" ||
	{ echo "UNVME-TEST FAIL bench-blobfs-db_bench: a run produced no figure"; tail -n 5 $R/db_blobfs $R/db_ext4; }
