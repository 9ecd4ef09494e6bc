/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The card in its slot: plugging in (create), unplugging (destroy) and BAR0 accesses.
 *
 * Plugging in is a power-on: the URI is parsed, the non-volatile state loaded (a recorded
 * LBA format wins over the URI's), the namespaces created, a power cycle counted, and an
 * unsafe shutdown counted when the previous session ended without a CC.SHN shutdown; then
 * the state file is marked "running". Unplugging stops the engine's work on the device,
 * persists the state (without marking a clean shutdown: only CC.SHN does that) and closes
 * the namespaces.
 *
 * Surprise removal (emu_device_remove) is the card pulled while the host uses it: from that
 * moment reads answer all ones (as a PCIe read to an empty slot completes) and writes go
 * nowhere; the commands in flight are never completed, and once it returns the device
 * touches no host memory and has closed its backing files (a card put back in the slot, or a
 * replacement, may open them). The struct itself stays until emu_device_destroy: a host
 * thread may still hold the pointer for one last register access.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

static void ctrl_free(struct emu_ctrl *c)
{
	for (uint32_t i = 0; i < EMU_MAX_NS; i++)
		if (c->ns[i])
			emu_ns_destroy(c->ns[i]);
	emu_dbwin_free(c);
	emu_latency_free(c);
	emu_fw_free(c);
	emu_queues_free(c);
	free(c->dropped);
	emu_iommu_fini(&c->iommu);
	pthread_mutex_destroy(&c->fault_lock);
	pthread_mutex_destroy(&c->errlog_lock);
	pthread_mutex_destroy(&c->lock);
}

/* Loads the state file and applies what it says to the parameters. */
static int load_state(struct emu_ctrl *c, char *err, size_t errlen)
{
	bool found = false;
	if (!c->p.state_path[0]) {
		memset(&c->nv, 0, sizeof(c->nv));
		c->nv.fw_active = 1;
		c->has_state = false;
	} else {
		int rc = emu_state_load(c->p.state_path, &c->nv, &found, err, errlen);
		if (rc)
			return rc;
		c->has_state = true;
	}
	for (uint32_t i = 0; i < c->p.nr_ns; i++) {
		uint32_t lba = c->nv.ns_lba_size[i];
		/* a format the host chose survives, as long as it fits the namespace's size */
		if (lba && c->p.ns[i].size_bytes % lba == 0)
			c->p.ns[i].lba_size = lba;
	}
	c->nv.power_cycles++;
	if (found && c->nv.running)
		c->nv.unsafe_shutdowns++;
	c->nv.running = true;
	c->error_count = c->nv.error_count;
	return 0;
}

int emu_device_create(const char *uri, struct emu_device **out, char *err, size_t errlen)
{
	return emu_device_create_media(uri, NULL, 0, out, err, errlen);
}

/* Closes the media not handed to a namespace (failure before or during creation). */
static void close_media(const struct emu_media *media, unsigned nmedia, unsigned from)
{
	for (unsigned i = from; i < nmedia; i++) {
		if (media[i].ops)
			media[i].ops->close(media[i].ctx);
		else if (media[i].kv_ops)
			media[i].kv_ops->close(media[i].ctx);
	}
}

int emu_device_create_media(const char *uri, const struct emu_media *media, unsigned nmedia,
			    struct emu_device **out, char *err, size_t errlen)
{
	unsigned handed = 0;
	char dummy[1];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	*out = NULL;
	struct emu_device *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, errlen, "emu: out of memory");
		close_media(media, nmedia, 0);
		return -ENOMEM;
	}
	struct emu_ctrl *c = &dev->ctrl;
	int rc = emu_params_parse(uri, &c->p, err, errlen);
	if (rc) {
		free(dev);
		close_media(media, nmedia, 0);
		return rc;
	}
	/* the ext and kvext namespaces take the media in order */
	unsigned want = 0;
	for (uint32_t i = 0; i < c->p.nr_ns; i++)
		if (c->p.ns[i].ext)
			c->p.ns[i].media = want < nmedia ? &media[want++] : NULL;
	if (want != nmedia) {
		snprintf(err, errlen, "emu URI '%s': %u ext/kvext namespaces for %u media", uri, want, nmedia);
		free(dev);
		close_media(media, nmedia, 0);
		return -EINVAL;
	}
	snprintf(c->uri, sizeof(c->uri), "%s", uri);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->errlog_lock, NULL);
	pthread_mutex_init(&c->fault_lock, NULL);
	atomic_init(&c->faults, 0);
	atomic_init(&c->media_errors, 0);
	atomic_init(&c->aborts_outstanding, 0);
	rc = emu_iommu_init(&c->iommu);
	if (!rc && (emu_queues_alloc(c) || emu_latency_init(c)))
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, errlen, "emu URI '%s': out of memory", uri);
		goto fail;
	}
	rc = load_state(c, err, errlen);
	if (rc)
		goto fail;
	for (uint32_t i = 0; i < c->p.nr_ns; i++) {
		handed += c->p.ns[i].ext && c->p.ns[i].media; /* emu_ns_create owns it now */
		rc = emu_ns_create(&c->p.ns[i], i + 1, &c->ns[i], err, errlen);
		if (rc)
			goto fail;
		c->nr_ns = i + 1;
	}
	c->created_ns = mono_ns();
	emu_regs_init(c);
	emu_fw_init(c);
	emu_features_reset(c);
	rc = emu_ctrl_persist(c);
	if (rc) {
		snprintf(err, errlen, "state file '%s': cannot write: %s", c->p.state_path, strerror(-rc));
		goto fail;
	}
	if (c->p.mode == EMU_MODE_THREAD) {
		rc = emu_engine_attach(c, err, errlen);
		if (rc)
			goto fail;
	}
	*out = dev;
	return 0;
fail:
	ctrl_free(c);
	free(dev);
	close_media(media, nmedia, handed);
	return rc < 0 ? rc : -EINVAL;
}

/* Stops all work on the device and persists its state (without a clean shutdown: only CC.SHN
 * records one); with remove, also marks it pulled out of its slot. */
static void power_off(struct emu_ctrl *c, bool remove)
{
	emu_engine_detach(c);
	emu_dbwin_stop(c);
	pthread_mutex_lock(&c->lock);
	atomic_store(&c->running, false);
	emu_ctrl_persist(c);
	/* waits for host threads inside an SQ (inline mode): they find it dead afterwards */
	emu_ctrl_teardown_queues(c);
	/* only now reads answer all ones: a host that sees them may take back what it gave the
	 * device, which touches nothing any more */
	if (remove)
		atomic_store(&c->removed, true);
	pthread_mutex_unlock(&c->lock);
}

void emu_device_remove(struct emu_device *dev)
{
	struct emu_ctrl *c = &dev->ctrl;
	if (atomic_load(&c->removed))
		return;
	power_off(c, true);
	/* nothing runs any more: the backing files can go (a replacement may open them) */
	for (uint32_t i = 0; i < EMU_MAX_NS; i++) {
		if (c->ns[i])
			emu_ns_destroy(c->ns[i]);
		c->ns[i] = NULL;
	}
	c->nr_ns = 0;
}

bool emu_device_removed(const struct emu_device *dev)
{
	return atomic_load(&dev->ctrl.removed);
}

void emu_device_destroy(struct emu_device *dev)
{
	if (!dev)
		return;
	struct emu_ctrl *c = &dev->ctrl;
	if (!atomic_load(&c->removed))
		power_off(c, false);
	ctrl_free(c);
	free(dev);
}

bool emu_device_outlives_process(const char *uri)
{
	struct emu_params *p = malloc(sizeof(*p)); /* a path per namespace: too big for a stack */
	if (!p)
		return false;
	char err[256];
	bool yes = false;
	if (emu_params_parse(uri, p, err, sizeof(err)) == 0) {
		yes = p->name[0] || p->state_path[0];
		for (uint32_t i = 0; i < p->nr_ns; i++) {
			if (p->ns[i].ext) {
				yes = false;
				break;
			}
			yes = yes || p->ns[i].path[0];
		}
	}
	free(p);
	return yes;
}

size_t emu_bar0_size(const struct emu_device *dev)
{
	return dev->ctrl.bar_size;
}

uint32_t emu_mmio_read32(struct emu_device *dev, uint32_t off)
{
	if (__builtin_expect(atomic_load_explicit(&dev->ctrl.removed, memory_order_acquire), 0))
		return UINT32_MAX; /* nobody in the slot */
	return off < NVME_REG_DBS ? emu_regs_read32(&dev->ctrl, off) : 0;
}

uint64_t emu_mmio_read64(struct emu_device *dev, uint32_t off)
{
	if (__builtin_expect(atomic_load_explicit(&dev->ctrl.removed, memory_order_acquire), 0))
		return UINT64_MAX;
	return off < NVME_REG_DBS ? emu_regs_read64(&dev->ctrl, off) : 0;
}

void emu_mmio_write32(struct emu_device *dev, uint32_t off, uint32_t val)
{
	struct emu_ctrl *c = &dev->ctrl;
	if (__builtin_expect(off >= NVME_REG_DBS, 1)) {
		if (off < c->bar_size)
			emu_doorbell_write(c, off, val);
	} else if (!atomic_load_explicit(&c->removed, memory_order_acquire)) {
		/* (a doorbell of a removed device is ignored: it is not running) */
		emu_regs_write32(c, off, val);
	}
}

void emu_mmio_write64(struct emu_device *dev, uint32_t off, uint64_t val)
{
	/* as two dword writes, low first (what a 32-bit bus would do; ASQ/ACQ accept both) */
	emu_mmio_write32(dev, off, (uint32_t)val);
	emu_mmio_write32(dev, off + 4, (uint32_t)(val >> 32));
}
