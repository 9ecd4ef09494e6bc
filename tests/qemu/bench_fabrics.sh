#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The fabrics seed's table in the QEMU guest: NVMe/TCP (bench_tcp.sh), then NVMe/RDMA with the
# local rows (bench_rdma.sh), which prints local, TCP and RDMA side by side for each host.
# Part of make bench-qemu; alone: scripts/qemu/run.sh --only bench_fabrics.
rm -rf /tmp/bench-tcp/rows
rc=0
sh /src/tests/qemu/bench_tcp.sh || rc=1
sh /src/tests/qemu/bench_rdma.sh || rc=1
exit $rc
