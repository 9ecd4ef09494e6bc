#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# In the QEMU guest: 4 KiB random reads at QD 1..128 on one emulated controller (00:04.0),
# one thread each, every way there is to reach it, all in one run:
#   kernel keeps it:  fio io_uring and libaio on the block device (O_DIRECT), fio io_uring_cmd
#                     on the generic device (/dev/ngXnY), our io_uring passthrough transport
#                     on the same /dev/ngXnY, our block transport on the block device;
#                     then with a poll queue (nvme.poll_queues=1): fio io_uring_cmd --hipri
#                     and our passthrough with IOPOLL
#   we keep it:       `unvme perf` through VFIO
# fio gets the options that make it cheapest: --gtod_reduce=1 --clocksource=cpu (under TCG
# the guest's clock source is the HPET, an emulated device read per clock_gettime, and fio
# reads the clock several times per I/O; our perf reads the TSC), --random_generator=lfsr,
# and for io_uring and io_uring_cmd registered files and buffers (--registerfiles
# --fixedbufs). BENCH_REPEAT=N runs every point N times and keeps the best. Prints tables
# with the ratios; every number must be positive (PASS/FAIL markers). Under TCG every figure
# is software cost (the guest kernel, QEMU's device model, our code), not what the hardware
# would do.
B=${UNVME_BUILD:-build}
UNVME=/src/$B/tools/unvme/unvme
N0=0000:00:04.0
T=${BENCH_TIME:-3}
REP=${BENCH_REPEAT:-1} # runs per point; the best counts (a loaded machine only slows runs down)
QDS=$(echo "${BENCH_QDS:-1,2,4,8,16,32,64,128}" | tr ',' ' ')
R=/tmp/bench
mkdir -p $R
export UNVME_QUIET=1

generic_of() { # the generic device of a PCI address's namespace, /dev/ngXnY (X: the controller)
	for g in /sys/bus/pci/devices/$1/nvme/nvme*/ng*; do echo /dev/$(basename $g); return; done
}
blockdev_of() { # the kernel's block device of a PCI address, /dev/nvmeXnY
	for n in /sys/bus/pci/devices/$1/nvme/nvme*/nvme*n1; do echo /dev/$(basename $n | sed 's/c[0-9]*n/n/'); return; done
}
D=$(blockdev_of $N0)
[ -b "$D" ] || { echo "UNVME-TEST FAIL bench: no kernel block device for $N0"; exit 1; }
G=$(generic_of $N0)
[ -c "$G" ] || { echo "UNVME-TEST FAIL bench: no generic device $G for $N0"; exit 1; }
echo "# clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "# kernel side: $D and $G ($(cat /sys/block/$(basename $D)/queue/scheduler 2>/dev/null))"
echo none > /sys/block/$(basename $D)/queue/scheduler 2>/dev/null

fio_iops() { # file engine qd [extra fio options] -> IOPS (terse v3: field 8 is read IOPS)
	f=$1 e=$2 q=$3
	shift 3
	fio --name=b --filename=$f --rw=randread --bs=4k --ioengine=$e --iodepth=$q \
		--runtime=$T --time_based --ramp_time=0 --random_generator=lfsr --size=512M \
		--gtod_reduce=1 --clocksource=cpu \
		--output-format=terse --terse-version=3 "$@" 2>/dev/null | awk -F';' '/^3;/ {print $8; exit}'
}
best() { # CMD...: runs it REP times, prints the highest figure
	m=0
	for i in $(seq $REP); do
		v=$("$@")
		m=$(awk -v a=$m -v b=${v:-0} 'BEGIN { print (b > a) ? b : a }')
	done
	echo $m
}
unvme_iops() { # devid qd -> IOPS
	iops=$($UNVME perf "$1" -w randread -b 4k -q $2 -t $T -o json 2>/dev/null |
		sed -n 's/.*"iops": *\([0-9.]*\).*/\1/p' | head -n1)
	echo ${iops:-0}
}

# ---- interrupt-driven completions (the kernel's default: no poll queues) ----
$UNVME perf $G -t 1 -q 1 2>&1 | sed -n 's/^\/dev/# \/dev/p'
for qd in $QDS; do
	REG="--registerfiles=1 --fixedbufs=1"
	echo "$qd $(best unvme_iops $G $qd) $(best fio_iops $G io_uring_cmd $qd --cmd_type=nvme $REG) \
$(best fio_iops $D io_uring $qd --direct=1 $REG) $(best fio_iops $D libaio $qd --direct=1) \
$(best unvme_iops $D $qd)" >> $R/irq
	echo "# qd $qd: $(tail -n1 $R/irq)"
done

# ---- polled completions: a poll queue, our IOPOLL against fio's --hipri ----
echo 1 > /sys/module/nvme/parameters/poll_queues
echo $N0 > /sys/bus/pci/drivers/nvme/unbind
echo $N0 > /sys/bus/pci/drivers/nvme/bind
for i in $(seq 600); do # probing is asynchronous: wait for the namespace's devices
	D=$(blockdev_of $N0)
	[ -b "$D" ] && [ -c "$(generic_of $N0)" ] && break
	sleep 0.1
done
echo 0 > /sys/module/nvme/parameters/poll_queues
D=$(blockdev_of $N0)
G=$(generic_of $N0)
echo "# $D io_poll=$(cat /sys/block/$(basename $D)/queue/io_poll)"
$UNVME perf $G -t 1 -q 1 2>&1 | sed -n 's/^\/dev/# \/dev/p'
for qd in $QDS; do
	echo "$qd $(best unvme_iops $G $qd) $(best fio_iops $G io_uring_cmd $qd --cmd_type=nvme $REG --hipri)" >> $R/poll
	echo "# polled qd $qd: $(tail -n1 $R/poll)"
done

# ---- VFIO: the controller is ours ----
NRHUGE=256 sh /src/scripts/setup.sh config $N0 >/dev/null || { echo "UNVME-TEST FAIL bench: setup"; exit 1; }
for qd in $QDS; do
	echo "$qd $(best unvme_iops $N0 $qd)" >> $R/vfio
	echo "# vfio qd $qd: $(tail -n1 $R/vfio)"
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

echo "BENCH 4 KiB random read, 1 thread, QEMU TCG guest, one emulated controller (IOPS)"
echo "BENCH passthrough = our io_uring passthrough on /dev/ngXnY; uring_cmd = fio io_uring_cmd on it;"
echo "BENCH io_uring / libaio = fio on /dev/nvmeXnY (O_DIRECT); block = ours on /dev/nvmeXnY"
echo "BENCH    QD  passthrough   uring_cmd    io_uring      libaio       block   vfio  pt/uring_cmd pt/io_uring vfio/pt"
awk 'NR == FNR { v[$1] = $2; next } { print $0, v[$1] }' $R/vfio $R/irq | awk '
	{ r1 = ($3 > 0) ? $2 / $3 : 0; r2 = ($4 > 0) ? $2 / $4 : 0; r3 = ($2 > 0) ? $7 / $2 : 0
	  printf "BENCH %5d %12.0f %11.0f %11.0f %11.0f %11.0f %6.0f %12.2fx %10.2fx %6.2fx\n", $1, $2, $3, $4, $5, $6, $7, r1, r2, r3
	  for (i = 2; i <= 7; i++) if ($i <= 0) bad = 1 }
	END { exit bad }' && echo "UNVME-TEST PASS bench-table" || echo "UNVME-TEST FAIL bench-table: a run produced no IOPS"
# the target, said (not a test: timing is the machine's): passthrough >= 1.0x
# fio io_uring_cmd at every QD
awk '$3 > 0 && $2 < $3 { miss = miss " " $1 } END {
	if (miss == "") print "BENCH target passthrough >= 1.0x fio io_uring_cmd: met at every QD"
	else print "BENCH target passthrough >= 1.0x fio io_uring_cmd: missed at QD" miss }' $R/irq
echo "BENCH polled (one poll queue): our passthrough with IOPOLL against fio io_uring_cmd --hipri"
echo "BENCH    QD  passthrough   uring_cmd  pt/uring_cmd"
awk '{ r = ($3 > 0) ? $2 / $3 : 0
	printf "BENCH %5d %12.0f %11.0f %12.2fx\n", $1, $2, $3, r
	if ($2 <= 0 || $3 <= 0) bad = 1 }
	END { exit bad }' $R/poll && echo "UNVME-TEST PASS bench-table-polled" || echo "UNVME-TEST FAIL bench-table-polled: a run produced no IOPS"

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
