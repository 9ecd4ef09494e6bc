#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe/TCP interop in the QEMU guest, sourced by tests/qemu/guest.sh (its pass/fail/t/tout
# helpers, $UNVME and $W). Over the guest's loopback:
#   (a) Linux's host (nvme-cli, nvme-tcp) against our target: discovery, the namespace as a
#       block device, fio with verify, ext4 made, filled, unmounted, disconnected, reconnected
#       and read back; a host not on the allow-list and hosts without the right DH-HMAC-CHAP
#       secret are refused;
#   (b) our host against Linux's target (nvmet-tcp, configured through configfs): discovery,
#       id-ctrl, write / read / compare, perf with verify.
# Debian's 6.1 kernel is built without CONFIG_NVME_AUTH: its host cannot authenticate at all,
# so the test checks that it is refused (with a right or a wrong secret) and says why.
TN=nqn.2024-01.io.unvme:guest
SN=nqn.2024-01.io.unvme:guest-secure
KN=nqn.2024-01.io.linux:nvmet
HUUID=1b4e28ba-2fa1-11d2-883f-0016d3ccabcd
HN=nqn.2014-08.org.nvmexpress:uuid:$HUUID
KEY='DHHC-1:00:QH1FKOt525UX4Tjtw7N6MRy/KmFCzTsukXIQJ7FDnjVkKI+m:'
BADKEY='DHHC-1:00:QTkdhv9Qoc69KBnvV2E9cGCBBZ2NtsQ8Lo9qd7WbzLK89oly:'

. /src/tests/qemu/tcp_lib.sh
tcp_lo_up
mkdir -p /etc/nvme /mnt/t
echo $HN > /etc/nvme/hostnqn
echo $HUUID > /etc/nvme/hostid

# ---- (a) Linux's host against our target ----
truncate -s 128M /tmp/tcpg.img
if start_target tgt 4420 --nqn $TN -d "emu://guest?ns=file:128M:4096:/tmp/tcpg.img" --allow-host $HN; then
	pass tcp-target-starts
else
	fail tcp-target-starts; sed 's/^/    /' $W/tgt.log | tail -n 10
fi
tout tcp-linux-discover "subnqn:  $TN" nvme discover -t tcp -a 127.0.0.1 -s 4420
t tcp-linux-connect nvme connect -t tcp -a 127.0.0.1 -s 4420 -n $TN
DEV=$(wait_dev $TN)
[ -n "$DEV" ] && pass "tcp-linux-block-device ($DEV)" || fail tcp-linux-block-device "no /dev/nvmeXnY for $TN"
if [ -n "$DEV" ]; then
	t tcp-linux-fio-verify fio --name=tcp --filename=$DEV --ioengine=libaio --direct=1 --rw=randwrite \
		--bs=4k --size=16M --iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1
	t tcp-linux-mkfs-ext4 mkfs.ext4 -q -F $DEV
	mount -t ext4 $DEV /mnt/t && cp /src/README.md /src/Makefile /mnt/t/ && sync && umount /mnt/t
	[ $? = 0 ] && pass tcp-linux-mount-copy-umount || fail tcp-linux-mount-copy-umount
	t tcp-linux-disconnect nvme disconnect -n $TN
	t tcp-linux-reconnect nvme connect -t tcp -a 127.0.0.1 -s 4420 -n $TN
	DEV=$(wait_dev $TN)
	if [ -n "$DEV" ] && mount -t ext4 $DEV /mnt/t; then
		cmp -s /src/README.md /mnt/t/README.md && cmp -s /src/Makefile /mnt/t/Makefile &&
			pass tcp-linux-data-after-reconnect || fail tcp-linux-data-after-reconnect "files differ"
		umount /mnt/t
	else
		fail tcp-linux-data-after-reconnect "no device or no mount after reconnect"
	fi
	nvme disconnect -n $TN > /dev/null 2>&1
fi
# a host not on the allow-list: Connect Invalid Host, logged by the target
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n $TN --hostnqn=nqn.2014-08.io.unvme:stranger > $W/out 2>&1
rc=$?
if [ $rc != 0 ] && grep -q "stranger.*Connect Invalid Host" $W/tgt.log; then pass tcp-linux-host-not-allowed-refused
else fail tcp-linux-host-not-allowed-refused "exit $rc"; tail -n 5 $W/tgt.log | sed 's/^/    /'; fi
nvme disconnect -n $TN > /dev/null 2>&1

# a subsystem that requires DH-HMAC-CHAP
if start_target sec 4422 --nqn $SN -d "emu://gsec?ns=mem:16M" --allow-host $HN --dhchap-secret "$KEY"; then
	nvme connect -t tcp -a 127.0.0.1 -s 4422 -n $SN --dhchap-secret="$BADKEY" > $W/out 2>&1
	rc=$?
	[ $rc != 0 ] && [ -z "$(subsys_dev $SN)" ] && pass tcp-linux-wrong-secret-refused ||
		{ fail tcp-linux-wrong-secret-refused "exit $rc"; nvme disconnect -n $SN > /dev/null 2>&1; }
	nvme connect -t tcp -a 127.0.0.1 -s 4422 -n $SN --dhchap-secret="$KEY" > $W/out 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		pass tcp-linux-right-secret-accepted
		nvme disconnect -n $SN > /dev/null 2>&1
	elif dmesg | grep -q "authentication setup failed"; then
		# the kernel cannot authenticate (CONFIG_NVME_AUTH off): refusing it is right
		pass "tcp-linux-right-secret-refused-kernel-without-nvme-auth"
		echo "# Linux $(uname -r) has no in-band authentication (CONFIG_NVME_AUTH): DH-HMAC-CHAP interop is checked against our host only"
	else
		fail tcp-linux-right-secret-accepted "exit $rc"; tail -n 5 $W/out | sed 's/^/    /'
	fi
	# our host with the same secrets, in the same guest
	tout tcp-ourhost-dhchap-right-secret "UNVME-NS" sh -c "$UNVME list-ns 'nvme-tcp://127.0.0.1:4422/$SN?dhchap_secret=$KEY' >/dev/null && echo UNVME-NS"
	tout tcp-ourhost-dhchap-wrong-secret-refused "refused the host" $UNVME id-ctrl "nvme-tcp://127.0.0.1:4422/$SN?dhchap_secret=$BADKEY"
fi

# ---- (b) our host against Linux's target ----
truncate -s 128M /tmp/nvmet.img
if nvmet_export $KN /tmp/nvmet.img 4421; then
	pass tcp-nvmet-configured
else
	fail tcp-nvmet-configured "configfs setup of nvmet-tcp failed"
fi
D="nvme-tcp://127.0.0.1:4421/$KN"
tout tcp-ourhost-discover-nvmet "subnqn:  $KN" $UNVME discover -a 127.0.0.1 -s 4421
tout tcp-ourhost-nvmet-id-ctrl "subnqn    : $KN" $UNVME id-ctrl $D
t tcp-ourhost-nvmet-write $UNVME write $D -s 2048 -c 63 -p 0x6b
t tcp-ourhost-nvmet-read $UNVME read $D -s 2048 -c 63 -d $W/nvmet.rd
# (nvmet gives a file namespace the file system's block size: 64 blocks of 4 KiB on tmpfs)
head -c "$(wc -c < $W/nvmet.rd)" /dev/zero | tr '\0' 'k' > $W/nvmet.exp  # 0x6b is 'k'
[ -s $W/nvmet.rd ] && cmp -s $W/nvmet.rd $W/nvmet.exp && pass tcp-ourhost-nvmet-read-matches ||
	fail tcp-ourhost-nvmet-read-matches
# back to zeroes: perf --verify accepts only its own stamps or zeroes (nvmet has no Compare)
t tcp-ourhost-nvmet-zero $UNVME write $D -s 2048 -c 63 -p 0
t tcp-ourhost-nvmet-perf-verify $UNVME perf $D -w randrw -V -q 16 -t 2
t tcp-ourhost-nvmet-perf-digests $UNVME perf "$D?hdgst=1&ddgst=1" -w randrw -b 64k -V -q 4 -t 2

# cleanup: the bench and later tests find a clean guest
nvmet_remove $KN
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
