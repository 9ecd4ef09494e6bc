/* SPDX-License-Identifier: BSD-3-Clause */
/* The zoned-device layer under the host engines: see zdev.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "lib/zoned/zdev.h"

#define DEFAULT_EMU_ZONE (16ull << 20)

int zdev_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int zdev_parse_num(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	if (!*v || *v < '0' || *v > '9')
		return -1;
	unsigned long long x = strtoull(v, &end, 10);
	uint64_t mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ull * 1024 * 1024, end++;
	if (*end || x > hi / mul || x * mul < lo)
		return -1;
	*out = x * mul;
	return 0;
}


static struct unvme_ns *pick_ns(struct unvme_ctrlr *c, uint32_t nsid)
{
	if (nsid)
		return unvme_ctrlr_ns(c, nsid);
	struct unvme_ns *nvm = NULL;
	for (uint32_t id = unvme_ctrlr_first_nsid(c); id; id = unvme_ctrlr_next_nsid(c, id)) {
		struct unvme_ns *ns = unvme_ctrlr_ns(c, id);
		if (unvme_ns_csi(ns) == NVME_CSI_ZNS)
			return ns;
		if (!nvm && unvme_ns_csi(ns) == NVME_CSI_NVM)
			nvm = ns;
	}
	return nvm;
}

/* The device's zones: geometry and every zone's state and write pointer. */
static int load_zones(struct zdev *z, char *err, size_t errlen)
{
	struct unvme_zns_info zi;
	unvme_zns_info(z->ns, &zi);
	if (zi.zone_size % z->page_lbas)
		return zdev_fail(err, errlen, -EINVAL, "zone size %llu blocks is not a whole number of 4 KiB pages",
			    (unsigned long long)zi.zone_size);
	z->nzones = (uint32_t)zi.nr_zones;
	z->zone_pages = zi.zone_size / z->page_lbas;
	z->max_open = zi.max_open;
	z->max_append_pages = zi.zasl_bytes / ZDEV_PAGE;
	z->wp = calloc(z->nzones, sizeof(*z->wp));
	z->state = calloc(z->nzones, 1);
	struct unvme_zone *zones = calloc(z->nzones, sizeof(*zones));
	if (!z->wp || !z->state || !zones) {
		free(zones);
		return zdev_fail(err, errlen, -ENOMEM, "out of memory for %u zones", z->nzones);
	}
	uint32_t n = z->nzones;
	int rc = unvme_zone_report(z->ns, z->wq, 0, NVME_ZRAS_ALL, zones, &n, NULL);
	if (rc || n != z->nzones) {
		free(zones);
		return zdev_fail(err, errlen, rc < 0 ? rc : -EIO, "report zones: %s",
			    rc > 0 ? unvme_status_str(rc, NVME_CSI_ZNS) : rc ? unvme_errmsg() : "short report");
	}
	z->zcap_pages = zones[0].zcap / z->page_lbas;
	for (uint32_t i = 0; i < n; i++) {
		struct unvme_zone *d = &zones[i];
		if (d->zcap / z->page_lbas != z->zcap_pages) {
			unsigned long long cap = d->zcap, cap0 = zones[0].zcap;
			free(zones);
			return zdev_fail(err, errlen, -EINVAL, "zone %u has capacity %llu blocks, zone 0 %llu: "
				    "variable zone capacities are not supported", i, cap, cap0);
		}
		switch (d->state) {
		case NVME_ZS_EMPTY:
			z->state[i] = ZDEV_EMPTY;
			break;
		case NVME_ZS_FULL:
			z->state[i] = ZDEV_FULL;
			z->wp[i] = z->zcap_pages;
			break;
		case NVME_ZS_READ_ONLY:
		case NVME_ZS_OFFLINE:
			z->state[i] = ZDEV_OFFLINE;
			z->wp[i] = z->zcap_pages;
			break;
		default: {
			uint64_t blocks = d->wp - d->zslba;
			/* a pointer inside a page (another writer's blocks) rounds up: never overwrite */
			z->wp[i] = (blocks + z->page_lbas - 1) / z->page_lbas;
			z->state[i] = ZDEV_OPEN;
			break;
		}
		}
	}
	free(zones);
	z->wp_known = true;
	return 0;
}

static int emulate_zones(struct zdev *z, uint64_t zone_bytes, char *err, size_t errlen)
{
	if (!zone_bytes)
		zone_bytes = DEFAULT_EMU_ZONE;
	if (zone_bytes % ZDEV_PAGE)
		return zdev_fail(err, errlen, -EINVAL, "zone size %llu is not a multiple of 4 KiB",
			    (unsigned long long)zone_bytes);
	uint64_t bytes = unvme_ns_nlbas(z->ns) << z->lba_shift;
	z->nzones = (uint32_t)(bytes / zone_bytes);
	if (z->nzones < 4)
		return zdev_fail(err, errlen, -EINVAL, "the namespace holds %u zones of %llu bytes: at least 4 "
			    "are needed (a smaller zone size?)", z->nzones, (unsigned long long)zone_bytes);
	z->zone_pages = zone_bytes / ZDEV_PAGE;
	z->zcap_pages = z->zone_pages;
	z->max_append_pages = 0;
	z->wp = calloc(z->nzones, sizeof(*z->wp));
	z->state = calloc(z->nzones, 1);
	if (!z->wp || !z->state)
		return zdev_fail(err, errlen, -ENOMEM, "out of memory for %u zones", z->nzones);
	z->wp_known = false;
	return 0;
}

int zdev_open(const char *devid, uint32_t nsid, uint64_t emu_zone_bytes, struct zdev **out,
	      char *err, size_t errlen)
{
	*out = NULL;
	struct zdev *z = calloc(1, sizeof(*z));
	if (!z)
		return zdev_fail(err, errlen, -ENOMEM, "out of memory");
	pthread_mutex_init(&z->pool_lock, NULL);
	int rc = unvme_ctrlr_open(devid, NULL, &z->ctrlr);
	if (rc) {
		zdev_fail(err, errlen, rc, "%s: %s", devid, unvme_errmsg());
		goto out;
	}
	z->owns_ctrlr = true;
	z->ns = pick_ns(z->ctrlr, nsid);
	if (!z->ns || (unvme_ns_csi(z->ns) != NVME_CSI_ZNS && unvme_ns_csi(z->ns) != NVME_CSI_NVM)) {
		rc = zdev_fail(err, errlen, -ENODEV, "%s: no %s namespace %s%u", devid,
			  nsid ? "zoned or NVM" : "zoned or NVM", nsid ? "" : "(looked at all) ", nsid);
		goto out;
	}
	uint32_t lba = unvme_ns_lba_size(z->ns);
	if (lba > ZDEV_PAGE || ZDEV_PAGE % lba) {
		rc = zdev_fail(err, errlen, -EINVAL, "%s: %u-byte blocks: 4 KiB pages need a block size dividing 4096",
			  devid, lba);
		goto out;
	}
	z->lba_shift = (uint32_t)__builtin_ctz(lba);
	z->page_lbas = ZDEV_PAGE / lba;
	z->max_io_pages = unvme_ctrlr_max_xfer(z->ctrlr) / ZDEV_PAGE;
	if (z->max_io_pages == 0) {
		rc = zdev_fail(err, errlen, -EINVAL, "%s: transfers below 4 KiB", devid);
		goto out;
	}
	rc = unvme_qpair_create(z->ctrlr, NULL, &z->wq);
	if (rc) {
		zdev_fail(err, errlen, rc < 0 ? rc : -EIO, "%s: cannot create a queue pair: %s", devid, unvme_errmsg());
		goto out;
	}
	z->nqueues = 1;
	z->zoned = unvme_ns_csi(z->ns) == NVME_CSI_ZNS;
	rc = z->zoned ? load_zones(z, err, errlen) : emulate_zones(z, emu_zone_bytes, err, errlen);
	if (rc)
		goto out;
	if (z->max_append_pages > z->max_io_pages)
		z->max_append_pages = z->max_io_pages;
	*out = z;
	return 0;
out:
	zdev_close(z);
	return rc < 0 ? rc : -EIO;
}

void zdev_close(struct zdev *z)
{
	if (!z)
		return;
	for (unsigned i = 0; i < z->npool; i++)
		unvme_qpair_destroy(z->pool[i]);
	if (z->wq)
		unvme_qpair_destroy(z->wq);
	if (z->owns_ctrlr)
		unvme_ctrlr_close(z->ctrlr);
	pthread_mutex_destroy(&z->pool_lock);
	free(z->wp);
	free(z->state);
	free(z);
}

void zdev_set_wp(struct zdev *z, uint32_t zone, uint64_t wp_pages)
{
	z->wp[zone] = wp_pages;
	z->state[zone] = wp_pages == 0 ? ZDEV_EMPTY : wp_pages >= z->zcap_pages ? ZDEV_FULL : ZDEV_OPEN;
	z->wp_known = true;
}

static uint64_t lba_of(const struct zdev *z, uint64_t page)
{
	return page * z->page_lbas;
}

int zdev_append(struct zdev *z, uint32_t zone, const void *buf, uint32_t npages, uint64_t *page)
{
	if (npages == 0 || zone >= z->nzones || z->state[zone] == ZDEV_OFFLINE || npages > zdev_room(z, zone))
		return -EINVAL;
	uint64_t at = zdev_page(z, zone, z->wp[zone]);
	const uint8_t *p = buf;
	int rc = 0;
	if (z->zoned && npages <= z->max_append_pages) {
		/* one Zone Append: the device says where it landed (the write pointer, as this is
		 * the zone's only writer) */
		uint64_t lba;
		rc = unvme_zone_append_sync(z->ns, z->wq, p, lba_of(z, zdev_page(z, zone, 0)),
					    npages * z->page_lbas, &lba);
		if (rc == 0 && lba != lba_of(z, at))
			rc = -EIO; /* somebody else writes this zone */
	} else {
		for (uint32_t done = 0; done < npages && !rc;) {
			uint32_t n = npages - done < z->max_io_pages ? npages - done : z->max_io_pages;
			rc = unvme_write_sync(z->ns, z->wq, p + (size_t)done * ZDEV_PAGE,
					      lba_of(z, at + done), n * z->page_lbas);
			done += n;
		}
	}
	if (rc)
		return rc;
	z->wp[zone] += npages;
	z->state[zone] = z->wp[zone] >= z->zcap_pages ? ZDEV_FULL : ZDEV_OPEN;
	z->pages_written += npages;
	*page = at;
	return 0;
}

/* Lends a readers' queue (creating one when none is free). */
static struct unvme_qpair *borrow(struct zdev *z)
{
	pthread_mutex_lock(&z->pool_lock);
	struct unvme_qpair *qp = z->npool ? z->pool[--z->npool] : NULL;
	pthread_mutex_unlock(&z->pool_lock);
	if (!qp && unvme_qpair_create(z->ctrlr, NULL, &qp) != 0)
		qp = NULL;
	return qp;
}

static void give_back(struct zdev *z, struct unvme_qpair *qp)
{
	pthread_mutex_lock(&z->pool_lock);
	if (z->npool < ZDEV_POOL_MAX) {
		z->pool[z->npool++] = qp;
		qp = NULL;
	}
	pthread_mutex_unlock(&z->pool_lock);
	if (qp)
		unvme_qpair_destroy(qp);
}

int zdev_read(struct zdev *z, uint64_t page, void *buf, uint32_t npages)
{
	struct unvme_qpair *qp = borrow(z);
	if (!qp)
		return -EAGAIN;
	int rc = 0;
	uint8_t *p = buf;
	for (uint32_t done = 0; done < npages && !rc;) {
		uint32_t n = npages - done < z->max_io_pages ? npages - done : z->max_io_pages;
		rc = unvme_read_sync(z->ns, qp, p + (size_t)done * ZDEV_PAGE, lba_of(z, page + done),
				     n * z->page_lbas);
		done += n;
	}
	give_back(z, qp);
	return rc;
}

int zdev_reset(struct zdev *z, uint32_t zone)
{
	if (zone >= z->nzones || z->state[zone] == ZDEV_OFFLINE)
		return -EINVAL;
	int rc;
	if (z->zoned) {
		rc = unvme_zone_mgmt_send_sync(z->ns, z->wq, lba_of(z, zdev_page(z, zone, 0)),
					       NVME_ZSA_RESET, false);
	} else {
		/* a zeroed first page ends any scan of the zone; the rest is given back when the
		 * device supports it (a hint: stale records behind the first page are never read) */
		uint64_t first = lba_of(z, zdev_page(z, zone, 0));
		rc = unvme_write_zeroes_sync(z->ns, z->wq, first, z->page_lbas);
		uint64_t rest = (z->zone_pages - 1) * z->page_lbas;
		while (!rc && rest) {
			uint32_t n = rest > (1u << 30) ? (1u << 30) : (uint32_t)rest;
			(void)unvme_deallocate_sync(z->ns, z->wq, first + z->page_lbas, n);
			first += n;
			rest -= n;
		}
	}
	if (rc)
		return rc;
	z->wp[zone] = 0;
	z->state[zone] = ZDEV_EMPTY;
	z->resets++;
	return 0;
}

int zdev_zero_rest(struct zdev *z, uint32_t zone)
{
	if (zone >= z->nzones || z->state[zone] == ZDEV_OFFLINE)
		return -EINVAL;
	if (z->zoned || z->wp[zone] >= z->zcap_pages)
		return 0;
	uint64_t lba = lba_of(z, zdev_page(z, zone, z->wp[zone]));
	uint64_t rest = (z->zcap_pages - z->wp[zone]) * z->page_lbas;
	int rc = 0;
	while (!rc && rest) {
		/* Write Zeroes counts blocks in 16 bits (NVM Command Set 1.0, 3.2.8) */
		uint32_t n = rest > (1u << 15) ? (1u << 15) : (uint32_t)rest;
		rc = unvme_write_zeroes_sync(z->ns, z->wq, lba, n);
		lba += n;
		rest -= n;
	}
	return rc;
}

int zdev_finish(struct zdev *z, uint32_t zone)
{
	if (zone >= z->nzones || z->state[zone] == ZDEV_OFFLINE)
		return -EINVAL;
	if (z->state[zone] == ZDEV_FULL)
		return 0;
	if (z->zoned) {
		int rc = unvme_zone_mgmt_send_sync(z->ns, z->wq, lba_of(z, zdev_page(z, zone, 0)),
						   NVME_ZSA_FINISH, false);
		if (rc)
			return rc;
	}
	z->wp[zone] = z->zcap_pages;
	z->state[zone] = ZDEV_FULL;
	return 0;
}

int zdev_flush(struct zdev *z)
{
	return unvme_flush_sync(z->ns, z->wq);
}

/* ---- hash: four lanes of 64-bit multiply-rotate rounds over 32-byte stripes, merged and
 * avalanched; the tail is mixed 8 bytes (then 1 byte) at a time. */

#define H1 0x9e3779b185ebca87ull
#define H2 0xc2b2ae3d27d4eb4full
#define H3 0x165667b19e3779f9ull
#define H4 0x85ebca77c2b2ae63ull

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t lane(uint64_t acc, uint64_t v)
{
	return rotl64(acc + v * H2, 31) * H1;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

uint64_t zdev_hash64(const void *buf, size_t len, uint64_t seed)
{
	const uint8_t *p = buf, *end = p + len;
	uint64_t h;
	if (len >= 32) {
		uint64_t a = seed + H1 + H2, b = seed + H2, c = seed, d = seed - H1;
		for (; p + 32 <= end; p += 32) {
			a = lane(a, load64(p));
			b = lane(b, load64(p + 8));
			c = lane(c, load64(p + 16));
			d = lane(d, load64(p + 24));
		}
		h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(d, 18);
		h = (h ^ lane(0, a)) * H1 + H4;
		h = (h ^ lane(0, b)) * H1 + H4;
		h = (h ^ lane(0, c)) * H1 + H4;
		h = (h ^ lane(0, d)) * H1 + H4;
	} else {
		h = seed + H3;
	}
	h += len;
	for (; p + 8 <= end; p += 8)
		h = rotl64(h ^ lane(0, load64(p)), 27) * H1 + H4;
	for (; p < end; p++)
		h = rotl64(h ^ (*p * H3), 11) * H1;
	h ^= h >> 33;
	h *= H2;
	h ^= h >> 29;
	h *= H3;
	h ^= h >> 32;
	return h;
}

uint64_t zdev_sum64(const void *buf, size_t len, uint64_t seed)
{
	uint64_t a[8], b[8];
	const uint8_t *p = buf;
	size_t i = 0;
#if defined(__SSE2__)
	/* eight 64-bit lanes in four registers each for the sums and the sums of sums */
	__m128i va[4], vb[4], zero = _mm_setzero_si128();
	for (int k = 0; k < 4; k++) {
		va[k] = _mm_set_epi64x((long long)(seed + 2 * (uint64_t)k + 1), (long long)(seed + 2 * (uint64_t)k));
		vb[k] = zero;
	}
	for (; i + 32 <= len; i += 32) {
		__m128i w0 = _mm_loadu_si128((const __m128i *)(p + i));
		__m128i w1 = _mm_loadu_si128((const __m128i *)(p + i + 16));
		va[0] = _mm_add_epi64(va[0], _mm_unpacklo_epi32(w0, zero));
		va[1] = _mm_add_epi64(va[1], _mm_unpackhi_epi32(w0, zero));
		va[2] = _mm_add_epi64(va[2], _mm_unpacklo_epi32(w1, zero));
		va[3] = _mm_add_epi64(va[3], _mm_unpackhi_epi32(w1, zero));
		for (int k = 0; k < 4; k++)
			vb[k] = _mm_add_epi64(vb[k], va[k]);
	}
	for (int k = 0; k < 4; k++) {
		_mm_storeu_si128((__m128i *)&a[2 * k], va[k]);
		_mm_storeu_si128((__m128i *)&b[2 * k], vb[k]);
	}
#else
	for (int k = 0; k < 8; k++) {
		a[k] = seed + (uint64_t)k;
		b[k] = 0;
	}
#endif
	for (; i + 32 <= len; i += 32) {
		for (int k = 0; k < 8; k++) {
			uint32_t w;
			memcpy(&w, p + i + 4 * k, 4);
			a[k] += w;
			b[k] += a[k];
		}
	}
	uint64_t h = seed ^ len;
	for (int k = 0; k < 8; k++)
		h = rotl64(h ^ lane(a[k], b[k]), 27) * H1 + H4;
	return h;
}
