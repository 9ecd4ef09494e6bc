/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated NVMe controller as the platform sees it: a card in a PCIe slot.
 *
 * This is the whole interface between the "hardware" (hw/emu) and the host side. The host
 * reaches the device only through BAR0 register reads and writes (including doorbells) and
 * through the IOMMU, which says which DMA addresses the device may touch. The device never
 * sees a driver structure; the driver never sees a device structure.
 */
#ifndef UNVME_EMU_DEVICE_H
#define UNVME_EMU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct emu_device;

/*
 * Creates (plugs in) a device described by an "emu://" URI; see docs/devices.md for the
 * grammar. On failure returns a negative errno and writes a one-line reason naming the bad
 * part of the URI or the file into err.
 */
int emu_device_create(const char *uri, struct emu_device **out, char *err, size_t errlen);

/*
 * Media that the creator of a device provides, for the namespaces the URI declares as
 * "ns=ext:<size>:<lba>" (block media) and "ns=kvext:<size>" (a key-value store): a host FTL or
 * a host key-value engine built on another device presents itself through a real NVMe
 * controller this way, so the driver reaches it only through the NVMe protocol. Byte offsets
 * and lengths are checked by the controller (in range, multiples of the LBA size). Data
 * operations return 0 or an NVMe status word (NVME_CQE_STATUS form, bit 15 = DNR); flush and
 * erase 0 or -errno. Every operation may run on several threads at once.
 */
struct emu_media_ops {
	uint16_t (*read)(void *ctx, uint64_t off, const struct iovec *iov, unsigned iovcnt, uint32_t len);
	/* durable: on stable media when it returns (FUA, or the write cache is off) */
	uint16_t (*write)(void *ctx, uint64_t off, const struct iovec *iov, unsigned iovcnt,
			  uint32_t len, bool durable);
	/* [off, off + len) reads as zeroes afterwards (Write Zeroes, deallocation) */
	uint16_t (*zero)(void *ctx, uint64_t off, uint64_t len, bool deallocate, bool durable);
	int (*flush)(void *ctx);
	int (*erase)(void *ctx);   /* Format NVM: everything reads as zeroes */
	void (*close)(void *ctx);  /* the device is unplugged: last call */
};

/* The key-value store of a "kvext" namespace, as the KV command sets use it. Keys of up to
 * 255 bytes in keyspace 0 or 1; values of up to 2 MiB. Statuses are enum emu_kv_rc. */
enum emu_kv_rc {
	EMU_KV_OK = 0,
	EMU_KV_NOENT,   /* no such key */
	EMU_KV_EXISTS,  /* the key exists (store with "must not exist") */
	EMU_KV_NOSPC,   /* no room for the value */
	EMU_KV_BADOFF,  /* value offset beyond the stored value */
	EMU_KV_TOOBIG,  /* offset + length beyond the maximum value size */
	EMU_KV_NOMEM,
	EMU_KV_EIO,     /* the media failed */
};
#define EMU_KV_MUST_EXIST     1u
#define EMU_KV_MUST_NOT_EXIST 2u
struct emu_kv_usage {
	uint64_t capacity, used, nr_keys, nr_keys_ks[2];
	uint64_t host_bytes, media_bytes, compactions;
};
struct emu_kv_media_ops {
	/* len bytes of val at byte off of the value (off 0 replaces it; off > 0 keeps the bytes
	 * around and extends; off past the end, or any off for a new key, is BADOFF) */
	int (*put)(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen, const uint8_t *val,
		   uint32_t len, uint32_t off, unsigned flags, bool durable);
	/* copies the value from byte off into iov (at most max bytes); *size = stored size,
	 * *copied = bytes copied */
	int (*get)(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen, uint32_t off,
		   const struct iovec *iov, unsigned iovcnt, uint32_t max, uint32_t *size,
		   uint32_t *copied);
	int (*del)(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen, bool durable);
	bool (*exist)(void *ctx, uint8_t ks, const uint8_t *key, uint8_t klen);
	int (*flush)(void *ctx);
	int (*erase)(void *ctx);
	void (*usage)(void *ctx, struct emu_kv_usage *out);
	/* the keys of keyspace ks that filter accepts, packed {u8 len, bytes}, malloc'd */
	int (*keys)(void *ctx, uint8_t ks, bool (*filter)(const uint8_t *key, uint8_t klen, const void *arg),
		    const void *arg, uint8_t **buf, size_t *len, size_t *count);
	void (*close)(void *ctx);
};

struct emu_media {
	const struct emu_media_ops *ops;       /* ns=ext */
	const struct emu_kv_media_ops *kv_ops; /* ns=kvext */
	void *ctx;
};

/* Like emu_device_create, with media[i] behind the i-th ext or kvext namespace of the URI.
 * Every media's close is called exactly once: by emu_device_destroy, or here on failure. */
int emu_device_create_media(const char *uri, const struct emu_media *media, unsigned nmedia,
			    struct emu_device **out, char *err, size_t errlen);

/* Unplugs the device: stops its engine, persists non-volatile state, closes backing files.
 * If the host never requested a shutdown (CC.SHN), the next power-on counts an unsafe shutdown. */
void emu_device_destroy(struct emu_device *dev);

/* Surprise removal: the card is pulled out of its slot while the host may be using it.
 * Afterwards register reads return all ones, writes are ignored, commands in flight are
 * never completed, the device touches no host memory and its backing files are closed
 * (state persisted, an unsafe shutdown counted unless CC.SHN completed). Register access and
 * IOMMU calls stay safe until emu_device_destroy frees it. Idempotent. */
void emu_device_remove(struct emu_device *dev);
bool emu_device_removed(const struct emu_device *dev);

/*
 * The doorbell window (emu_dbwin.c): a memfd laid out like the doorbell area of BAR0 that
 * other processes map and write their I/O queues' doorbells into, as they would into a real
 * controller's BAR; the device acts on what they write. Created at the first call; every call
 * returns a new descriptor of it (close it when done), its length and the offset of its wake
 * word: a writer that finds it non-zero after a doorbell store sets it to 0 and wakes the
 * word's sleepers (FUTEX_WAKE on the shared mapping; lib/common/futex.h futex_kick): the
 * device's watcher sleeps there when it found nothing for a while. 0 or a negative errno.
 */
int emu_device_doorbell_window(struct emu_device *dev, int *fd, size_t *len, uint64_t *wake_off);

/* Does the device a URI describes outlive a process, as hardware does: it has a name, or a
 * namespace or its state lives in a file? (A device whose media a program provides, ext or
 * kvext, never does: the media are that program's.) false for a URI that does not parse. */
bool emu_device_outlives_process(const char *uri);

/* Size of BAR0 in bytes (registers plus doorbells). */
size_t emu_bar0_size(const struct emu_device *dev);

/* MMIO. Offsets are bytes into BAR0; reads of undefined registers return 0, writes to
 * read-only or undefined registers are ignored, as on hardware. Thread safe: several host
 * threads may ring doorbells of different queues at once. */
uint32_t emu_mmio_read32(struct emu_device *dev, uint32_t off);
uint64_t emu_mmio_read64(struct emu_device *dev, uint32_t off);
void emu_mmio_write32(struct emu_device *dev, uint32_t off, uint32_t val);
void emu_mmio_write64(struct emu_device *dev, uint32_t off, uint64_t val);

/*
 * The IOMMU in front of the device. The host maps each DMA region before handing its bus
 * addresses (IOVAs) to the device; a data pointer outside every mapping makes the command
 * fail with Data Transfer Error, never a stray access. Thread safe against the device engine.
 * Returns 0, -EEXIST for an overlap, -ENOENT when unmapping something not mapped.
 */
int emu_iommu_map(struct emu_device *dev, void *vaddr, uint64_t iova, size_t len);
int emu_iommu_unmap(struct emu_device *dev, uint64_t iova, size_t len);

#endif
