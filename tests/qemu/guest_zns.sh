# SPDX-License-Identifier: BSD-3-Clause
# Sourced by tests/qemu/guest.sh: QEMU's own zoned namespace ($NZ: 4 KiB blocks, 16 MiB zones
# of 4096 blocks, zasl=5: 128 KiB appends, 8 open and active zones) through VFIO with the
# zns commands, unvme perf's zone workloads and fio's zonemode=zbd verify jobs.
FIO_ENGINE=/src/$B/plugins/fio/unvme-fio.so
t vfio-zns-id-ctrl $UNVME zns id-ctrl $NZ
tout vfio-zns-id-ns "zsze:0x1000" $UNVME zns id-ns $NZ
t vfio-zns-reset-all $UNVME zns reset-zone $NZ -a
tout vfio-zns-append-lba "LBA 0x1000" $UNVME zns zone-append $NZ -s 4096 -p 0x41 -c 1
tout vfio-zns-append-next-lba "LBA 0x1002" $UNVME zns zone-append $NZ -s 4096 -p 0x42
tout vfio-zns-report-wp "WP: 0x1003" $UNVME zns report-zones $NZ -d 2
tout vfio-zns-invalid-write "Zone Invalid Write" $UNVME write $NZ -s 4200 -p 0x43
tout vfio-zns-too-large-append "Zone Append may carry" $UNVME zns zone-append $NZ -s 0 -p 1 -c 63
t vfio-zns-finish $UNVME zns finish-zone $NZ -s 4096
tout vfio-zns-full "Zone Is Full" $UNVME zns zone-append $NZ -s 4096 -p 0x44
tout vfio-zns-report-full "FULL" $UNVME zns report-zones $NZ -S full
t vfio-zns-reset-all-again $UNVME zns reset-zone $NZ -a
t vfio-zns-perf-zone-write $UNVME perf $NZ -w zone-write -q 4 -t 2
t vfio-zns-perf-zone-append $UNVME perf $NZ -w zone-append -q 16 -t 2
if [ -x /stage/bin/fio ] || command -v fio >/dev/null 2>&1; then
	zfio() { (cd $W && fio --ioengine=external:$FIO_ENGINE --thread=1 --filename=0000.00.06.0 \
		--zonemode=zbd --direct=1 --verify_state_save=0 "$@"); }
	t vfio-zns-fio-zbd-write-verify zfio --name=zw --rw=write --bs=64k --iodepth=8 --size=64M --verify=crc32c
	# a second fio reads back and checks what the first one wrote
	t vfio-zns-fio-zbd-read-verify zfio --name=zv --rw=read --bs=64k --iodepth=8 --size=64M --verify=crc32c
	t vfio-zns-fio-zbd-randwrite-verify zfio --name=zr --rw=randwrite --bs=4k --iodepth=4 \
		--size=128M --io_size=16M --max_open_zones=4 --verify=crc32c
else
	fail vfio-zns-fio "fio is not staged in the guest"
fi
