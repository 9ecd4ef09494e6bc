/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IOMMU regions of one device (see emu_iommu.h for the design). Mapping and unmapping build a
 * new sorted table and publish it atomically; lookups never lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

/* No initial-exec model: it marks libunvme (and anything linking it) STATIC_TLS, and dlopen
 * (fio loading the ioengine, Python ctypes) then fails with "cannot allocate memory in static
 * TLS block". Executables get the fast model from the linker anyway. */
__thread uint32_t emu_iommu_hint;

static struct emu_iommu_table *table_new(uint32_t n)
{
	struct emu_iommu_table *t = calloc(1, sizeof(*t) + (size_t)n * sizeof(t->r[0]));
	if (t)
		t->n = n;
	return t;
}

int emu_iommu_init(struct emu_iommu *m)
{
	struct emu_iommu_table *t = table_new(0);
	if (!t)
		return -ENOMEM;
	atomic_init(&m->cur, t);
	m->retired = NULL;
	m->nr_retired = 0;
	return -pthread_mutex_init(&m->lock, NULL);
}

void emu_iommu_reclaim(struct emu_iommu *m)
{
	pthread_mutex_lock(&m->lock);
	while (m->retired) {
		struct emu_iommu_table *t = m->retired;
		m->retired = t->retired_next;
		free(t);
	}
	m->nr_retired = 0;
	pthread_mutex_unlock(&m->lock);
}

void emu_iommu_fini(struct emu_iommu *m)
{
	emu_iommu_reclaim(m);
	free(atomic_load(&m->cur));
	pthread_mutex_destroy(&m->lock);
}

uint8_t *emu_iommu_lookup(const struct emu_iommu_table *t, uint64_t iova, uint64_t len)
{
	uint32_t lo = 0, hi = t->n;
	/* last region whose start is <= iova */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->r[mid].iova <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct emu_iommu_region *r = &t->r[lo - 1];
	uint64_t off = iova - r->iova;
	if (off >= r->len || len > r->len - off)
		return NULL;
	emu_iommu_hint = lo - 1;
	return r->vaddr + off;
}

/* Replaces the published table; the old one stays readable until fini. Caller holds lock. */
static void publish(struct emu_iommu *m, struct emu_iommu_table *t)
{
	struct emu_iommu_table *old = atomic_exchange_explicit(&m->cur, t, memory_order_acq_rel);
	old->retired_next = m->retired;
	m->retired = old;
	m->nr_retired++;
}

int emu_iommu_add(struct emu_iommu *m, void *vaddr, uint64_t iova, size_t len)
{
	if (!vaddr || len == 0 || iova + len < iova)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	const struct emu_iommu_table *cur = atomic_load_explicit(&m->cur, memory_order_relaxed);
	uint32_t pos = 0;
	while (pos < cur->n && cur->r[pos].iova < iova)
		pos++;
	/* overlap with the region before or the one at pos */
	if ((pos > 0 && cur->r[pos - 1].iova + cur->r[pos - 1].len > iova) ||
	    (pos < cur->n && cur->r[pos].iova < iova + len)) {
		pthread_mutex_unlock(&m->lock);
		return -EEXIST;
	}
	struct emu_iommu_table *t = table_new(cur->n + 1);
	if (!t) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	memcpy(t->r, cur->r, pos * sizeof(t->r[0]));
	t->r[pos] = (struct emu_iommu_region){ .iova = iova, .len = len, .vaddr = vaddr };
	memcpy(&t->r[pos + 1], &cur->r[pos], (cur->n - pos) * sizeof(t->r[0]));
	publish(m, t);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Unmapping takes exactly a region that was mapped (as VFIO_IOMMU_UNMAP_DMA does for whole
 * mappings); anything else is -ENOENT. */
int emu_iommu_remove(struct emu_iommu *m, uint64_t iova, size_t len)
{
	pthread_mutex_lock(&m->lock);
	const struct emu_iommu_table *cur = atomic_load_explicit(&m->cur, memory_order_relaxed);
	uint32_t pos = 0;
	while (pos < cur->n && !(cur->r[pos].iova == iova && cur->r[pos].len == len))
		pos++;
	if (pos == cur->n) {
		pthread_mutex_unlock(&m->lock);
		return -ENOENT;
	}
	struct emu_iommu_table *t = table_new(cur->n - 1);
	if (!t) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	memcpy(t->r, cur->r, pos * sizeof(t->r[0]));
	memcpy(&t->r[pos], &cur->r[pos + 1], (cur->n - pos - 1) * sizeof(t->r[0]));
	publish(m, t);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/*
 * Lookups run only under the controller lock (admin commands, the engine's passes, enabling
 * the controller) or under an SQ's busy lock (I/O). Holding all of them for a moment is a
 * grace period after which no lookup can still be reading a retired table.
 */
static void maybe_reclaim(struct emu_ctrl *c)
{
	pthread_mutex_lock(&c->iommu.lock);
	bool due = c->iommu.nr_retired >= EMU_IOMMU_RETIRED_MAX;
	pthread_mutex_unlock(&c->iommu.lock);
	if (!due)
		return;
	pthread_mutex_lock(&c->lock);
	emu_io_quiesce(c);
	emu_iommu_reclaim(&c->iommu);
	emu_io_unquiesce(c);
	pthread_mutex_unlock(&c->lock);
}

int emu_iommu_map(struct emu_device *dev, void *vaddr, uint64_t iova, size_t len)
{
	int rc = emu_iommu_add(&dev->ctrl.iommu, vaddr, iova, len);
	if (rc == 0)
		maybe_reclaim(&dev->ctrl);
	return rc;
}

int emu_iommu_unmap(struct emu_device *dev, uint64_t iova, size_t len)
{
	int rc = emu_iommu_remove(&dev->ctrl.iommu, iova, len);
	if (rc == 0)
		maybe_reclaim(&dev->ctrl);
	return rc;
}
