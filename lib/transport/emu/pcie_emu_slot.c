/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCIe slot the emulated controller is plugged into. This file is the only place where
 * the driver meets hw/emu, and it meets only the card's external interface: BAR0 register
 * access and the platform IOMMU. Everything above it is the same code that drives hardware.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "unvme/emu.h"
#include "hw/emu/emu_device.h"
#include "lib/driver/ctrlr.h"
#include "lib/driver/devid.h"
#include "lib/driver/errmsg.h"
#include "lib/driver/transport.h"

static int emu_matches(const char *address)
{
	return unvme_addr_is_emu(address);
}

/*
 * A slot holds one card at a time. The driver's register accesses and IOMMU programming go
 * to the card in it now; a card pulled out (unvme_emu_unplug) answers all ones until another
 * is plugged in. Pulled cards are freed only when the controller detaches: a thread that
 * loaded the card's pointer just before it was swapped may still make one access to it.
 * The slot remembers the IOMMU mappings, as the platform's IOMMU would keep them, so a new
 * card sees the host's DMA memory at the same addresses.
 */
struct slot_map {
	void *vaddr;
	uint64_t iova;
	size_t len;
};

struct emu_slot {
	_Atomic(struct emu_device *) card;
	struct unvme_ctrlr *ctrlr;
	pthread_mutex_t lock;          /* mappings, plug and unplug */
	struct slot_map *maps;
	size_t nr_maps, cap_maps;
	struct emu_device **pulled;    /* cards taken out, freed at detach */
	size_t nr_pulled;
	struct emu_slot *next;         /* in slots */
};

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_slot *slots;

static struct emu_device *card_of(void *ctx)
{
	return atomic_load_explicit(&((struct emu_slot *)ctx)->card, memory_order_acquire);
}

static int emu_attach(struct unvme_ctrlr *ctrlr, const char *address)
{
	struct emu_slot *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	char err[512] = "";
	struct emu_device *dev;
	int rc = emu_device_create(address, &dev, err, sizeof(err));
	if (rc) {
		free(s);
		return unvme_fail(rc, "%s", err[0] ? err : strerror(-rc));
	}
	atomic_init(&s->card, dev);
	s->ctrlr = ctrlr;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_lock(&slots_lock);
	s->next = slots;
	slots = s;
	pthread_mutex_unlock(&slots_lock);
	ctrlr->transport_ctx = s;
	return 0;
}

static void emu_detach(struct unvme_ctrlr *ctrlr)
{
	struct emu_slot *s = ctrlr->transport_ctx;
	pthread_mutex_lock(&slots_lock);
	for (struct emu_slot **pp = &slots; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&slots_lock);
	emu_device_destroy(card_of(s));
	for (size_t i = 0; i < s->nr_pulled; i++)
		emu_device_destroy(s->pulled[i]);
	free(s->pulled);
	free(s->maps);
	pthread_mutex_destroy(&s->lock);
	free(s);
	ctrlr->transport_ctx = NULL;
}

static uint32_t slot_read32(void *ctx, uint32_t off)
{
	return emu_mmio_read32(card_of(ctx), off);
}

static void slot_write32(void *ctx, uint32_t off, uint32_t val)
{
	emu_mmio_write32(card_of(ctx), off, val);
}

static uint64_t slot_read64(void *ctx, uint32_t off)
{
	return emu_mmio_read64(card_of(ctx), off);
}

static void slot_write64(void *ctx, uint32_t off, uint64_t val)
{
	emu_mmio_write64(card_of(ctx), off, val);
}

static int slot_dma_map(void *ctx, void *vaddr, uint64_t iova, size_t len)
{
	struct emu_slot *s = ctx;
	pthread_mutex_lock(&s->lock);
	int rc = 0;
	if (s->nr_maps == s->cap_maps) {
		size_t cap = s->cap_maps ? 2 * s->cap_maps : 16;
		struct slot_map *m = realloc(s->maps, cap * sizeof(*m));
		if (!m)
			rc = -ENOMEM;
		else {
			s->maps = m;
			s->cap_maps = cap;
		}
	}
	if (rc == 0)
		rc = emu_iommu_map(card_of(s), vaddr, iova, len);
	if (rc == 0)
		s->maps[s->nr_maps++] = (struct slot_map){ vaddr, iova, len };
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void slot_dma_unmap(void *ctx, uint64_t iova, size_t len)
{
	struct emu_slot *s = ctx;
	pthread_mutex_lock(&s->lock);
	emu_iommu_unmap(card_of(s), iova, len);
	for (size_t i = 0; i < s->nr_maps; i++) {
		if (s->maps[i].iova == iova && s->maps[i].len == len) {
			s->maps[i] = s->maps[--s->nr_maps];
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

/* The slot of an open emulated controller, by device id, in *out; 0 or a negative errno
 * with a message. Holding slots_lock keeps it from being detached (and freed) meanwhile. */
static int slot_find_locked(const char *devid, const char *what, struct emu_slot **out)
{
	char address[4352];
	if (!devid)
		return unvme_fail(-EINVAL, "%s: no device id", what);
	int rc = unvme_devid_resolve(devid, address, sizeof(address));
	if (rc)
		return rc;
	if (!unvme_addr_is_emu(address))
		return unvme_fail(-EINVAL, "%s: '%s' is not an emulated device (emu://): only an "
				  "emulated card can be pulled and put back by a program", what, devid);
	for (struct emu_slot *s = slots; s; s = s->next) {
		if (strcmp(s->ctrlr->address, address) == 0) {
			*out = s;
			return 0;
		}
	}
	return unvme_fail(-ENODEV, "%s: '%s' is not open in this process", what, devid);
}

/* The device at devid's address is not in a slot of this process: the process may be a
 * client of the process that runs it, which pulls or puts the card for it (lib/driver/mp/mp_client.c).
 * *handled: false when devid is not open here at all (the slot's own error stands). */
static int card_elsewhere(const char *devid, const char *card, bool plug, bool *handled)
{
	char address[4352];
	*handled = false;
	if (!devid || unvme_devid_resolve(devid, address, sizeof(address)) != 0)
		return 0;
	struct unvme_ctrlr *c = ctrlr_open_find(address);
	if (!c)
		return 0;
	int rc = 0;
	if (plug ? c->ops->card_plug != NULL : c->ops->card_unplug != NULL) {
		*handled = true;
		rc = plug ? c->ops->card_plug(c, card) : c->ops->card_unplug(c);
	}
	unvme_ctrlr_close(c);
	return rc;
}

UNVME_API int unvme_emu_unplug(const char *devid)
{
	pthread_mutex_lock(&slots_lock);
	struct emu_slot *s = NULL;
	int frc = slot_find_locked(devid, "unplug", &s);
	if (frc) {
		pthread_mutex_unlock(&slots_lock);
		bool handled;
		int rc = frc == -ENODEV ? card_elsewhere(devid, NULL, false, &handled) : 0;
		return frc == -ENODEV && handled ? rc : frc;
	}
	pthread_mutex_lock(&s->lock);
	struct emu_device *card = card_of(s);
	bool empty = emu_device_removed(card);
	if (!empty) {
		ctrlr_hotplug_removing(s->ctrlr);
		emu_device_remove(card); /* returns once the card touches no host memory */
	}
	pthread_mutex_unlock(&s->lock);
	if (empty) {
		pthread_mutex_unlock(&slots_lock);
		return unvme_fail(-EALREADY, "unplug: the slot of '%s' is empty already", devid);
	}
	ctrlr_hotplug_removed(s->ctrlr);
	pthread_mutex_unlock(&slots_lock);
	return 0;
}

UNVME_API int unvme_emu_plug(const char *devid, const char *card_uri)
{
	pthread_mutex_lock(&slots_lock);
	struct emu_slot *s = NULL;
	int frc = slot_find_locked(devid, "plug", &s);
	if (frc) {
		pthread_mutex_unlock(&slots_lock);
		if (frc == -ENODEV && card_uri && !unvme_addr_is_emu(card_uri))
			return unvme_fail(-EINVAL, "plug: the card '%s' is not an emu:// URI", card_uri);
		bool handled;
		int rc = frc == -ENODEV ? card_elsewhere(devid, card_uri, true, &handled) : 0;
		return frc == -ENODEV && handled ? rc : frc;
	}
	const char *uri = card_uri ? card_uri : s->ctrlr->address;
	int rc = 0;
	if (card_uri && !unvme_addr_is_emu(card_uri))
		rc = unvme_fail(-EINVAL, "plug: the card '%s' is not an emu:// URI", card_uri);
	pthread_mutex_lock(&s->lock);
	struct emu_device *old = card_of(s);
	if (rc == 0 && !emu_device_removed(old))
		rc = unvme_fail(-EBUSY, "plug: the slot of '%s' holds a card; unplug it first", devid);
	struct emu_device *dev = NULL;
	struct emu_device **pulled = NULL;
	if (rc == 0) {
		pulled = realloc(s->pulled, (s->nr_pulled + 1) * sizeof(*pulled));
		if (!pulled)
			rc = -ENOMEM;
		else
			s->pulled = pulled;
	}
	if (rc == 0) {
		char err[512] = "";
		rc = emu_device_create(uri, &dev, err, sizeof(err));
		if (rc)
			unvme_fail(rc, "plug: %s", err[0] ? err : strerror(-rc));
	}
	/* the platform's IOMMU kept the host's mappings: the new card sees the same memory */
	for (size_t i = 0; rc == 0 && i < s->nr_maps; i++)
		rc = emu_iommu_map(dev, s->maps[i].vaddr, s->maps[i].iova, s->maps[i].len);
	if (rc == 0) {
		s->pulled[s->nr_pulled++] = old;
		atomic_store_explicit(&s->card, dev, memory_order_release);
	} else if (dev) {
		emu_device_destroy(dev);
		unvme_fail(rc, "plug: the new card cannot map the host's DMA memory");
	}
	pthread_mutex_unlock(&s->lock);
	if (rc == 0)
		rc = ctrlr_hotplug_arrived(s->ctrlr);
	pthread_mutex_unlock(&slots_lock);
	return rc;
}

static int slot_share_doorbells(void *ctx, int *fd, uint64_t *off, size_t *len, uint64_t *wake_off)
{
	*off = 0;
	return emu_device_doorbell_window(card_of(ctx), fd, len, wake_off);
}

/* A device with a name or files outlives the processes that use it (docs/multi-process.md):
 * a device process runs it. */
static bool slot_serve_apart(const char *address)
{
	return emu_device_outlives_process(address);
}

static const struct unvme_transport_ops emu_ops = {
	.attach = emu_attach,
	.detach = emu_detach,
	.read32 = slot_read32,
	.write32 = slot_write32,
	.read64 = slot_read64,
	.write64 = slot_write64,
	.dma_map = slot_dma_map,
	.dma_unmap = slot_dma_unmap,
	.share_doorbells = slot_share_doorbells,
	.serve_apart = slot_serve_apart,
	.iommu_outlives_card = true, /* the slot keeps the mappings (struct emu_slot) */
};

static const char *const emu_schemes[] = {"emu://", NULL};
static const struct unvme_transport unvme_transport_emu = {
	.name = "emu",
	.schemes = emu_schemes,
	.kind = UNVME_TRANSPORT_REGISTERS,
	.rank = 10,
	.matches = emu_matches,
	.ops = &emu_ops,
};
UNVME_TRANSPORT_REGISTER(unvme_transport_emu);
