#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVMe/TCP helpers for the QEMU guest, sourced by tcp_guest.sh (the interop tests) and
# bench_tcp.sh (the benchmark). Expects $UNVME (our tool) and $W (a scratch directory).

tcp_lo_up() {
	ifconfig lo 127.0.0.1 up 2>/dev/null || ip link set lo up
}

start_target() { # NAME PORT ARGS...: our target in the background, waits until it serves
	n=$1 p=$2; shift 2
	rm -f $W/$n.port
	$UNVME target --listen 127.0.0.1:$p --port-file $W/$n.port "$@" > $W/$n.out 2> $W/$n.log &
	i=0
	while [ ! -e $W/$n.port ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	[ -e $W/$n.port ]
}

subsys_dev() { # NQN: the block device Linux made for the subsystem's namespace 1
	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ "$(cat $s/subsysnqn 2>/dev/null)" = "$1" ] || continue
		for b in $s/nvme*n1 $s/nvme*/nvme*n1; do
			[ -e "$b" ] && { echo /dev/$(basename $b); return; }
		done
	done
}

wait_dev() { # NQN: waits (10 s at most) for subsys_dev to appear
	i=0
	while [ $i -lt 50 ]; do
		d=$(subsys_dev $1)
		[ -n "$d" ] && [ -b "$d" ] && { echo $d; return; }
		sleep 0.2
		i=$((i + 1))
	done
}

NVMET=/sys/kernel/config/nvmet
nvmet_export() { # NQN FILE PORT: Linux's target (nvmet-tcp) serves FILE as namespace 1 of NQN
	mount -t configfs none /sys/kernel/config 2>/dev/null
	# buffered: tmpfs has no O_DIRECT on this kernel
	[ -d $NVMET ] && mkdir $NVMET/subsystems/$1 && echo 1 > $NVMET/subsystems/$1/attr_allow_any_host &&
		mkdir $NVMET/subsystems/$1/namespaces/1 &&
		echo -n $2 > $NVMET/subsystems/$1/namespaces/1/device_path &&
		echo 1 > $NVMET/subsystems/$1/namespaces/1/buffered_io &&
		echo 1 > $NVMET/subsystems/$1/namespaces/1/enable &&
		mkdir $NVMET/ports/1 && echo tcp > $NVMET/ports/1/addr_trtype && echo ipv4 > $NVMET/ports/1/addr_adrfam &&
		echo 127.0.0.1 > $NVMET/ports/1/addr_traddr && echo $3 > $NVMET/ports/1/addr_trsvcid &&
		ln -s $NVMET/subsystems/$1 $NVMET/ports/1/subsystems/$1
}

nvmet_remove() { # NQN: undoes nvmet_export
	rm -f $NVMET/ports/1/subsystems/$1 2>/dev/null
	echo 0 > $NVMET/subsystems/$1/namespaces/1/enable 2>/dev/null
	rmdir $NVMET/ports/1 $NVMET/subsystems/$1/namespaces/1 $NVMET/subsystems/$1 2>/dev/null
}
