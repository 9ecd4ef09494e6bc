#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe over RDMA in the QEMU guest over soft-RoCE (rdma_rxe on dummy0), sourced by
# tests/qemu/guest.sh (its pass/fail/t/tout helpers, $UNVME and $W):
#   (0) the rig: rxe0 comes up and Linux's host (nvme-cli, nvme-rdma) reaches Linux's target
#       (nvmet-rdma): discovery, connect, ext4 made and filled, disconnect, reconnect, files
#       read back. This baseline says the guest's RDMA works before our code is judged on it.
#   (1) our verbs layer and the NVMe/RDMA queue engines (lib/fabrics/rdma) on the real
#       provider: their unit tests run on rxe0 (connect with NVMe/RDMA private data, a
#       refused request, send/receive, RDMA READ and WRITE, a bad RKEY, a host's queue against
#       a controller's with data verified, a lying host), and the target's RDMA wire's
#       (our host queue engine against our target: allow-list, lengths, RKEYs, limits).
#   (2) Linux's host (nvme-cli, nvme-rdma) against our target's RDMA listener: discovery,
#       connect, fio with verification, ext4 made and filled, disconnect, reconnect, files
#       read back; a host not on the allow-list refused (Connect Invalid Host, logged).
#   (3) our host (nvme-rdma:// device ids, lib/transport/rdma) against our target and against
#       Linux's nvmet-rdma: id-ctrl, a write read back and compared, unvme perf with
#       verification; against ours, a host not on the allow-list refused.
#   (4) our discovery over RDMA (unvme discover / connect-all with nvme-rdma:// and -t rdma)
#       against our target's and Linux's nvmet-rdma's discovery subsystems: the records
#       (RDMA, address, port, NQN, TSAS) in text and JSON, connect-all following the RDMA
#       record under an alias, and a write read back through that alias; connect -t rdma -a -s
#       -n --alias and the same data read through its alias.
. /src/tests/qemu/tcp_lib.sh
. /src/tests/qemu/rdma_lib.sh
RKN=nqn.2024-01.io.linux:nvmet-rdma
mkdir -p /etc/nvme /mnt/r

if rdma_setup > $W/out 2>&1; then
	pass "rdma-rxe-up ($(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/0 2> /dev/null))"
else
	fail rdma-rxe-up "$(tail -n 3 $W/out)"
fi

# ---- (0) Linux's host against Linux's target: the rig's baseline ----
truncate -s 64M /tmp/rnvmet.img
if rdma_nvmet_export $RKN /tmp/rnvmet.img 4420; then
	pass rdma-nvmet-configured
else
	fail rdma-nvmet-configured "configfs setup of nvmet-rdma failed"
fi
tout rdma-linux-discover-nvmet "subnqn:  $RKN" nvme discover -t rdma -a $RDMA_ADDR -s 4420
t rdma-linux-connect-nvmet nvme connect -t rdma -a $RDMA_ADDR -s 4420 -n $RKN
DEV=$(wait_dev $RKN)
[ -n "$DEV" ] && pass "rdma-linux-nvmet-block-device ($DEV)" || fail rdma-linux-nvmet-block-device "no /dev/nvmeXnY for $RKN"
if [ -n "$DEV" ]; then
	rdma_ext4_cycle rdma-linux-nvmet $RKN $DEV -t rdma -a $RDMA_ADDR -s 4420 -n $RKN
fi
rdma_nvmet_remove $RKN

# ---- (1) our verbs layer and queue engines on rxe ----
# The unit tests of lib/fabrics/rdma again, on librdmacm/libibverbs over rxe0 instead of the
# fake verbs (the ones that need the fake's controls report themselves skipped).
for ut in verbs queue target; do
	UT=/src/${UNVME_BUILD:-build}/tests/unit/rdma/test_rdma_$ut
	if [ -x $UT ]; then
		RDMA_TEST_VERBS=ibv RDMA_TEST_ADDR=$RDMA_ADDR UNVME_MP=0 UNVME_QUIET=1 timeout 300 $UT > $W/ut 2>&1
		rc=$?
		if [ $rc = 0 ] || [ $rc = 77 ]; then
			pass "rdma-unit-$ut-on-rxe ($(tail -n 1 $W/ut))"
		else
			fail rdma-unit-$ut-on-rxe "exit $rc"; grep -v '^ok ' $W/ut | sed 's/^/    /' | tail -n 20
		fi
	else
		fail rdma-unit-$ut-on-rxe "$UT missing"
	fi
done

# ---- (2) Linux's host against our target (unvme target --listen rdma:...) ----
RTN=nqn.2024-01.io.unvme:rdma-target
RHN=nqn.2014-08.io.unvme:rdma-host
truncate -s 128M /tmp/rdmag.img
if rdma_start_target rtgt 4421 --nqn $RTN -d "emu://rguest?ns=file:128M:4096:/tmp/rdmag.img" --allow-host $RHN; then
	pass rdma-target-starts
else
	fail rdma-target-starts; sed 's/^/    /' $W/rtgt.log | tail -n 10
fi
tout rdma-linux-discover-ours "subnqn:  $RTN" nvme discover -t rdma -a $RDMA_ADDR -s 4421 --hostnqn=$RHN
t rdma-linux-connect-ours nvme connect -t rdma -a $RDMA_ADDR -s 4421 -n $RTN --hostnqn=$RHN
DEV=$(wait_dev $RTN)
[ -n "$DEV" ] || { dmesg | grep -i "nvme\|rdma" | tail -n 8 | sed 's/^/    kernel: /'; tail -n 8 $W/rtgt.log | sed 's/^/    target: /'; }
[ -n "$DEV" ] && pass "rdma-linux-ours-block-device ($DEV)" || fail rdma-linux-ours-block-device "no /dev/nvmeXnY for $RTN"
if [ -n "$DEV" ]; then
	# 4 KiB to 128 KiB: in-capsule writes, keyed writes (RDMA READ) and reads (RDMA WRITE)
	t rdma-linux-ours-fio-verify fio --name=rdma --filename=$DEV --ioengine=libaio --direct=1 --rw=randwrite \
		--bsrange=4k-128k --size=16M --iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1
	rdma_ext4_cycle rdma-linux-ours $RTN $DEV -t rdma -a $RDMA_ADDR -s 4421 -n $RTN --hostnqn=$RHN
fi
# a host not on the allow-list: Connect Invalid Host, logged by the target
nvme connect -t rdma -a $RDMA_ADDR -s 4421 -n $RTN --hostnqn=nqn.2014-08.io.unvme:stranger > $W/out 2>&1
rc=$?
if [ $rc != 0 ] && grep -q "stranger.*Connect Invalid Host" $W/rtgt.log && [ -z "$(subsys_dev $RTN)" ]; then
	pass rdma-linux-ours-host-not-allowed-refused
else
	fail rdma-linux-ours-host-not-allowed-refused "exit $rc"; tail -n 5 $W/rtgt.log | sed 's/^/    /'
	nvme disconnect -n $RTN > /dev/null 2>&1
fi
# ---- (3) our host (nvme-rdma://) against our target and against nvmet-rdma ----
ourhost_rw() { # TAG DEVID: id-ctrl names the subsystem, a write read back, perf verified
	tag=$1 d=$2 nqn=${2#*://*/}
	nqn=${nqn%%\?*}
	tout $tag-id-ctrl "$nqn" $UNVME id-ctrl "$d"
	head -c 65536 /dev/urandom > $W/rpat
	t $tag-write $UNVME write "$d" -s 64 -d $W/rpat
	rm -f $W/rback
	t $tag-read $UNVME read "$d" -s 64 -z 65536 -d $W/rback
	if cmp -s $W/rpat $W/rback; then pass $tag-read-back-equal; else fail $tag-read-back-equal; fi
	# perf --verify accepts only zeroes and its own stamps: the namespace holds the pattern
	# above (and, on ours, section 2's ext4), so --fill writes zeroes over it first. (Without
	# it, 115 of ~4,100 I/Os on ours failed, every one a block of ext4's with no stamp: taken
	# for a data defect of the RDMA host until perf said which blocks were foreign.)
	t $tag-perf-verify $UNVME perf "$d" --fill -w randrw -V -q 16 -t 2
	# 64 KiB: past in-capsule data, so writes go by the controller's RDMA READ of host memory
	t $tag-perf-verify-64k $UNVME perf "$d" -w randrw -b 64k -V -q 8 -t 2
}
ourhost_rw rdma-ourhost-ours "nvme-rdma://$RDMA_ADDR:4421/$RTN?hostnqn=$RHN"
# a host not on the allow-list: refused at Connect, the message says so, the target logs it
tout rdma-ourhost-ours-host-not-allowed-refused "does not allow host" \
	$UNVME id-ctrl "nvme-rdma://$RDMA_ADDR:4421/$RTN?hostnqn=nqn.2014-08.io.unvme:stranger-ours"
if grep -q "stranger-ours.*Connect Invalid Host" $W/rtgt.log; then
	pass rdma-ourhost-ours-refusal-logged
else
	fail rdma-ourhost-ours-refusal-logged; tail -n 5 $W/rtgt.log | sed 's/^/    /'
fi
# TLS and digests are NVMe/TCP's: refused before anything is sent
tout rdma-ourhost-tls-refused "NVMe/RDMA has no TLS" $UNVME id-ctrl "nvme-rdma://$RDMA_ADDR:4421/$RTN?tls=1"

# ---- (4) our discovery over RDMA ----
ourhost_discovery() { # TAG DISC-ID NQN PORT ALIAS: discover lists NQN as an RDMA record at
	# $RDMA_ADDR:PORT with its TSAS, connect-all follows it under ALIAS0, a write read back there
	tag=$1 d=$2 nqn=$3 port=$4 alias=$5
	$UNVME discover "$d" > $W/dtext 2>&1
	if grep -q "subnqn:  $nqn" $W/dtext && grep -q "trtype:  rdma" $W/dtext &&
		grep -q "traddr:  $RDMA_ADDR" $W/dtext && grep -q "trsvcid: $port" $W/dtext &&
		grep -q "rdma_qptype: connected" $W/dtext && grep -q "rdma_cms:    rdma-cm" $W/dtext; then
		pass $tag-discover
	else
		fail $tag-discover; sed 's/^/    /' $W/dtext | tail -n 20
	fi
	$UNVME discover "$d" -o json > $W/djson 2>&1
	if grep -q "\"subnqn\": *\"$nqn\"" $W/djson && grep -q '"trtype": *"rdma"' $W/djson &&
		grep -q "\"trsvcid\": *\"$port\"" $W/djson && grep -q '"rdma_qptype": *"connected"' $W/djson &&
		grep -q '"rdma_cms": *"rdma-cm"' $W/djson && grep -q '"rdma_prtype"' $W/djson; then
		pass $tag-discover-json
	else
		fail $tag-discover-json; sed 's/^/    /' $W/djson | tail -n 30
	fi
	rm -f $W/$alias.json
	t $tag-connect-all env UNVME_CONFIG=$W/$alias.json $UNVME connect-all "$d" --alias $alias
	env UNVME_CONFIG=$W/$alias.json $UNVME devices > $W/ddevs 2>&1
	if grep -q "^${alias}0  *nvme-rdma://$RDMA_ADDR:$port/$nqn?" $W/ddevs; then
		pass $tag-connect-all-alias-is-rdma
	else
		fail $tag-connect-all-alias-is-rdma; sed 's/^/    /' $W/ddevs | tail -n 5
	fi
	head -c 32768 /dev/urandom > $W/dpat
	t $tag-alias-write env UNVME_CONFIG=$W/$alias.json $UNVME write ${alias}0 -s 256 -d $W/dpat
	rm -f $W/dback
	t $tag-alias-read env UNVME_CONFIG=$W/$alias.json $UNVME read ${alias}0 -s 256 -z 32768 -d $W/dback
	if cmp -s $W/dpat $W/dback; then pass $tag-alias-read-back-equal; else fail $tag-alias-read-back-equal; fi
}
ourhost_discovery rdma-ourhost-disc-ours "nvme-rdma://$RDMA_ADDR:4421?hostnqn=$RHN" $RTN 4421 rdours
# nvme-cli's form: -t rdma -a ADDR -s PORT, for discover and connect
tout rdma-ourhost-disc-ours-t-a-s "subnqn:  $RTN" $UNVME discover -t rdma -a $RDMA_ADDR -s 4421 -q $RHN
rm -f $W/rdconn.json
tout rdma-ourhost-connect-t-a-s-n "connected to $RTN" env UNVME_CONFIG=$W/rdconn.json \
	$UNVME connect -t rdma -a $RDMA_ADDR -s 4421 -n $RTN -q $RHN --alias rdconn
t rdma-ourhost-connect-alias-read env UNVME_CONFIG=$W/rdconn.json $UNVME read rdconn -s 256 -z 32768 -d $W/dback2
if cmp -s $W/dpat $W/dback2; then pass rdma-ourhost-connect-alias-read-back-equal; else fail rdma-ourhost-connect-alias-read-back-equal; fi
# a host not on the allow-list sees only the discovery subsystem
$UNVME discover "nvme-rdma://$RDMA_ADDR:4421?hostnqn=nqn.2014-08.io.unvme:stranger-disc" > $W/out 2>&1
if grep -q "Number of Records 1," $W/out && ! grep -q "$RTN" $W/out; then
	pass rdma-ourhost-disc-ours-stranger-sees-none
else
	fail rdma-ourhost-disc-ours-stranger-sees-none; sed 's/^/    /' $W/out | tail -n 10
fi
truncate -s 64M /tmp/rnvmet2.img
if rdma_nvmet_export $RKN /tmp/rnvmet2.img 4420; then
	pass rdma-nvmet-configured-for-ourhost
	ourhost_rw rdma-ourhost-nvmet "nvme-rdma://$RDMA_ADDR/$RKN?hostnqn=$RHN"
	# nvmet-rdma's discovery subsystem, on the port it serves (4420: also the default here)
	ourhost_discovery rdma-ourhost-disc-nvmet "nvme-rdma://$RDMA_ADDR?hostnqn=$RHN" $RKN 4420 rdnvmet
else
	fail rdma-nvmet-configured-for-ourhost "configfs setup of nvmet-rdma failed"
fi
rdma_nvmet_remove $RKN
kill $(jobs -p) 2> /dev/null
wait 2> /dev/null
grep -i "error\|failed" $W/rtgt.log | grep -v stranger | tail -n 5 | sed 's/^/    target: /'
