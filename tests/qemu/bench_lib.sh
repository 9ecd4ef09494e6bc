#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark helpers of the QEMU guest's fabrics benchmarks (bench_tcp.sh, bench_rdma.sh):
# a fio point on a block device, an `unvme perf` point on a device id and a recorded row.
# Expects $T (seconds a point), $W (a scratch directory), $UNVME (our tool) and $bad (set to 1
# when a point produced no number).

fio_run() { # DEV RW QD -> "iops avg p50 p99" (terse v3: read block from field 6, write from 47)
	fio --name=b --filename=$1 --direct=1 --rw=$2 --bs=4k --ioengine=libaio --iodepth=$3 \
		--runtime=$T --time_based --norandommap --randrepeat=0 --size=256M --lat_percentiles=1 \
		--percentile_list=50:99 --output-format=terse --terse-version=3 2>/dev/null | awk -F';' -v rw=$2 '
		NR == 1 { o = (rw == "randread") ? 0 : 41
			  p50 = $(18 + o); p99 = $(19 + o); sub(/.*=/, "", p50); sub(/.*=/, "", p99)
			  printf "%.0f %.1f %.1f %.1f\n", $(8 + o), $(40 + o), p50, p99 }'
}

perf_run() { # DEVID RW QD -> "iops avg p50 p99" from `unvme perf -o json` (its "total")
	UNVME_QUIET=1 $UNVME perf "$1" -w $2 -b 4096 -q $3 -t $T -o json 2>/dev/null | awk '
		/"total"/ { t = 1 }
		t && /"iops"/ { gsub(/[",]/, ""); i = $2 }
		t && /"avg"/ { gsub(/[",]/, ""); a = $2 }
		t && /"p50"/ { gsub(/[",]/, ""); p = $2 }
		t && /"p99"/ { gsub(/[",]/, ""); q = $2 }
		END { printf "%.0f %.1f %.1f %.1f\n", i, a, p, q }'
}

point() { # LABEL HOST RW QD RESULT: records a row
	echo "$1 $2 $3 $4 $5" >> $W/rows
	echo "# $1 $2 $3 qd $4: $5"
	case "$5" in ""|0\ *) bad=1 ;; esac
}
