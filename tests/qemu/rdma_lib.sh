#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe/RDMA helpers for the QEMU guest, sourced by rdma_guest.sh (the interop tests) and the
# RDMA part of the benchmark. Soft-RoCE (rdma_rxe) runs over the dummy network device the
# dummy module made (dummy0), so RDMA traffic between two processes of the guest is RoCEv2
# over the kernel's loopback path: software, bound by the CPU. Expects $W (a scratch directory).

RDMA_ADDR=10.77.0.1

rdma_setup() { # rdma-core from the stage where libibverbs looks, then rxe0 over dummy0
	mkdir -p /usr/lib/x86_64-linux-gnu /etc
	[ -e /usr/lib/x86_64-linux-gnu/libibverbs ] || ln -s /stage/lib/libibverbs /usr/lib/x86_64-linux-gnu/libibverbs
	[ -e /etc/libibverbs.d ] || ln -s /stage/etc/libibverbs.d /etc/libibverbs.d
	ip link show dummy0 > /dev/null 2>&1 || ip link add dummy0 type dummy || return 1
	ip addr add $RDMA_ADDR/24 dev dummy0 2> /dev/null
	ip link set dummy0 up || return 1
	[ -d /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev dummy0 || return 1
	[ -d /sys/class/infiniband/rxe0 ]
}

RNVMET=/sys/kernel/config/nvmet
rdma_nvmet_export() { # NQN FILE PORT: Linux's target (nvmet-rdma) serves FILE as namespace 1
	mount -t configfs none /sys/kernel/config 2> /dev/null
	[ -d $RNVMET ] && mkdir $RNVMET/subsystems/$1 && echo 1 > $RNVMET/subsystems/$1/attr_allow_any_host &&
		mkdir $RNVMET/subsystems/$1/namespaces/1 &&
		echo -n $2 > $RNVMET/subsystems/$1/namespaces/1/device_path &&
		echo 1 > $RNVMET/subsystems/$1/namespaces/1/buffered_io &&
		echo 1 > $RNVMET/subsystems/$1/namespaces/1/enable &&
		mkdir $RNVMET/ports/2 && echo rdma > $RNVMET/ports/2/addr_trtype &&
		echo ipv4 > $RNVMET/ports/2/addr_adrfam && echo $RDMA_ADDR > $RNVMET/ports/2/addr_traddr &&
		echo $3 > $RNVMET/ports/2/addr_trsvcid &&
		ln -s $RNVMET/subsystems/$1 $RNVMET/ports/2/subsystems/$1
}

rdma_nvmet_remove() { # NQN: undoes rdma_nvmet_export
	rm -f $RNVMET/ports/2/subsystems/$1 2> /dev/null
	echo 0 > $RNVMET/subsystems/$1/namespaces/1/enable 2> /dev/null
	rmdir $RNVMET/ports/2 $RNVMET/subsystems/$1/namespaces/1 $RNVMET/subsystems/$1 2> /dev/null
}

rdma_start_target() { # NAME PORT ARGS...: our target with an RDMA listener on rxe0's address
	n=$1 p=$2; shift 2
	rm -f $W/$n.port
	$UNVME target --listen rdma:$RDMA_ADDR:$p --port-file $W/$n.port "$@" > $W/$n.out 2> $W/$n.log &
	i=0
	while [ ! -e $W/$n.port ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	[ -e $W/$n.port ]
}

rdma_ext4_cycle() { # TAG NQN DEV CONNECT-ARGS...: ext4 made and filled on DEV (NQN's namespace),
	# disconnect, reconnect with `nvme connect CONNECT-ARGS`, the files read back; disconnected
	tag=$1 nqn=$2 dev=$3; shift 3
	t $tag-mkfs-ext4 mkfs.ext4 -q -F $dev
	mount -t ext4 $dev /mnt/r && cp /src/README.md /src/Makefile /mnt/r/ && sync && umount /mnt/r
	[ $? = 0 ] && pass $tag-mount-copy-umount || fail $tag-mount-copy-umount
	t $tag-disconnect nvme disconnect -n $nqn
	t $tag-reconnect nvme connect "$@"
	dev=$(wait_dev $nqn)
	if [ -n "$dev" ] && mount -t ext4 $dev /mnt/r; then
		cmp -s /src/README.md /mnt/r/README.md && cmp -s /src/Makefile /mnt/r/Makefile &&
			pass $tag-data-after-reconnect || fail $tag-data-after-reconnect "files differ"
		umount /mnt/r
	else
		fail $tag-data-after-reconnect "no device or no mount after reconnect"
	fi
	nvme disconnect -n $nqn > /dev/null 2>&1
}
