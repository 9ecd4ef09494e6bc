/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a zoned namespace keeps its zone table. In memory it is an anonymous mapping; for a
 * file-backed namespace it is the file "<data file>.zones", mapped shared:
 *
 *   offset 0    header (64 bytes): magic "UNVMEZNS", version 1, zone size and zone capacity
 *               in bytes, number of zones
 *   offset 64   one 24-byte record per zone: the write pointer and the end of the data (bytes
 *               from the zone start), state, attributes
 *
 * Durability is that of the data file (ns_file.c): a record changed by a completed command is
 * in the page cache when the completion is posted, so it survives the death of the process;
 * Flush and shutdown msync it after the data, so it survives a power loss after them (and so
 * do a FUA write's and, with the write cache off, every command's: ns_zns_io.c). A write
 * moves its zone's record before its data lands, so after a crash the write pointer never
 * trails an acknowledged block (blocks of an unacknowledged write may read as zeroes). A new
 * table is written and synced, name included, before it is mapped: a power cut right after
 * the namespace was created leaves a valid table, never a file of zeroes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/emu/ns/ns_internal.h"
#include "lib/common/fdio.h"
#include "hw/emu/ns/ns_zns.h"

#define ZNS_MAGIC "UNVMEZNS"
#define ZNS_VERSION 1u

struct zns_meta_hdr {
	char     magic[8];
	uint32_t version;
	uint32_t nr_zones;
	uint64_t zone_bytes;
	uint64_t cap_bytes;
	uint8_t  rsvd[32];
};
_Static_assert(sizeof(struct zns_meta_hdr) == 64, "zone file header is 64 bytes");
_Static_assert(sizeof(struct zns_zone_rec) == 24, "zone record is 24 bytes");

static bool rec_valid(const struct zns_zone_rec *r, uint64_t cap_bytes)
{
	if (r->written > r->filled)
		return false;
	switch (r->state) {
	case NVME_ZS_EMPTY:
		return r->filled == 0;
	case NVME_ZS_IMP_OPEN:
	case NVME_ZS_EXP_OPEN:
	case NVME_ZS_CLOSED:
		return r->filled < cap_bytes;
	case NVME_ZS_FULL:
	case NVME_ZS_READ_ONLY:
	case NVME_ZS_OFFLINE:
		return r->filled <= cap_bytes;
	default:
		return false;
	}
}

/* The header and every zone empty, into a table of m->map_len bytes at p. */
static void fill_fresh(void *p, const struct emu_zns *z)
{
	struct zns_meta_hdr *h = p;
	memset(p, 0, sizeof(*h));
	memcpy(h->magic, ZNS_MAGIC, sizeof(h->magic));
	h->version = ZNS_VERSION;
	h->nr_zones = z->nr_zones;
	h->zone_bytes = z->zone_bytes;
	h->cap_bytes = z->cap_bytes;
	struct zns_zone_rec *zones = (struct zns_zone_rec *)((uint8_t *)p + sizeof(*h));
	for (uint32_t i = 0; i < z->nr_zones; i++)
		zones[i] = (struct zns_zone_rec){ .state = NVME_ZS_EMPTY };
}

/* A new zone file: its table written and made durable with its name. */
static int create_table(int fd, const char *zpath, const struct emu_zns *z, size_t len)
{
	void *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	fill_fresh(buf, z);
	int rc = fd_pwrite_all(fd, buf, len, 0);
	free(buf);
	if (!rc && fsync(fd) != 0)
		rc = -errno;
	if (!rc)
		rc = emu_sync_parent_dir(zpath);
	return rc;
}

static int map_file(struct zns_meta *m, const char *zpath, const struct emu_zns *z, bool *fresh,
		    char *err, size_t errlen)
{
	int fd = open(zpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "zone file '%s': %s", zpath, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "zone file '%s' is in use by another device", zpath);
		close(fd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "zone file '%s': %s", zpath, strerror(e));
		close(fd);
		return -e;
	}
	*fresh = st.st_size == 0;
	int rc = *fresh ? create_table(fd, zpath, z, m->map_len) : 0;
	if (rc) {
		emu_ns_set_error(err, errlen, "zone file '%s': %s", zpath, strerror(-rc));
		close(fd);
		return rc;
	}
	if (!*fresh && (uint64_t)st.st_size != m->map_len) {
		emu_ns_set_error(err, errlen,
				 "zone file '%s' is %lld bytes, expected %zu for %u zones: the URI's "
				 "zone geometry differs from the one the namespace was created with",
				 zpath, (long long)st.st_size, m->map_len, z->nr_zones);
		close(fd);
		return -EINVAL;
	}
	void *p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		emu_ns_set_error(err, errlen, "zone file '%s': mmap: %s", zpath, strerror(e));
		close(fd);
		return -e;
	}
	m->map = p;
	m->fd = fd;
	return 0;
}

int zns_meta_open(struct zns_meta *m, const char *path, const struct emu_zns *z, bool *fresh,
		  char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->map_len = sizeof(struct zns_meta_hdr) + (size_t)z->nr_zones * sizeof(struct zns_zone_rec);
	*fresh = true;
	if (!path || !path[0]) {
		void *p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			emu_ns_set_error(err, errlen, "out of memory for %u zones", z->nr_zones);
			return -ENOMEM;
		}
		m->map = p;
	} else {
		char zpath[PATH_MAX + 8];
		if (snprintf(zpath, sizeof(zpath), "%s.zones", path) >= (int)sizeof(zpath)) {
			emu_ns_set_error(err, errlen, "path '%s' too long for its zone file", path);
			return -ENAMETOOLONG;
		}
		int rc = map_file(m, zpath, z, fresh, err, errlen);
		if (rc)
			return rc;
	}
	struct zns_meta_hdr *h = m->map;
	m->zones = (struct zns_zone_rec *)((uint8_t *)m->map + sizeof(*h));
	if (*fresh) {
		if (m->fd < 0)
			fill_fresh(m->map, z); /* a file's table was written before it was mapped */
		return 0;
	}
	const char *why = NULL;
	if (memcmp(h->magic, ZNS_MAGIC, sizeof(h->magic)) || h->version != ZNS_VERSION)
		why = "not a zone file of this version";
	else if (h->nr_zones != z->nr_zones || h->zone_bytes != z->zone_bytes)
		why = "the zone size differs from the URI's";
	else if (h->cap_bytes != z->cap_bytes)
		why = "the zone capacity differs from the URI's";
	for (uint32_t i = 0; !why && i < z->nr_zones; i++)
		if (!rec_valid(&m->zones[i], z->cap_bytes))
			why = "a zone record is corrupt";
	if (why) {
		emu_ns_set_error(err, errlen, "zone file '%s.zones': %s (zone size %llu, capacity %llu, "
				 "%u zones recorded)", path, why, (unsigned long long)h->zone_bytes,
				 (unsigned long long)h->cap_bytes, h->nr_zones);
		zns_meta_close(m);
		return -EINVAL;
	}
	return 0;
}

void zns_meta_close(struct zns_meta *m)
{
	if (m->map)
		munmap(m->map, m->map_len);
	if (m->fd >= 0)
		close(m->fd);
	m->map = NULL;
	m->zones = NULL;
	m->fd = -1;
}

int zns_meta_sync(struct zns_meta *m)
{
	if (m->fd < 0)
		return 0;
	if (msync(m->map, m->map_len, MS_SYNC) != 0)
		return -errno;
	return 0;
}
