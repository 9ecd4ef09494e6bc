/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IOMMU regions of one device (see emu_iommu.h for the design): appends, holes and hole reuse
 * in place, a rebuilt table only when neither fits; lookups never lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu_ctrl.h"

#define MIN_CAP 16u

/* No initial-exec model: it marks libunvme (and anything linking it) STATIC_TLS, and dlopen
 * (fio loading the ioengine, Python ctypes) then fails with "cannot allocate memory in static
 * TLS block". Executables get the fast model from the linker anyway. */
__thread uint32_t emu_iommu_hint;

static struct emu_iommu_table *table_new(uint32_t cap)
{
	struct emu_iommu_table *t = calloc(1, sizeof(*t) + (size_t)cap * sizeof(t->r[0]));
	if (t)
		t->cap = cap;
	return t;
}

static uint64_t r_iova(const struct emu_iommu_region *r)
{
	return atomic_load_explicit(&r->iova, memory_order_relaxed);
}

static uint64_t r_len(const struct emu_iommu_region *r)
{
	return atomic_load_explicit(&r->len, memory_order_relaxed);
}

/* Fills a slot no lookup can match yet (a hole, or one past n): len last, with release. */
static void r_set(struct emu_iommu_region *r, uint64_t iova, uint64_t len, uint8_t *vaddr)
{
	atomic_store_explicit(&r->iova, iova, memory_order_relaxed);
	atomic_store_explicit(&r->vaddr, vaddr, memory_order_relaxed);
	atomic_store_explicit(&r->len, len, memory_order_release);
}

int emu_iommu_init(struct emu_iommu *m)
{
	struct emu_iommu_table *t = table_new(MIN_CAP);
	if (!t)
		return -ENOMEM;
	atomic_init(&m->cur, t);
	atomic_init(&m->gen, 0);
	m->holes = 0;
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

/* Index of the first entry (region or hole) whose start is > iova, in [0, n]. */
static uint32_t upper(const struct emu_iommu_table *t, uint32_t n, uint64_t iova)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r_iova(&t->r[mid]) <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint8_t *emu_iommu_lookup(const struct emu_iommu_table *t, uint64_t iova, uint64_t len)
{
	uint32_t n = atomic_load_explicit(&t->n, memory_order_acquire);
	uint32_t i = upper(t, n, iova);
	/* the last entry starting at or before iova; a hole there means unmapped: the live
	 * region before it ends before the hole's start */
	if (i == 0)
		return NULL;
	uint8_t *p = emu_iommu_region_at(&t->r[i - 1], iova, len);
	if (p)
		emu_iommu_hint = i - 1;
	return p;
}

uint8_t *emu_iommu_tlb_fill(struct emu_iommu *m, struct emu_iommu_tlb *k, uint64_t iova,
			    uint64_t len)
{
	const struct emu_iommu_table *t = atomic_load_explicit(&m->cur, memory_order_acquire);
	uint8_t *p = emu_iommu_translate(m, iova, len);
	if (!p)
		return NULL;
	/* the region p came from (emu_iommu_translate left its index in the hint); a table
	 * published meanwhile only means one more fill */
	uint32_t h = emu_iommu_hint;
	if (h < atomic_load_explicit(&t->n, memory_order_acquire)) {
		const struct emu_iommu_region *r = &t->r[h];
		uint64_t rlen = atomic_load_explicit(&r->len, memory_order_acquire);
		uint64_t start = atomic_load_explicit(&r->iova, memory_order_relaxed);
		uint8_t *va = atomic_load_explicit(&r->vaddr, memory_order_relaxed);
		if (iova >= start && iova - start < rlen && va + (iova - start) == p) {
			k->iova = start;
			k->len = rlen;
			k->vaddr = va;
		}
	}
	return p;
}

/* Replaces the published table; the old one stays readable until reclaimed. Caller holds
 * lock. */
static void publish(struct emu_iommu *m, struct emu_iommu_table *t)
{
	struct emu_iommu_table *old = atomic_exchange_explicit(&m->cur, t, memory_order_acq_rel);
	old->retired_next = m->retired;
	m->retired = old;
	m->nr_retired++;
}

/* A copy of cur's live regions with room for one more at its place in the order (when add
 * is not NULL); holes are dropped. NULL when out of memory. Caller holds lock. */
static struct emu_iommu_table *rebuild(struct emu_iommu *m, const struct emu_iommu_region *add)
{
	const struct emu_iommu_table *cur = atomic_load_explicit(&m->cur, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&cur->n, memory_order_relaxed);
	uint32_t live = n - m->holes + (add != NULL);
	uint32_t cap = MIN_CAP;
	while (cap < 2 * live)
		cap *= 2;
	struct emu_iommu_table *t = table_new(cap);
	if (!t)
		return NULL;
	uint32_t j = 0;
	bool placed = add == NULL;
	for (uint32_t i = 0; i < n; i++) {
		const struct emu_iommu_region *r = &cur->r[i];
		if (!r_len(r))
			continue;
		if (!placed && r_iova(add) < r_iova(r)) {
			r_set(&t->r[j++], r_iova(add), r_len(add), atomic_load(&add->vaddr));
			placed = true;
		}
		r_set(&t->r[j++], r_iova(r), r_len(r), atomic_load(&r->vaddr));
	}
	if (!placed)
		r_set(&t->r[j++], r_iova(add), r_len(add), atomic_load(&add->vaddr));
	atomic_store_explicit(&t->n, j, memory_order_relaxed);
	m->holes = 0;
	return t;
}

int emu_iommu_add(struct emu_iommu *m, void *vaddr, uint64_t iova, size_t len)
{
	if (!vaddr || len == 0 || iova + len < iova)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	struct emu_iommu_table *cur = atomic_load_explicit(&m->cur, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&cur->n, memory_order_relaxed);
	uint32_t pos = upper(cur, n, iova); /* first entry starting after iova */
	/* overlap with the live region before (skipping holes) or any starting inside */
	for (uint32_t i = pos; i-- > 0;) {
		uint64_t l = r_len(&cur->r[i]);
		if (!l)
			continue;
		if (r_iova(&cur->r[i]) + l > iova) {
			pthread_mutex_unlock(&m->lock);
			return -EEXIST;
		}
		break;
	}
	for (uint32_t i = pos; i < n && r_iova(&cur->r[i]) < iova + len; i++) {
		if (r_len(&cur->r[i])) {
			pthread_mutex_unlock(&m->lock);
			return -EEXIST;
		}
	}
	int rc = 0;
	if (pos == n && n < cur->cap) {
		/* after the last entry: appended in place, published by the count */
		r_set(&cur->r[n], iova, len, vaddr);
		atomic_store_explicit(&cur->n, n + 1, memory_order_release);
	} else if (pos > 0 && !r_len(&cur->r[pos - 1]) &&
		   (pos == n || iova + len <= r_iova(&cur->r[pos]))) {
		/* the hole just before takes it: it starts at or before iova, and the next entry
		 * starts after the new region ends, so every address of the region still finds
		 * this entry as the last one starting at or before it */
		r_set(&cur->r[pos - 1], iova, len, vaddr);
		m->holes--;
	} else if (pos < n && !r_len(&cur->r[pos]) &&
		   (pos + 1 == n || iova + len <= r_iova(&cur->r[pos + 1]))) {
		/* the hole just after takes it: its start moves down to iova, still after the
		 * entry before (which starts at or before iova, and is a hole or ends by iova) */
		r_set(&cur->r[pos], iova, len, vaddr);
		m->holes--;
	} else {
		struct emu_iommu_region add;
		atomic_init(&add.iova, iova);
		atomic_init(&add.len, len);
		atomic_init(&add.vaddr, (uint8_t *)vaddr);
		struct emu_iommu_table *t = rebuild(m, &add);
		if (t)
			publish(m, t);
		else
			rc = -ENOMEM;
	}
	if (rc == 0)
		atomic_fetch_add_explicit(&m->gen, 1, memory_order_release);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int emu_iommu_remove(struct emu_iommu *m, uint64_t iova, size_t len)
{
	pthread_mutex_lock(&m->lock);
	struct emu_iommu_table *cur = atomic_load_explicit(&m->cur, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&cur->n, memory_order_relaxed);
	uint32_t pos = upper(cur, n, iova);
	struct emu_iommu_region *r = pos ? &cur->r[pos - 1] : NULL;
	if (!r || r_iova(r) != iova || r_len(r) != len || len == 0) {
		pthread_mutex_unlock(&m->lock);
		return -ENOENT;
	}
	atomic_store_explicit(&r->len, 0, memory_order_release);
	atomic_fetch_add_explicit(&m->gen, 1, memory_order_release);
	m->holes++;
	if (m->holes > MIN_CAP && m->holes > n / 2) {
		/* mostly holes: a compact table keeps lookups short (and cannot fail to help) */
		struct emu_iommu_table *t = rebuild(m, NULL);
		if (t)
			publish(m, t);
	} else if (pos == n) {
		/* the last entry: drop it (and the holes before it) from the count */
		uint32_t k = n;
		while (k > 0 && !r_len(&cur->r[k - 1])) {
			k--;
			m->holes--;
		}
		atomic_store_explicit(&cur->n, k, memory_order_release);
	}
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
