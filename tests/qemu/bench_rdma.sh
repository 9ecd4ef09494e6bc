#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe/RDMA in the QEMU guest (make bench-qemu; alone: scripts/qemu/run.sh --only bench_rdma)
# over soft-RoCE (rdma_rxe on dummy0), one memory file (tmpfs) behind both targets: Linux's host
# (nvme connect -t rdma + fio, libaio, O_DIRECT) against our `unvme target --listen rdma:...`
# and against Linux's nvmet-rdma. 4 KiB random reads and writes at QD 1 and 32: IOPS, and at
# QD 1 the latency (avg/p50/p99 us). Soft-RoCE is RDMA done by the guest's (emulated) CPU:
# these are software figures bound by the CPU, not what an RDMA NIC does. Our host transport
# (nvme-rdma://) is not there yet, so only Linux's host reads. Prints BENCH rows with the
# ratios; every run must produce a number (PASS/FAIL marker).
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
. /src/tests/qemu/bench_lib.sh # fio_run, point
rdma_setup > $W/setup 2>&1 || { echo "UNVME-TEST FAIL bench-rdma-rxe: $(tail -n 2 $W/setup)"; exit 1; }
dd if=/dev/zero of=$IMG bs=1M count=256 2>/dev/null # real pages, not holes

sweep() { # TARGET-LABEL BLOCKDEV: Linux's host on one target
	for rw in randread randwrite; do
		for qd in 1 32; do
			point $1 linux $rw $qd "$(fio_run $2 $rw $qd)"
		done
	done
}

connect_sweep() { # LABEL NQN PORT: Linux's host connects to the target, sweeps, disconnects
	nvme connect -t rdma -a $RDMA_ADDR -s $3 -n $2 > /dev/null 2>&1 && D=$(wait_dev $2) && [ -n "$D" ] || return 1
	echo none > /sys/block/$(basename $D)/queue/scheduler 2>/dev/null
	sweep $1 $D
	nvme disconnect -n $2 > /dev/null 2>&1
}

rm -f $W/rows
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

echo "BENCH NVMe/RDMA over soft-RoCE (rxe, software: CPU-bound), 4 KiB, one memory file behind both targets, QEMU TCG"
echo "BENCH (IOPS; at QD 1 also latency avg/p50/p99 in us; ratio: our target / nvmet-rdma, Linux's host)"
echo "BENCH target   host   I/O        QD      IOPS     avg     p50     p99"
sort -k1,1r -k3,3 -k4,4n $W/rows | awk '{ printf "BENCH %-7s %-6s %-10s %3d %9d %7.1f %7.1f %7.1f\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
awk '{ k = $3 " qd " $4; v[$1 "/" k] = $5; a[$1 "/" k] = $6; keys[k] = 1 }
	END { for (k in keys) {
		o = v["ours/" k]; n = v["nvmet/" k]
		printf "BENCH %-16s IOPS ours/nvmet %.2fx   avg latency ours/nvmet %.2fx\n", k,
			n ? o / n : 0, a["nvmet/" k] ? a["ours/" k] / a["nvmet/" k] : 0 } }' $W/rows | sort
[ $bad = 0 ] && echo "UNVME-TEST PASS bench-rdma-table" || echo "UNVME-TEST FAIL bench-rdma-table: a run produced no number"
rm -f $IMG
exit $bad
