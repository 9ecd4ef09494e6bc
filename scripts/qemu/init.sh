#!/bin/busybox sh
# /init of the QEMU test guest: mounts the basics, loads the modules, mounts the source tree
# and the staged userland over 9p, runs tests/qemu/guest.sh and powers off. Markers on the
# serial console are what the host reads; see scripts/qemu/run.sh.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm   # as a booted system has it (BlobFS kill-safe shadows live there)
mount -t tmpfs tmp /tmp
for m in $(cat /modules.list); do
	insmod "$m" 2>/dev/null || echo "init: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro src /src || echo "UNVME-TEST FAIL mount-src"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro stage /stage || echo "UNVME-TEST FAIL mount-stage"
ln -s /stage/lib/ld-linux-x86-64.so.2 /lib64/ld-linux-x86-64.so.2
export LD_LIBRARY_PATH=/stage/lib
export PATH=/stage/bin:/bin:/sbin
export HOME=/tmp UNVME_STATE_DIR=/tmp/unvme-state
cd /src
echo "UNVME-GUEST-UP $(uname -r)"
sh /src/tests/qemu/guest.sh
echo "UNVME-DONE rc=$?"
sync
poweroff -f
