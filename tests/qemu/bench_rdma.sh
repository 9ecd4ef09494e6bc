#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe/RDMA in the QEMU guest (make bench-qemu, through bench_fabrics.sh; alone: scripts/qemu/run.sh
# --only bench_rdma, or --only bench_fabrics for the seed's table with NVMe/TCP's rows)
# over soft-RoCE (rdma_rxe on dummy0), one memory file (tmpfs) behind everything, the fabrics
# seed's question again: what does remote cost against local?
#   - local: Linux's host on the file through a loop device (fio, libaio, O_DIRECT) and ours
#     on the same file as an emulated file namespace (`unvme perf emu://...?ns=file:...`);
#   - targets: our `unvme target --listen rdma:...` against Linux's nvmet-rdma;
#   - hosts: Linux's (nvme connect -t rdma + fio) against ours (`unvme perf nvme-rdma://...`),
#     on each target.
# 4 KiB random reads and writes at QD 1 and 32: IOPS, and at QD 1 the latency (avg/p50/p99
# us). Soft-RoCE is RDMA done by the guest's (emulated) CPU: these are software figures bound
# by the CPU, not what an RDMA NIC does. Prints BENCH rows with the ratios; after bench_tcp.sh
# in the same guest (make bench-qemu), also the seed's table: local, NVMe/TCP and NVMe/RDMA
# side by side for each host. Every run must produce a number (PASS/FAIL marker).
B=${UNVME_BUILD:-build}
UNVME=/src/$B/tools/unvme/unvme
T=${BENCH_TIME:-3}
W=/tmp/bench-rdma
ON=nqn.2024-01.io.unvme:rbench
KN=nqn.2024-01.io.linux:rbench
IMG=/tmp/bench-rdma.img
mkdir -p $W
. /src/tests/qemu/tcp_lib.sh # wait_dev
. /src/tests/qemu/rdma_lib.sh
bad=0
. /src/tests/qemu/bench_lib.sh # fio_run, perf_run, point
rdma_setup > $W/setup 2>&1 || { echo "UNVME-TEST FAIL bench-rdma-rxe: $(tail -n 2 $W/setup)"; exit 1; }
dd if=/dev/zero of=$IMG bs=1M count=256 2>/dev/null # real pages, not holes

sweep() { # TARGET-LABEL BLOCKDEV DEVID: Linux's host, then ours, on one target
	for rw in randread randwrite; do
		for qd in 1 32; do
			point $1 linux $rw $qd "$(fio_run $2 $rw $qd)"
			point $1 unvme $rw $qd "$(perf_run $3 $rw $qd)"
		done
	done
}

connect_sweep() { # LABEL NQN PORT: both hosts on the target; Linux's disconnects after
	nvme connect -t rdma -a $RDMA_ADDR -s $3 -n $2 > /dev/null 2>&1 && D=$(wait_dev $2) && [ -n "$D" ] || return 1
	echo none > /sys/block/$(basename $D)/queue/scheduler 2>/dev/null
	sweep $1 $D "nvme-rdma://$RDMA_ADDR:$3/$2"
	nvme disconnect -n $2 > /dev/null 2>&1
}

rm -f $W/rows
# local: the loop device is buffered (tmpfs takes no O_DIRECT), as nvmet's buffered_io file is
if LOOP=$(losetup -f) && losetup $LOOP $IMG; then
	echo none > /sys/block/$(basename $LOOP)/queue/scheduler 2>/dev/null
	sweep local $LOOP "emu://rlocal?ns=file:256M:4096:$IMG"
	losetup -d $LOOP
	# the file namespace's device process outlives perf for a while: ended, the file is free
	$UNVME serve "emu://rlocal?ns=file:256M:4096:$IMG" --stop > /dev/null 2>&1
else
	echo "UNVME-TEST FAIL bench-rdma-local: losetup failed"; bad=1
fi
if ! { rdma_start_target rbt 4430 --nqn $ON -d "emu://rb?ns=file:256M:4096:$IMG" --allow-any-host --quiet &&
	connect_sweep ours $ON 4430; }; then
	echo "UNVME-TEST FAIL bench-rdma-our-target: $(tail -n 3 $W/rbt.log 2>/dev/null)"; bad=1
fi
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
if ! { rdma_nvmet_export $KN $IMG 4431 && connect_sweep nvmet $KN 4431; }; then
	echo "UNVME-TEST FAIL bench-rdma-nvmet: configfs or connect failed"; bad=1
fi
rdma_nvmet_remove $KN

echo "BENCH NVMe/RDMA over soft-RoCE (rxe, software: CPU-bound), 4 KiB, one memory file behind everything, QEMU TCG"
echo "BENCH (IOPS; at QD 1 also latency avg/p50/p99 in us; ratios: ours / Linux's)"
echo "BENCH target   host   I/O        QD      IOPS     avg     p50     p99"
sort -k1,1r -k3,3 -k4,4n -k2,2 $W/rows | awk '{ printf "BENCH %-7s %-6s %-10s %3d %9d %7.1f %7.1f %7.1f\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
awk '{ k = $3 " qd " $4; v[$1 "/" $2 "/" k] = $5; keys[k] = 1 }
	END { for (k in keys) {
		lt = v["ours/linux/" k]; kt = v["nvmet/linux/" k]; uh = v["nvmet/unvme/" k]
		uo = v["ours/unvme/" k]; ul = v["local/unvme/" k]; ll = v["local/linux/" k]
		printf "BENCH %-16s target (Linux host): ours/nvmet %.2fx   host: ours/Linux %.2fx on nvmet, %.2fx on ours, %.2fx local\n",
			k, kt ? lt / kt : 0, kt ? uh / kt : 0, lt ? uo / lt : 0, ll ? ul / ll : 0 } }' $W/rows | sort
# The seed's table: per host, local against remote over each fabric (Linux's target on both
# fabrics, the same file behind it): QD 1 median latency (a TCG guest's averages are its
# stalls) and QD 32 IOPS, reads and writes.
if [ -s /tmp/bench-tcp/rows ]; then
	echo "BENCH the seed's table: local against NVMe/TCP (loopback) and NVMe/RDMA (soft-RoCE), Linux's target remote, 4 KiB"
	echo "BENCH host   I/O         QD1 p50 us: local     TCP    RDMA   |  QD32 IOPS: local     TCP    RDMA"
	{ sed 's/^/tcp /' /tmp/bench-tcp/rows; sed 's/^/rdma /' $W/rows; } | awk '
		{ f = ($2 == "local") ? "local" : $1; if ($2 != "local" && $2 != "nvmet") next
		  if ($5 == 1) lat[$3 " " $4 " " f] = $8; else iops[$3 " " $4 " " f] = $6; hr[$3 " " $4] = 1 }
		END { for (h in hr) printf "BENCH %-6s %-10s %18.1f %7.1f %7.1f   | %15d %7d %7d\n", substr(h, 1, index(h, " ") - 1),
			substr(h, index(h, " ") + 1), lat[h " local"], lat[h " tcp"], lat[h " rdma"],
			iops[h " local"], iops[h " tcp"], iops[h " rdma"] }' | sort
fi
[ $bad = 0 ] && echo "UNVME-TEST PASS bench-rdma-table" || echo "UNVME-TEST FAIL bench-rdma-table: a run produced no number"
rm -f $IMG
exit $bad
