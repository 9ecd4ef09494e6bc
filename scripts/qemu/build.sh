#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the QEMU guest's artifacts from Debian packages, cached and keyed by package versions:
#   $CACHE/kernel-<ver>/vmlinuz              the Debian 6.1 kernel (apt-get download + dpkg -x)
#   $CACHE/kernel-<ver>/initramfs-<key>.gz   busybox-static, the kernel modules the tests need
#                                            (nvme, vfio-pci, vfio_iommu_type1, 9p, ext4,
#                                            nvme-tcp, nvmet, nvmet-tcp, and for NVMe/RDMA
#                                            rdma_rxe (soft-RoCE; its ICRC needs the crc32
#                                            shash, which the guest cannot modprobe: loaded
#                                            first), rdma_ucm, ib_uverbs, dummy,
#                                            nvme-rdma, nvmet-rdma; loop for the fabrics
#                                            benchmark's local rows; with their dependency
#                                            closure) and /init
#   $CACHE/stage-<key>/                      guest userland shared read-only over 9p: fio,
#                                            nvme-cli, mkfs.ext4 and rdma (iproute2) with the
#                                            shared libraries ldd lists; rdma-core's libibverbs,
#                                            librdmacm and the rxe provider (lib/libibverbs,
#                                            etc/libibverbs.d: tests/qemu/rdma_lib.sh links
#                                            them where libibverbs looks)
# The project's own binaries and scripts are not copied: the guest mounts the source tree
# read-only over 9p and runs them from the build directory.
# Prints the paths as shell assignments (KERNEL=... INITRD=... STAGE=...).
set -euo pipefail

CACHE=${UNVME_QEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unvme/qemu}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$CACHE/dl"
log() { echo "qemu-build: $*" >&2; }

# The 6.1 kernel image package the linux-image-amd64 metapackage points at (bookworm).
kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6\.1/ {print $2; exit}'
}
KPKG=${UNVME_QEMU_KERNEL_PKG:-$(kernel_pkg)}
if [ -z "$KPKG" ] && [ ! -e "$CACHE/.apt-updated" ]; then
	# a machine whose packages were installed from lists since cleaned: read them again once
	log "apt lists lack linux-image-amd64; running apt-get update"
	apt-get update -qq >/dev/null 2>&1 && mkdir -p "$CACHE" && touch "$CACHE/.apt-updated"
	KPKG=$(kernel_pkg)
fi
if [ -z "$KPKG" ]; then
	KPKG=$(apt-cache search --names-only '^linux-image-6\.1\.[0-9.-]*-amd64$' | awk '{print $1}' | sort -V | tail -n1)
fi
[ -n "$KPKG" ] || { log "no linux-image-6.1.*-amd64 package in the apt sources"; exit 1; }
KVERPKG=$(apt-cache policy "$KPKG" | awk '/Candidate:/ {print $2}')
KDIR="$CACHE/kernel-$KPKG-$KVERPKG"

if [ ! -e "$KDIR/.done" ]; then
	log "fetching $KPKG $KVERPKG"
	rm -rf "$KDIR" && mkdir -p "$KDIR/root"
	(cd "$CACHE/dl" && apt-get download "$KPKG" >/dev/null 2>&1) || { log "apt-get download $KPKG failed"; exit 1; }
	dpkg -x "$CACHE/dl/${KPKG}_"*.deb "$KDIR/root"
	rm -f "$CACHE/dl/${KPKG}_"*.deb
	KVER=$(ls "$KDIR/root/lib/modules")
	cp "$KDIR/root/boot/vmlinuz-$KVER" "$KDIR/vmlinuz"
	depmod -b "$KDIR/root" "$KVER"
	echo "$KVER" > "$KDIR/kver"
	touch "$KDIR/.done"
fi
KVER=$(cat "$KDIR/kver")

# initramfs: keyed by busybox's version and the hash of this script and the init script.
BBVER=$(dpkg-query -W -f='${Version}' busybox-static)
KEY=$(cat "$0" "$HERE/init.sh" | sha256sum | cut -c1-12)-$(echo "$BBVER" | tr -c 'a-zA-Z0-9.\n' _)
INITRD="$KDIR/initramfs-$KEY.gz"
if [ ! -e "$INITRD" ]; then
	log "building the initramfs ($KVER, busybox $BBVER)"
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
	mkdir -p "$T"/{bin,dev,proc,sys,tmp,src,stage,lib64,mnt,lib/modules/"$KVER"}
	cp /bin/busybox "$T/bin/busybox"
	: > "$T/modules.list"
	for m in virtio_pci 9pnet_virtio 9p nvme vfio-pci vfio_iommu_type1 ext4 nvme-tcp nvmet nvmet-tcp \
		dummy crc32_generic rdma_rxe ib_uverbs rdma_ucm nvme-rdma nvmet-rdma loop; do
		modprobe -d "$KDIR/root" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
	done | awk '!seen[$0]++' | while read -r ko; do
		rel=${ko#"$KDIR/root"}
		mkdir -p "$T$(dirname "$rel")"
		cp "$ko" "$T$rel"
		echo "$rel" >> "$T/modules.list"
	done
	cp "$HERE/init.sh" "$T/init"
	chmod +x "$T/init"
	(cd "$T" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
	rm -rf "$T"
	trap - EXIT
fi

# The guest userland from the host's Debian packages: fio, nvme-cli, RocksDB's db_bench and ldb
# (BlobFS's RocksDB tests), mkfs.ext4 (their kernel baseline), and their libraries.
SKEY=$( (dpkg-query -W -f='${Version}' fio nvme-cli libc6 rocksdb-tools e2fsprogs iproute2 \
	libibverbs1 librdmacm1 ibverbs-providers 2>/dev/null; cat "$0") | sha256sum | cut -c1-12)
STAGE="$CACHE/stage-$SKEY"
if [ ! -e "$STAGE/.done" ]; then
	log "staging fio, nvme-cli, db_bench, ldb, mkfs.ext4, rdma and rdma-core's libraries"
	rm -rf "$STAGE" && mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/lib/libibverbs" "$STAGE/etc/libibverbs.d"
	# soft-RoCE's user-space provider: libibverbs loads it by the name in rxe.driver from its
	# compiled-in directory
	RXE=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n1)
	if [ -n "$RXE" ]; then
		cp -L "$RXE" "$STAGE/lib/libibverbs/"
		cp /etc/libibverbs.d/rxe.driver "$STAGE/etc/libibverbs.d/"
	fi
	for b in /usr/bin/fio /usr/sbin/nvme /usr/bin/db_bench /usr/bin/ldb /sbin/mkfs.ext4 /usr/bin/rdma \
		/usr/lib/x86_64-linux-gnu/libibverbs.so.1 /usr/lib/x86_64-linux-gnu/librdmacm.so.1 ${RXE:+"$RXE"}; do
		[ -x "$b" ] || continue
		case "$b" in *.so*) cp -Ln "$b" "$STAGE/lib/" 2>/dev/null || true ;; *) cp -L "$b" "$STAGE/bin/" ;; esac
		ldd "$b" | awk '/=>/ {print $3} /ld-linux/ {print $1}' | while read -r l; do
			[ -e "$l" ] && cp -Ln "$l" "$STAGE/lib/" 2>/dev/null || true
		done
	done
	# the libraries the project's own binaries link (json-c, ...)
	for l in /lib/x86_64-linux-gnu/libjson-c.so.5 /lib/x86_64-linux-gnu/liburing.so.2 \
		/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libfuse3.so.3 \
		/lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libgcc_s.so.1 \
		/lib/x86_64-linux-gnu/libcrypto.so.3; do
		[ -e "$l" ] && cp -Ln "$l" "$STAGE/lib/" 2>/dev/null || true
	done
	touch "$STAGE/.done"
fi

echo "KERNEL=$KDIR/vmlinuz"
echo "INITRD=$INITRD"
echo "STAGE=$STAGE"
echo "KVER=$KVER"
