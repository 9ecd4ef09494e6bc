#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs inside the QEMU guest (from scripts/qemu/init.sh), cwd = the source tree (read-only).
# Every check prints "UNVME-TEST PASS <name>" or "UNVME-TEST FAIL <name>"; the host fails
# the run on any FAIL. Controllers, by PCI address (pinned by scripts/qemu/run.sh):
#   00:04.0 unvme-n0   512 MiB   I/O, tools, format, reset, benchmark
#   00:05.0 unvme-n1    64 MiB   second controller, fault tests (reset, CFS, unbind)
#   00:06.0 unvme-zns  zoned namespace (4 KiB blocks, 16 MiB zones)
#   00:07.0 unvme-mnt  keeps the kernel driver and a mounted file system: must be refused
#   01:00.0 unvme-hp    64 MiB   behind a hot-plug root port: PCIe removal and re-insertion
B=${UNVME_BUILD:-build}
UNVME=/src/$B/tools/unvme/unvme
VT=/src/$B/qemu/vfio_guest_test
SETUP=/src/scripts/setup.sh
N0=0000:00:04.0 N1=0000:00:05.0 NZ=0000:00:06.0 NM=0000:00:07.0 NH=0000:01:00.0
export UNVME_QUIET=1
W=/tmp/w
mkdir -p $W

pass() { echo "UNVME-TEST PASS $1"; }
fail() { echo "UNVME-TEST FAIL $1${2:+: $2}"; }
# t NAME CMD...: runs CMD (output to the console, prefixed), PASS when it exits 0.
t() {
	name=$1; shift
	if "$@" > $W/out 2>&1; then pass "$name"; else fail "$name" "exit $?"; sed 's/^/    /' $W/out | tail -n 15; fi
}
# tout NAME PATTERN CMD...: CMD's output must contain PATTERN (exit status ignored).
tout() {
	name=$1 pat=$2; shift 2
	"$@" > $W/out 2>&1
	if grep -q -- "$pat" $W/out; then pass "$name"; else fail "$name" "no '$pat' in the output"; sed 's/^/    /' $W/out | tail -n 15; fi
}
# texit NAME CODE CMD...: CMD must exit with CODE.
texit() {
	name=$1 code=$2; shift 2
	"$@" > $W/out 2>&1
	rc=$?
	if [ $rc -eq "$code" ]; then pass "$name"; else fail "$name" "exit $rc, expected $code"; sed 's/^/    /' $W/out | tail -n 15; fi
}
kdev() { # the block device of a controller bound to the kernel driver (its namespace's
	# instance need not be 1: after a rebind whose old namespace was still held open it is not)
	for n in /sys/bus/pci/devices/$1/nvme/nvme*/nvme*n[0-9]*; do b=$(basename $n); echo /dev/$(echo $b | sed 's/c[0-9]*n/n/'); return; done
}

# ---- the kernel's view first ----
for s in unvme-n0 unvme-n1 unvme-zns unvme-mnt; do
	found=0
	for c in /sys/class/nvme/nvme*; do [ "$(cat $c/serial 2>/dev/null | tr -d ' ')" = $s ] && found=1; done
	[ $found = 1 ] && pass "kernel-sees-$s" || fail "kernel-sees-$s"
done
t kernel-nvme-cli-id-ctrl nvme id-ctrl /dev/nvme0
[ -d /sys/kernel/iommu_groups/0 ] && pass iommu-groups || fail iommu-groups "no IOMMU groups: intel-iommu missing?"

# scripts/qemu/run.sh --only NAME: one group of tests
if [ -n "${UNVME_ONLY:-}" ]; then
	if [ -e /src/tests/qemu/${UNVME_ONLY}_guest.sh ]; then
		. /src/tests/qemu/${UNVME_ONLY}_guest.sh
	else # a benchmark script alone (bench_rdma)
		sh /src/tests/qemu/${UNVME_ONLY}.sh
	fi
	exit 0
fi

if [ "${UNVME_MODE:-test}" = bench ]; then
	sh /src/tests/qemu/bench.sh; rc=$?
	sh /src/tests/qemu/bench_fabrics.sh || rc=1
	exit $rc
fi

# ---- devices the kernel keeps: io_uring passthrough, block device (before VFIO takes them) ----
. /src/tests/qemu/uring_guest.sh

# ---- setup.sh ----
MDEV=$(kdev $NM)
mke2fs -q $MDEV >/dev/null 2>&1 && mkdir -p /mnt/m && mount -t ext2 $MDEV /mnt/m
tout setup-refuses-mounted "refused: in use" $SETUP config $NM
texit setup-refuses-mounted-exit 1 $SETUP config $NM
tout setup-not-nvme "not an NVMe controller" $SETUP config 0000:00:00.0
tout setup-no-such-device "no such PCI device" $SETUP config 0000:00:1e.0
tout setup-bad-address "not a PCI address" $SETUP config nonsense
NRHUGE=256 t setup-config $SETUP config "$N0 $N1 $NZ"
$SETUP status > $W/status 2>&1; sed 's/^/    /' $W/status
ok=1
for b in $N0 $N1 $NZ; do grep -q "^$b .*vfio-pci" $W/status || ok=0; done
grep -q "^$NM .*nvme .*mounted" $W/status || ok=0
grep -q "hugepages: 256" $W/status || ok=0
[ $ok = 1 ] && pass setup-status-table || fail setup-status-table

# ---- clear errors for addresses we cannot use ----
tout error-bound-to-kernel "setup.sh config $NM" $UNVME id-ctrl $NM
tout error-not-nvme "not an NVMe controller" $UNVME id-ctrl 0000:00:00.0
tout error-no-such-device "no such PCI device" $UNVME id-ctrl 0000:00:1e.0

# ---- the tools through VFIO on the real QEMU controller ----
tout vfio-id-ctrl "QEMU NVMe Ctrl" $UNVME id-ctrl $N0
t vfio-id-ns $UNVME id-ns $N0 -n 1
t vfio-list-ns $UNVME list-ns $N0
t vfio-show-regs $UNVME show-regs $N0
t vfio-smart-log $UNVME smart-log $N0
t vfio-error-log $UNVME error-log $N0
t vfio-fw-log $UNVME fw-log $N0
t vfio-get-feature $UNVME get-feature $N0 -f 7
t vfio-write-pattern $UNVME write $N0 -s 100000 -c 7 -p 0x5a
t vfio-read-back $UNVME read $N0 -s 100000 -c 7 -d $W/rd
head -c 4096 /dev/zero | tr '\0' 'Z' > $W/exp  # 0x5a is 'Z'
cmp -s $W/rd $W/exp && pass vfio-read-matches-pattern || fail vfio-read-matches-pattern
t vfio-compare $UNVME compare $N0 -s 100000 -c 7 -d $W/exp
t vfio-io-several-controllers-queues-depths $VT io $N0 $N1 $NZ
# ---- QEMU's zoned namespace through the zoned API, tools, perf and fio zonemode=zbd ----
. /src/tests/qemu/guest_zns.sh
t vfio-reset $UNVME reset $N0
t vfio-read-after-reset $UNVME read $N0 -s 100000 -c 7 -d $W/rd2
cmp -s $W/rd2 $W/exp && pass vfio-data-survives-reset || fail vfio-data-survives-reset
t vfio-format $UNVME format $N0 -n 1 --force
$UNVME read $N0 -s 100000 -c 7 -d $W/rd3 >/dev/null 2>&1
head -c 4096 /dev/zero > $W/zero
cmp -s $W/rd3 $W/zero && pass vfio-format-erased || fail vfio-format-erased
# perf --verify accepts only its own stamps or zeroes: after the format
t vfio-perf-verify $UNVME perf $N0 -w randrw -V -q 32 -t 2
t vfio-perf-qd128 $UNVME perf $N0 -w randread -q 128 -t 2
# ---- several processes on one VFIO controller: the first is its primary, the others get
# queues of their own (docs/multi-process.md) ----
export UNVME_RUN_DIR=$W/run
$UNVME perf $N0 -w randread -q 16 -t 12 > $W/mp-primary 2>&1 &
mpp=$!
for i in $(seq 100); do ls $W/run/ctrl-*.sock >/dev/null 2>&1 && break; sleep 0.2; done
tout vfio-mp-secondary-id-ctrl "QEMU NVMe Ctrl" $UNVME id-ctrl $N0
t vfio-mp-secondary-smart-log $UNVME smart-log $N0
tout vfio-mp-secondary-perf-verify "shared with the primary process" $UNVME perf $N0 -w randrw -V -q 8 -t 2
$UNVME perf $N0 -w randwrite -q 8 -t 30 > /dev/null 2>&1 &
victim=$!
sleep 2
kill -9 $victim; wait $victim 2>/dev/null
t vfio-mp-secondary-after-a-killed-one $UNVME perf $N0 -w randread -q 8 -t 1
if wait $mpp && ! grep -q "failed" $W/mp-primary; then pass vfio-mp-primary-undisturbed; else fail vfio-mp-primary-undisturbed "$(tail -n 3 $W/mp-primary)"; fi
unset UNVME_RUN_DIR
# BlobFS through VFIO on this controller (tests/qemu/blobfs.sh, sharing these helpers)
. /src/tests/qemu/blobfs.sh
# Firmware: QEMU 7.2's controller has no Firmware Image Download/Commit; the tool must say so
# with the device's status (exit 1), not hang or crash. A controller that has them passes too.
head -c 16384 /dev/urandom > $W/fw.bin
$UNVME fw-download $N0 -f $W/fw.bin > $W/out 2>&1
rc=$?
if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -qi "invalid\|opcode\|status" $W/out; }; then pass "vfio-fw-download (exit $rc: $(tail -n1 $W/out))"; else fail vfio-fw-download "exit $rc"; cat $W/out; fi
$UNVME fw-commit $N0 -s 1 -a 1 > $W/out 2>&1
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then pass "vfio-fw-commit (exit $rc)"; else fail vfio-fw-commit "exit $rc"; cat $W/out; fi

# ---- host targets: the KV API on the plain controller, the FTL on the zoned one ----
. /src/tests/qemu/guest_hostkv.sh

# ---- faults: reset, fatal status, unbind and PCIe removal with I/O in flight ----
. /src/tests/qemu/faults_guest.sh

# ---- NVMe/TCP: our target serving a VFIO controller, to our host and to Linux's ----
. /src/tests/qemu/tcp_lib.sh
tcp_lo_up
VN=nqn.2024-01.io.unvme:guest-vfio
VH=nqn.2014-08.io.unvme:guest-vfio-host
# the tests above left their data on N0 (BlobFS, the host KV engine): perf --verify accepts
# only its own stamps and zeroes, so the namespace starts erased
t tcp-vfio-target-namespace-erased $UNVME format $N0 -n 1 --force
if start_target vtgt 4425 --nqn $VN -d $N0 --allow-any-host; then
	pass tcp-target-serves-vfio
	t tcp-ourhost-vfio-target-perf-verify $UNVME perf "nvme-tcp://127.0.0.1:4425/$VN" -w randrw -V -q 16 -t 2
	if nvme connect -t tcp -a 127.0.0.1 -s 4425 -n $VN --hostnqn=$VH > $W/out 2>&1 && D=$(wait_dev $VN) && [ -n "$D" ]; then
		t tcp-linux-vfio-target-fio-verify fio --name=tv --filename=$D --ioengine=libaio --direct=1 \
			--rw=randwrite --bs=4k --size=8M --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1
		nvme disconnect -n $VN > /dev/null 2>&1
	else
		fail tcp-linux-vfio-target-connect "$(tail -n 3 $W/out)"
	fi
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	grep -q "ERROR\|AddressSanitizer" $W/vtgt.log && fail tcp-vfio-target-log "$(tail -n 3 $W/vtgt.log)"
else
	fail tcp-target-serves-vfio "$(tail -n 3 $W/vtgt.log)"
fi

# ---- back to the kernel: the device must be clean for the next user ----
t setup-reset $SETUP reset "$N0 $N1 $NZ"
sleep 1
D0=$(kdev $N0)
[ -n "$D0" ] && [ -b "$D0" ] && pass kernel-rebinds-after-vfio || fail kernel-rebinds-after-vfio
if [ -n "$D0" ]; then
	# Written through VFIO before the format? No: the format erased it. Write through the
	# kernel, then read through the kernel: the controller works normally again.
	dd if=$W/exp of=$D0 bs=4096 seek=10 count=1 oflag=direct 2>/dev/null
	dd if=$D0 of=$W/k bs=4096 skip=10 count=1 iflag=direct 2>/dev/null
	cmp -s $W/k $W/exp && pass kernel-io-after-vfio || fail kernel-io-after-vfio
fi
$SETUP status | sed 's/^/    /'

# ---- NVMe/TCP: Linux's host against our target, our host against Linux's target ----
. /src/tests/qemu/tcp_guest.sh

# ---- NVMe/RDMA over soft-RoCE: the rig's Linux-to-Linux baseline, our verbs and queue engines ----
. /src/tests/qemu/rdma_guest.sh
exit 0
