# SPDX-License-Identifier: BSD-3-Clause
# Sourced by tests/qemu/guest.sh: the KV API on QEMU's plain NVMe controller ($N0, conventional
# 512-byte blocks) through VFIO, by the host KV engine (hostkv://), under the original SDK's
# sdk_perf, sdk_iterate, kv_perf and the fio KV engine; and the host FTL on QEMU's zoned
# namespace ($NZ).
KVT=/src/$B/tools/kv
KVNEW="hostkv://$N0?zone=8M&format=1"   # a new store (the namespace is taken over)
KVD="hostkv://$N0?zone=8M"              # the store as it was left
t vfio-hostkv-sdk-perf $KVT/sdk_perf -n 2000 -d "$KVNEW"
t vfio-hostkv-sdk-perf-async $KVT/sdk_perf_async -n 2000 -q 16 -d "$KVD"
t vfio-hostkv-sdk-iterate $KVT/sdk_iterate -n 1000 -d "$KVD"
t vfio-hostkv-kv-perf $KVT/kv_perf -w -r -x -e -n 500 -d "$KVD"
head -c 8192 /dev/urandom > $W/kvval
t vfio-hostkv-store $UNVME kv-write "$KVD" -k persist-key -v $W/kvval
t vfio-hostkv-retrieve-after-restart $UNVME kv-read "$KVD" -k persist-key -s 8192 -v $W/kvback
cmp -s $W/kvval $W/kvback && pass vfio-hostkv-value-survives || fail vfio-hostkv-value-survives
if command -v fio >/dev/null 2>&1; then
	printf '{"ssd_type": "kv", "log_file": "%s/kvsdk.log", "device_description": [{"dev_id": "%s", "core_mask": "1", "queue_depth": 64}]}\n' \
		$W "$KVD" > $W/hkv.json
	kfio() { (cd $W && fio --ioengine=external:$FIO_ENGINE --thread=1 --json_path=$W/hkv.json \
		--filename="hostkv\\://0000\\:00\\:04.0?zone=8M" --size=16M --bs=4k --iodepth=16 \
		--verify=crc32c --randrepeat=1 --verify_state_save=0 "$@"); }
	t vfio-hostkv-fio-write kfio --name=w --rw=randwrite --do_verify=0
	t vfio-hostkv-fio-verify kfio --name=v --rw=randwrite --verify_only=1
fi
# the FTL on QEMU's 8 zones of 16 MiB: two for checkpoints, so most of the rest is spare
t vfio-ftl-perf-verify $UNVME perf "ftl://$NZ?op=70&format=1" -w randrw -V -q 16 -t 2
t vfio-ftl-write $UNVME write "ftl://$NZ" -s 50 -c 4 -p 0x66
tout vfio-ftl-read-after-restart "66 66 66" $UNVME read "ftl://$NZ" -s 53 -c 1
