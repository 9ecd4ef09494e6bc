#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe/TCP in the QEMU guest (make bench-qemu), over the guest's loopback, one memory file
# (tmpfs) behind both targets:
#   - targets: our `unvme target` against Linux's nvmet-tcp, both read by Linux's host
#     (nvme connect + fio, libaio, O_DIRECT);
#   - hosts: Linux's host (fio) against ours (`unvme perf` through nvme-tcp://), on each target.
# 4 KiB random reads and writes at QD 1 and 32: IOPS, and at QD 1 the latency (avg/p50/p99 us).
# Prints BENCH rows with the ratios; every run must produce a number (PASS/FAIL marker).
B=${UNVME_BUILD:-build}
UNVME=/src/$B/tools/unvme/unvme
T=${BENCH_TIME:-3}
W=/tmp/bench-tcp
ON=nqn.2024-01.io.unvme:bench
KN=nqn.2024-01.io.linux:bench
IMG=/tmp/bench-tcp.img
mkdir -p $W
. /src/tests/qemu/tcp_lib.sh
tcp_lo_up
dd if=/dev/zero of=$IMG bs=1M count=256 2>/dev/null # real pages, not holes

bad=0
. /src/tests/qemu/bench_lib.sh # fio_run, perf_run, point
sweep() { # TARGET-LABEL BLOCKDEV DEVID: Linux's host, then ours, on one target
	for rw in randread randwrite; do
		for qd in 1 32; do
			point $1 linux $rw $qd "$(fio_run $2 $rw $qd)"
			point $1 unvme $rw $qd "$(perf_run $3 $rw $qd)"
		done
	done
}

rm -f $W/rows
if start_target btgt 4430 --nqn $ON -d "emu://gb?ns=file:256M:4096:$IMG" --allow-any-host &&
	nvme connect -t tcp -a 127.0.0.1 -s 4430 -n $ON > /dev/null 2>&1 && D=$(wait_dev $ON) && [ -n "$D" ]; then
	echo none > /sys/block/$(basename $D)/queue/scheduler 2>/dev/null
	sweep ours $D "nvme-tcp://127.0.0.1:4430/$ON"
	nvme disconnect -n $ON > /dev/null 2>&1
else
	echo "UNVME-TEST FAIL bench-tcp-our-target: $(tail -n 3 $W/btgt.log 2>/dev/null)"; bad=1
fi
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
if nvmet_export $KN $IMG 4431 &&
	nvme connect -t tcp -a 127.0.0.1 -s 4431 -n $KN > /dev/null 2>&1 && D=$(wait_dev $KN) && [ -n "$D" ]; then
	echo none > /sys/block/$(basename $D)/queue/scheduler 2>/dev/null
	sweep nvmet $D "nvme-tcp://127.0.0.1:4431/$KN"
	nvme disconnect -n $KN > /dev/null 2>&1
else
	echo "UNVME-TEST FAIL bench-tcp-nvmet: configfs or connect failed"; bad=1
fi
nvmet_remove $KN

echo "BENCH NVMe/TCP over the guest's loopback, 4 KiB, one memory file behind both targets, QEMU TCG"
echo "BENCH (IOPS; at QD 1 also latency avg/p50/p99 in us; ratios: ours / Linux's)"
echo "BENCH target   host   I/O        QD      IOPS     avg     p50     p99"
sort -k1,1r -k3,3 -k4,4n -k2,2 $W/rows | awk '{ printf "BENCH %-7s %-6s %-10s %3d %9d %7.1f %7.1f %7.1f\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
awk '{ k = $3 " qd " $4; v[$1 "/" $2 "/" k] = $5; keys[k] = 1 }
	END { for (k in keys) {
		lt = v["ours/linux/" k]; kt = v["nvmet/linux/" k]; uh = v["nvmet/unvme/" k]; lh = v["nvmet/linux/" k]
		uo = v["ours/unvme/" k]; lo = v["ours/linux/" k]
		printf "BENCH %-16s target (Linux host): ours/nvmet %.2fx   host: ours/Linux %.2fx on nvmet, %.2fx on ours\n",
			k, kt ? lt / kt : 0, lh ? uh / lh : 0, lo ? uo / lo : 0 } }' $W/rows | sort
[ $bad = 0 ] && echo "UNVME-TEST PASS bench-tcp-table" || echo "UNVME-TEST FAIL bench-tcp-table: a run produced no number"
rm -f $IMG
exit $bad
