#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Gives NVMe controllers to uNVMe (vfio-pci) and back to the kernel, and reserves hugepages.
# POSIX sh: it also runs under busybox (the QEMU test guest).
#
#   scripts/setup.sh [config]            hugepages + every NVMe controller that is safe to take
#   scripts/setup.sh config "BDF ..."    hugepages + only these controllers
#   scripts/setup.sh status              a table: BDF, NUMA node, driver, device name, use
#   scripts/setup.sh reset ["BDF ..."]   controllers back to the kernel nvme driver, hugepages freed
#   scripts/setup.sh install             build and install the library, headers and tools
#                                        (make install: PREFIX, BUILD and DESTDIR as for make)
#
# Environment: NRHUGE (2 MiB hugepages to reserve, default 512), HUGENODE (reserve on this
# NUMA node only), PCI_ALLOWED (a BDF list, same as the config argument), FORCE=1 (take a
# controller even if it holds mounted file systems; never the one holding /).
set -u

NVME_CLASS=0x010802
SYS=/sys/bus/pci
NRHUGE=${NRHUGE:-512}
PROG=$(basename "$0")

die() { echo "$PROG: $*" >&2; exit 1; }
warn() { echo "$PROG: $*" >&2; }

usage() {
	sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

# The install step goes through make install, the project's one way to install (meson install
# of the build directory), so setup.sh and make never install different things.
do_install() {
	root=$(cd "$(dirname "$0")/.." && pwd)
	command -v make >/dev/null || die "make missing: run scripts/install-deps.sh"
	make -C "$root" install ${PREFIX:+PREFIX="$PREFIX"} ${BUILD:+BUILD="$BUILD"} ||
		die "make install failed"
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "must run as root (binding drivers and reserving hugepages need it)"
}

# Normalises 02:00.0 / 0000.02.00.0 / 0000:02:00.0 to 0000:02:00.0; empty if not a BDF.
norm_bdf() {
	echo "$1" | tr 'A-F.' 'a-f:' | awk -F: '
		NF == 3 { printf "0000:%s:%s\n", $1, $2 "." $3; next }
		NF == 4 && length($1) == 4 { printf "%s:%s:%s.%s\n", $1, $2, $3, $4; next }
		NF == 2 { printf "0000:%s:%s\n", $1, $2; next }' |
		grep -E '^[0-9a-f]{4}:[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7]$' || true
}

nvme_bdfs() {
	for d in "$SYS"/devices/*; do
		[ -e "$d/class" ] || continue
		[ "$(cat "$d/class")" = "$NVME_CLASS" ] && basename "$d"
	done
}

driver_of() {
	if [ -e "$SYS/devices/$1/driver" ]; then basename "$(readlink "$SYS/devices/$1/driver")"; else echo "-"; fi
}

# Block devices (namespaces and partitions) of a controller bound to the kernel driver.
blockdevs_of() {
	for c in "$SYS/devices/$1"/nvme/nvme*; do
		[ -d "$c" ] || continue
		cn=$(basename "$c")
		# nvme0n1 directly under the controller, or nvme0c0n1 (multipath) pointing at nvme0n1
		for n in "$c"/nvme*n*; do
			[ -d "$n" ] || continue
			b=$(basename "$n")
			case "$b" in *c*n*) b=$(echo "$b" | sed 's/c[0-9]*n/n/') ;; esac
			echo "$b"
			for p in /sys/block/"$b"/"$b"p*; do [ -d "$p" ] && basename "$p"; done
		done
		: "$cn"
	done | sort -u
}

ctrl_name_of() {
	for c in "$SYS/devices/$1"/nvme/nvme*; do [ -d "$c" ] && basename "$c"; done | head -n1
}

# Why a controller must not be taken ("" when it is free): mounts, swap, holders, root.
in_use_by() {
	why=""
	for b in $(blockdevs_of "$1"); do
		m=$(awk -v d="/dev/$b" '$1 == d { print $2 }' /proc/mounts | tr '\n' ' ')
		[ -n "$m" ] && why="$why /dev/$b mounted on ${m% };"
		case " $m " in *" / "*) why="$why ROOT;" ;; esac
		grep -q "^/dev/$b " /proc/swaps 2>/dev/null && why="$why /dev/$b is swap;"
		h=$(ls /sys/block/"$b"/holders 2>/dev/null | tr '\n' ' ')
		[ -z "$h" ] && [ -d /sys/class/block/"$b"/holders ] && h=$(ls /sys/class/block/"$b"/holders 2>/dev/null | tr '\n' ' ')
		[ -n "$h" ] && why="$why /dev/$b used by ${h% };"
	done
	echo "$why"
}

check_vfio() {
	if [ ! -d "$SYS/drivers/vfio-pci" ]; then
		command -v modprobe >/dev/null 2>&1 && modprobe vfio-pci 2>/dev/null
	fi
	[ -d "$SYS/drivers/vfio-pci" ] ||
		die "VFIO is missing: the vfio-pci driver is not loaded and cannot be (modprobe vfio-pci; the kernel needs CONFIG_VFIO_PCI)"
	if [ -z "$(ls /sys/kernel/iommu_groups 2>/dev/null)" ]; then
		die "no IOMMU: /sys/kernel/iommu_groups is empty. Enable VT-d/AMD-Vi in the firmware and boot with intel_iommu=on (or amd_iommu=on); under QEMU add -device intel-iommu and -machine q35"
	fi
}

reserve_hugepages() {
	[ "$NRHUGE" -gt 0 ] 2>/dev/null || return 0
	if [ -n "${HUGENODE:-}" ]; then
		f=/sys/devices/system/node/node$HUGENODE/hugepages/hugepages-2048kB/nr_hugepages
	else
		f=/proc/sys/vm/nr_hugepages
	fi
	[ -w "$f" ] || { warn "cannot reserve hugepages ($f missing); DMA memory falls back to locked pages"; return 0; }
	echo "$NRHUGE" > "$f" 2>/dev/null
	got=$(cat "$f")
	[ "$got" -lt "$NRHUGE" ] && warn "asked for $NRHUGE hugepages, got $got (memory is fragmented or short)"
	grep -q hugetlbfs /proc/mounts || { mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null; }
	echo "hugepages: $got x 2 MiB"
}

bind_one() {
	bdf=$1 drv=$2
	dev="$SYS/devices/$bdf"
	cur=$(driver_of "$bdf")
	[ "$cur" = "$drv" ] && { echo "$bdf: already bound to $drv"; return 0; }
	echo "$drv" > "$dev/driver_override" || return 1
	[ "$cur" != "-" ] && { echo "$bdf" > "$dev/driver/unbind" || return 1; }
	echo "$bdf" > "$SYS/drivers_probe" 2>/dev/null
	now=$(driver_of "$bdf")
	[ "$now" = "$drv" ] || { warn "$bdf: bind to $drv failed (now: $now)"; return 1; }
	echo "$bdf ($cur -> $drv)"
}

# Validates a user's BDF list; prints the normalised BDFs or dies with what is wrong.
select_bdfs() {
	for a in $1; do
		b=$(norm_bdf "$a")
		[ -n "$b" ] || die "'$a' is not a PCI address (expected 0000:02:00.0 or 02:00.0)"
		[ -d "$SYS/devices/$b" ] || die "$b: no such PCI device (see: $PROG status)"
		[ "$(cat "$SYS/devices/$b/class")" = "$NVME_CLASS" ] ||
			die "$b: not an NVMe controller (class $(cat "$SYS/devices/$b/class"), NVMe is $NVME_CLASS)"
		echo "$b"
	done
}

do_config() {
	need_root
	list=${1:-${PCI_ALLOWED:-}}
	if [ -n "$list" ]; then bdfs=$(select_bdfs "$list") || exit 1; else bdfs=$(nvme_bdfs); fi
	[ -n "$bdfs" ] || { warn "no NVMe controllers found"; reserve_hugepages; return 0; }
	check_vfio
	reserve_hugepages
	rc=0
	for b in $bdfs; do
		why=$(in_use_by "$b")
		case "$why" in
		*ROOT*) warn "$b: refused: it holds the root file system (${why% ROOT;})"; rc=1; continue ;;
		"") ;;
		*) if [ "${FORCE:-0}" != 1 ]; then
			warn "$b: refused: in use:$why unmount it first (or FORCE=1)"; rc=1; continue
		   fi ;;
		esac
		bind_one "$b" vfio-pci || rc=1
		g=$(basename "$(readlink "$SYS/devices/$b/iommu_group" 2>/dev/null)" 2>/dev/null)
		[ -n "$g" ] && [ -e "/dev/vfio/$g" ] || { warn "$b: /dev/vfio/$g did not appear"; rc=1; }
	done
	return $rc
}

do_reset() {
	need_root
	list=${1:-${PCI_ALLOWED:-}}
	if [ -n "$list" ]; then bdfs=$(select_bdfs "$list") || exit 1; else bdfs=$(nvme_bdfs); fi
	rc=0
	for b in $bdfs; do
		echo "" > "$SYS/devices/$b/driver_override" 2>/dev/null
		cur=$(driver_of "$b")
		[ "$cur" = nvme ] && continue
		[ "$cur" != "-" ] && echo "$b" > "$SYS/devices/$b/driver/unbind"
		[ -d "$SYS/drivers/nvme" ] || { command -v modprobe >/dev/null 2>&1 && modprobe nvme 2>/dev/null; }
		echo "$b" > "$SYS/drivers_probe" 2>/dev/null
		now=$(driver_of "$b")
		echo "$b ($cur -> $now)"
		[ "$now" = nvme ] || rc=1
	done
	[ -w /proc/sys/vm/nr_hugepages ] && echo 0 > /proc/sys/vm/nr_hugepages
	return $rc
}

do_status() {
	printf "%-13s %-5s %-10s %-9s %-12s %s\n" BDF NUMA VENDOR:DEV DRIVER DEVICE "BLOCK DEVICES / USE"
	for b in $(nvme_bdfs); do
		d="$SYS/devices/$b"
		node=$(cat "$d/numa_node" 2>/dev/null || echo -)
		[ "$node" = "-1" ] && node=0
		ids="$(sed 's/0x//' "$d/vendor"):$(sed 's/0x//' "$d/device")"
		drv=$(driver_of "$b")
		case "$drv" in
		vfio-pci) g=$(basename "$(readlink "$d/iommu_group")"); name="vfio/$g"; use="-" ;;
		*) name=$(ctrl_name_of "$b"); name=${name:--}
		   use="$(blockdevs_of "$b" | tr '\n' ' ')$(in_use_by "$b")"; use=${use:--} ;;
		esac
		printf "%-13s %-5s %-10s %-9s %-12s %s\n" "$b" "$node" "$ids" "$drv" "$name" "$use"
	done
	h=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
	echo "hugepages: $h x 2 MiB reserved, $(awk '/HugePages_Free/ {print $2}' /proc/meminfo) free"
}

cmd=${1:-config}
case "$cmd" in
config) do_config "${2:-}" ;;
reset) do_reset "${2:-}" ;;
status) do_status ;;
install) do_install ;;
help|-h|--help) usage 0 ;;
*) warn "unknown command '$cmd'"; usage 2 ;;
esac
