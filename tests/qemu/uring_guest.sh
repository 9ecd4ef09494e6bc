# SPDX-License-Identifier: BSD-3-Clause
# Sourced by tests/qemu/guest.sh while every controller is still bound to the kernel's nvme
# driver: the transports for devices the kernel keeps (docs/kernel-backends.md) against the
# guest's Linux 6.1. Uses guest.sh's helpers (pass, fail, t, tout, texit) and its $UNVME, $W.
#   00:05.0 unvme-n1   I/O through /dev/ngXn1 (io_uring passthrough) and /dev/nvmeXn1 (block)
#   00:06.0 unvme-zns  zoned: zone commands through passthrough (io_uring and ioctl)
#   00:07.0 unvme-mnt  mounted: the block transport must refuse it
# Checks that the kernel sees what we wrote (dd on the block device, nvme-cli), and the
# errors a user meets (no permission, a mounted device, a namespace that is not the file's).

kng() { # the generic device of a controller's namespace: /dev/ngXnY (X is the controller's
	# instance, which after a rebind need not be the block device's subsystem instance)
	for g in /sys/bus/pci/devices/$1/nvme/nvme*/ng*; do echo /dev/$(basename $g); return; done
}
uring_rebound() { # waits until the kernel shows a namespace again after a bind (probing is async)
	for i in $(seq 600); do
		d=$(kdev $1)
		[ -b "$d" ] && [ -c "$(kng $1)" ] && return 0
		sleep 0.1
	done
	echo "    after the bind of $1: $(ls /sys/bus/pci/devices/$1/nvme/ 2>&1) / $(ls /dev/ng* /dev/nvme* 2>&1 | tr '\n' ' ')"
	return 1
}
uring_ctrl() { # the kernel's controller name at a PCI address: nvme1
	for c in /sys/bus/pci/devices/$1/nvme/nvme*; do basename $c; return; done
}
U1C=/dev/$(uring_ctrl 0000:00:05.0)
U1B=$(kdev 0000:00:05.0)              # /dev/nvmeXn1
U1G=$(kng 0000:00:05.0)               # /dev/ngXn1
UZB=$(kdev 0000:00:06.0)
UZG=$(kng 0000:00:06.0)
UMB=$(kdev 0000:00:07.0)
echo "# uring: n1 $U1C $U1G $U1B, zns $UZG $UZB, mounted $UMB"

# ---- identity: ours through passthrough is byte for byte what nvme-cli reads ----
tout uring-id-ctrl "QEMU NVMe Ctrl" $UNVME id-ctrl $U1G
tout uring-transport-named "io_uring passthrough on $U1G" $UNVME perf $U1G -t 1 -q 1
$UNVME admin-passthru $U1G -O 6 --cdw10 1 -l 4096 -r -b > $W/ours.id 2>$W/err
nvme id-ctrl $U1C -b > $W/kern.id 2>>$W/err
cmp -s $W/ours.id $W/kern.id && [ -s $W/ours.id ] && pass uring-id-ctrl-matches-nvme-cli ||
	{ fail uring-id-ctrl-matches-nvme-cli; cat $W/err; }
$UNVME admin-passthru $U1G -O 6 -n 1 --cdw10 0 -l 4096 -r -b > $W/ours.ns 2>$W/err
nvme id-ns $U1B -n 1 -b > $W/kern.ns 2>>$W/err
cmp -s $W/ours.ns $W/kern.ns && [ -s $W/ours.ns ] && pass uring-id-ns-matches-nvme-cli ||
	{ fail uring-id-ns-matches-nvme-cli; cat $W/err; }
tout uring-list-ns "1" $UNVME list-ns $U1G
tout uring-controller-device "QEMU NVMe Ctrl" $UNVME id-ctrl $U1C

# ---- data: through passthrough, then the kernel's block device reads the same ----
t uring-pt-write $UNVME write $U1G -s 2000 -c 7 -p 0x5a
dd if=$U1B of=$W/k bs=512 skip=2000 count=8 iflag=direct 2>/dev/null
head -c 4096 /dev/zero | tr '\0' 'Z' > $W/z4k
cmp -s $W/k $W/z4k && pass uring-kernel-reads-what-passthrough-wrote || fail uring-kernel-reads-what-passthrough-wrote
t uring-pt-read $UNVME read $U1G -s 2000 -c 7 -d $W/r
cmp -s $W/r $W/z4k && pass uring-pt-read-matches || fail uring-pt-read-matches
t uring-pt-compare $UNVME compare $U1G -s 2000 -c 7 -d $W/z4k
head -c 4096 /dev/zero > $W/zero4k
texit uring-pt-compare-mismatch 1 $UNVME compare $U1G -s 2000 -c 7 -d $W/zero4k
tout uring-pt-compare-failure-named "Compare Failure" $UNVME compare $U1G -s 2000 -c 7 -d $W/zero4k
# the kernel writes, passthrough reads
head -c 4096 /dev/zero | tr '\0' 'k' > $W/k4k
dd if=$W/k4k of=$U1B bs=4096 seek=300 count=1 oflag=direct 2>/dev/null
t uring-pt-read-kernel-data $UNVME read $U1G -s 2400 -c 7 -d $W/r2
cmp -s $W/r2 $W/k4k && pass uring-pt-reads-what-kernel-wrote || fail uring-pt-reads-what-kernel-wrote
t uring-pt-write-zeroes $UNVME write-zeroes $U1G -s 2000 -c 7
dd if=$U1B of=$W/k bs=512 skip=2000 count=8 iflag=direct 2>/dev/null
cmp -s $W/k $W/zero4k && pass uring-pt-write-zeroes-seen-by-kernel || fail uring-pt-write-zeroes-seen-by-kernel
t uring-pt-flush $UNVME flush $U1G

# ---- the block device transport ----
tout uring-blk-id-ctrl "QEMU NVMe Ctrl" $UNVME id-ctrl $U1B
t uring-blk-write $UNVME write $U1B -s 3000 -c 7 -p 0x42
dd if=$U1B of=$W/k bs=512 skip=3000 count=8 iflag=direct 2>/dev/null
head -c 4096 /dev/zero | tr '\0' 'B' > $W/b4k
cmp -s $W/k $W/b4k && pass uring-blk-data-on-device || fail uring-blk-data-on-device
t uring-blk-compare-through-ioctl $UNVME compare $U1B -s 3000 -c 7 -d $W/b4k
texit uring-blk-compare-mismatch 1 $UNVME compare $U1B -s 3000 -c 7 -d $W/zero4k
# perf --verify takes only its own stamps or zeroes: clear the patterns written above
t uring-zero-test-area $UNVME write-zeroes $U1G -s 2000 -c 1007
t uring-blk-perf-verify $UNVME perf $U1B -w randrw -V -q 16 -t 2
t uring-pt-perf-verify $UNVME perf $U1G -w randrw -V -q 16 -t 2
t uring-pt-perf-qd128 $UNVME perf $U1G -w randread -q 128 -t 1
t uring-pt-perf-128k $UNVME perf $U1G -w randread -b 128k -q 4 -t 1
mke2fs -q $UMB >/dev/null 2>&1 && mkdir -p /mnt/um && mount -t ext2 $UMB /mnt/um
tout uring-blk-refuses-mounted "in use (mounted" $UNVME id-ctrl $UMB
umount /mnt/um
tout uring-pt-wrong-nsid "this device file is namespace 1" $UNVME io-passthru $U1G -O 2 -n 2 -l 512 -r
tout uring-pt-refuses-queue-creation "owns this controller's queues" $UNVME admin-passthru $U1G -O 1 --cdw10 0x10005
tout uring-no-such-device "no such device file" $UNVME id-ctrl /dev/ng9n9
# the fio engine on the generic device: write with checksums, then verify in a second fio
FIOENG=/src/$B/plugins/fio/unvme-fio.so
if [ -e $FIOENG ]; then
	FA="--ioengine=external:$FIOENG --filename=$U1G --thread=1 --size=8M --offset=32M --iodepth=16 --bs=4k --rw=randwrite --verify=crc32c --randrepeat=1"
	t uring-fio-engine-write fio --name=w $FA --do_verify=0
	t uring-fio-engine-verify fio --name=v $FA --verify_only=1
else
	fail uring-fio-engine "$FIOENG is not built"
fi
# the KV SDK on the kernel's controller: LBA mode through passthrough (sync, then async with
# a completion thread polling the core's queue) and on the block device; every value read
# back and verified, then the kernel reads one of them off the block device
KVP=/src/$B/tools/kv/kv_perf
t uring-kv-sdk-lba-pt-sync $KVP -w -r -x -n 300 -k k -m lba -d $U1G
t uring-kv-sdk-lba-pt-async $KVP -w -r -x -e -n 600 -m lba -c 1 -s 0 -q 2 -a 16 -d $U1G
t uring-kv-sdk-lba-blk $KVP -w -r -x -n 300 -k k -m lba -d $U1B
# LBA mode: keys 0..299 with 4 KiB values fill blocks 0..2399 (512 B blocks); block 56 is key 7
head -c 4096 /dev/zero | tr '\0' 'k' > $W/kv4k
dd if=$U1B of=$W/kvk bs=512 skip=56 count=8 iflag=direct 2>/dev/null
cmp -s $W/kvk $W/kv4k && pass uring-kv-sdk-lba-kernel-reads-value || fail uring-kv-sdk-lba-kernel-reads-value
# KV mode: the SDK's vendor KV commands pass through to the controller, which (QEMU's, an NVM
# controller) does not know them: every store fails with the device's answer, nothing hangs
tout uring-kv-sdk-kv-mode-unsupported "KV_ERR_DD_UNSUPPORTED_CMD" $KVP -w -n 4 -m kv -d $U1G
t uring-reset $UNVME reset $U1G
t uring-read-after-reset $UNVME read $U1G -s 2400 -c 7 -d $W/r3

# ---- zoned namespace: zone commands through passthrough ----
# Zone Management Send (79h) reset all; Zone Append (7Dh) 2 blocks to zone 0; Zone
# Management Receive (7Ah) report: the write pointer moved by 2, as the kernel reports too.
t uring-zns-reset-all $UNVME io-passthru $UZG -O 0x79 --cdw13 0x104
head -c 8192 /dev/urandom > $W/za
t uring-zns-append $UNVME io-passthru $UZG -O 0x7d --cdw12 1 -l 8192 -w -i $W/za
$UNVME io-passthru $UZG -O 0x7a --cdw12 1023 -l 4096 -r -b > $W/rz 2>$W/err
wp=$(od -A n -t u8 -j 88 -N 8 $W/rz | tr -d ' ')
[ "$wp" = 2 ] && pass "uring-zns-report-zones-wp (wp $wp)" || { fail uring-zns-report-zones-wp "wp '$wp'"; cat $W/err; }
nvme zns report-zones $UZB -d 1 > $W/kz 2>&1
grep -qiE "WP: *0x2( |$)" $W/kz && pass uring-zns-kernel-sees-wp || { fail uring-zns-kernel-sees-wp; cat $W/kz; }
dd if=$UZB of=$W/kza bs=4096 count=2 iflag=direct 2>/dev/null
cmp -s $W/kza $W/za && pass uring-zns-appended-data || fail uring-zns-appended-data
$UNVME io-passthru $UZB -O 0x7a --cdw12 1023 -l 4096 -r -b > $W/rz2 2>$W/err
cmp -s $W/rz $W/rz2 && pass uring-zns-report-through-block-ioctl || { fail uring-zns-report-through-block-ioctl; cat $W/err; }
t uring-zns-reset-zone0 $UNVME io-passthru $UZG -O 0x79 --cdw13 4

# ---- the controller goes away under a running perf: errors, not a hang or a crash ----
$UNVME perf $U1G -w randread -q 16 -t 10 > $W/gone 2>&1 &
pp=$!
# not by time: once perf holds the device open (a loaded host may take seconds to get there)
for i in $(seq 600); do
	ls -l /proc/$pp/fd 2>/dev/null | grep -q "$U1G" && break
	sleep 0.1
done
sleep 1 # most likely past the open's Identify: the removal then hits I/O (either is fine)
echo 0000:00:05.0 > /sys/bus/pci/drivers/nvme/unbind
wait $pp
rc=$?
echo 0000:00:05.0 > /sys/bus/pci/drivers/nvme/bind
uring_rebound 0000:00:05.0 || fail uring-rebind "no namespace after the bind"
U1B=$(kdev 0000:00:05.0)
U1G=$(kng 0000:00:05.0)
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qi "gone\|failed" $W/gone; then pass "uring-device-removed (exit $rc)"; else fail uring-device-removed "exit $rc"; fi
sed 's/^/    /' $W/gone | tail -n 3
tout uring-removed-then-missing "no such device file" $UNVME id-ctrl /dev/ng97n1

# ---- polled completions: poll queues for one controller (nvme.poll_queues, rebind) ----
tout uring-no-poll-queues-said "no poll queues" $UNVME perf $U1G -t 1 -q 1
echo 1 > /sys/module/nvme/parameters/poll_queues
echo 0000:00:05.0 > /sys/bus/pci/drivers/nvme/unbind
echo 0000:00:05.0 > /sys/bus/pci/drivers/nvme/bind
uring_rebound 0000:00:05.0 || fail uring-rebind "no namespace after the bind"
U1B=$(kdev 0000:00:05.0)
U1G=$(kng 0000:00:05.0)
echo 0 > /sys/module/nvme/parameters/poll_queues
echo "# uring: rebound with a poll queue as $U1G and $U1B"
tout uring-iopoll-used "polled (IOPOLL)" $UNVME perf $U1G -w randrw -V -q 16 -t 2
tout uring-blk-iopoll-used "polled (IOPOLL)" $UNVME perf $U1B -w randrw -V -q 16 -t 2
t uring-blk-iopoll-flush $UNVME flush $U1B
tout uring-iopoll-off-by-option "by interrupt" $UNVME perf "$U1G?iopoll=0" -t 1 -q 4

# ---- permissions: a user without CAP_SYS_ADMIN ----
mkdir -p /etc
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534::/tmp:/bin/sh' >> /etc/passwd
grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >> /etc/group
chmod 755 / /bin /lib /lib64 2>/dev/null # the initramfs root comes from a mode 700 directory
asuser() { su -p nobody -s /bin/sh -c "$*"; }
tout uring-user-no-permission "Permission denied" asuser $UNVME id-ctrl $U1G
tout uring-user-no-permission-advice "run as root" asuser $UNVME id-ctrl $U1G
chmod 666 $U1G $U1B
tout uring-user-passthrough-needs-cap "CAP_SYS_ADMIN" asuser $UNVME id-ctrl $U1G
# the block device still works for a user who may open it: identity from sysfs, block I/O
tout uring-user-block-identity-from-sysfs "QEMU NVMe Ctrl" asuser $UNVME id-ctrl $U1B
asuser $UNVME write $U1B -s 4000 -c 7 -p 0x55 > $W/out 2>&1
asuser $UNVME read $U1B -s 4000 -c 7 -d /tmp/ur > $W/out 2>&1
head -c 4096 /dev/zero | tr '\0' 'U' > $W/u4k
cmp -s /tmp/ur $W/u4k && pass uring-user-block-io || { fail uring-user-block-io; cat $W/out; }
tout uring-user-block-nvme-only-refused "needs NVMe passthrough" asuser $UNVME io-passthru $U1B -O 0x7a -l 4096 -r
chmod 600 $U1G $U1B
