/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log of a file-backed KV namespace: appending checksummed records and rebuilding the
 * index from them when the namespace is opened.
 *
 * A store is acknowledged only after its record was written with pwrite, so it survives the
 * death of the process; Flush (or a disabled write cache) adds fdatasync for power loss.
 * Recovery reads records in order and stops at the first one that is incomplete or fails
 * its checks (magic, lengths, CRC): that is where a crash tore the last write, and the file
 * is cut there. Records are never rewritten in place, so everything before the tear is
 * intact.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hw/emu/ns/kv_crc.h"
#include "hw/emu/ns/kv_store_int.h"
#include "hw/emu/ns/ns_internal.h"

static const uint8_t zero_pad[8];

int kv_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* past the end: the index points at a record that is not there */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int kv_log_init_file(int fd)
{
	uint8_t sb[KV_SB_SIZE] = { 0 };
	memcpy(sb, KV_SB_MAGIC, 8);
	uint32_t version = 1;
	memcpy(sb + 8, &version, 4);
	uint32_t crc = kv_crc32c(0, sb, 12);
	memcpy(sb + 12, &crc, 4);
	if (ftruncate(fd, 0) != 0)
		return -errno;
	int r = kv_pwrite_all(fd, sb, sizeof(sb), 0);
	if (r)
		return r;
	if (fdatasync(fd) != 0)
		return -errno;
	return 0;
}

static uint32_t rec_crc(const struct kv_rec_hdr *h, const uint8_t *key, const uint8_t *val)
{
	uint32_t crc = kv_crc32c(0, (const uint8_t *)h + 8, KV_REC_HDR - 8);
	crc = kv_crc32c(crc, key, h->klen);
	if (h->vlen)
		crc = kv_crc32c(crc, val, h->vlen);
	return crc;
}

int kv_log_append(struct kv_store *s, uint8_t type, uint8_t ks, const uint8_t *key, uint8_t klen,
		  const uint8_t *val, uint32_t vlen, uint64_t *at)
{
	struct kv_rec_hdr h = {
		.magic = KV_REC_MAGIC, .seq = s->seq, .vlen = vlen, .type = type, .ks = ks,
		.klen = klen,
	};
	h.crc = rec_crc(&h, key, val);
	uint64_t size = kv_rec_size(klen, vlen);
	size_t pad = (size_t)(size - KV_REC_HDR - klen - vlen);
	struct iovec iov[4] = {
		{ &h, KV_REC_HDR },
		{ (void *)key, klen },
		{ (void *)val, vlen },
		{ (void *)zero_pad, pad },
	};
	uint64_t off = s->tail;
	size_t done = 0;
	int iovcnt = 4, first = 0;
	while (done < size) {
		ssize_t n = pwritev(s->fd, iov + first, iovcnt - first, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			/* leave no partial record behind; should this fail too, recovery cuts it */
			int ignored = ftruncate(s->fd, (off_t)off);
			(void)ignored;
			return e;
		}
		done += (size_t)n;
		while (first < iovcnt && (size_t)n >= iov[first].iov_len) {
			n -= (ssize_t)iov[first].iov_len;
			first++;
		}
		if (first < iovcnt) {
			iov[first].iov_base = (uint8_t *)iov[first].iov_base + n;
			iov[first].iov_len -= (size_t)n;
		}
	}
	s->tail = off + size;
	s->seq++;
	s->media_bytes += size;
	*at = off;
	return 0;
}

int kv_log_read_value(struct kv_store *s, uint64_t rec, uint8_t klen, uint32_t off, void *buf,
		      uint32_t len)
{
	return pread_all(s->fd, buf, len, rec + KV_REC_HDR + klen + off);
}

int kv_log_read_value_xfer(struct kv_store *s, uint64_t rec, uint8_t klen, uint32_t off,
			   const struct emu_xfer *x, uint32_t len)
{
	uint64_t pos = rec + KV_REC_HDR + klen + off;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		int r = pread_all(s->fd, x->seg[i].addr, n, pos);
		if (r)
			return r;
		pos += n;
		len -= n;
	}
	return 0;
}

/* Applies one valid record found at off to the index. */
static int replay(struct kv_store *s, const struct kv_rec_hdr *h, const uint8_t *key, uint64_t off)
{
	uint64_t size = kv_rec_size(h->klen, h->vlen);
	if (h->type == KV_REC_DEL) {
		struct kv_ent *old = kv_index_remove(&s->ix, h->ks, key, h->klen);
		s->dead += size;
		if (old) {
			uint64_t osize = kv_rec_size(old->klen, old->vlen);
			s->live -= osize;
			s->dead += osize;
			s->nr_keys_ks[old->ks]--;
			kv_ent_free(old);
		}
		return 0;
	}
	struct kv_ent *e = kv_ent_new(h->ks, key, h->klen);
	if (!e)
		return -ENOMEM;
	e->vlen = h->vlen;
	e->loc = off;
	struct kv_ent *old = kv_index_put(&s->ix, e);
	s->live += size;
	if (old) {
		uint64_t osize = kv_rec_size(old->klen, old->vlen);
		s->live -= osize;
		s->dead += osize;
		kv_ent_free(old);
	} else {
		s->nr_keys_ks[h->ks]++;
	}
	return 0;
}

/*
 * Sequential reader for recovery: records are served from a window of the file read in
 * large chunks, so replaying millions of small records costs a few syscalls per 4 MiB
 * rather than two per record.
 */
#define SCAN_CHUNK (4u << 20)
#define SCAN_WINDOW (SCAN_CHUNK + KV_REC_HDR + NVME_KVV_MAX_KEY + KV_MAX_VALUE + 8u)

struct scan {
	int fd;
	uint64_t fsize;
	uint8_t *buf;   /* SCAN_WINDOW bytes, or the file's size if smaller */
	uint64_t base;  /* file offset of buf[0] */
	size_t len;     /* valid bytes in buf */
};

/* Pointer to n (<= SCAN_WINDOW) bytes at file offset off, or NULL past the end of the file
 * or on a read error. */
static const uint8_t *scan_get(struct scan *sc, uint64_t off, size_t n)
{
	if (off + n > sc->fsize)
		return NULL;
	if (off < sc->base || off + n > sc->base + sc->len) {
		size_t want = (size_t)(sc->fsize - off < SCAN_WINDOW ? sc->fsize - off : SCAN_WINDOW);
		if (pread_all(sc->fd, sc->buf, want, off) != 0)
			return NULL;
		sc->base = off;
		sc->len = want;
	}
	return sc->buf + (off - sc->base);
}

/* Checks the header of the record at off in a file of fsize bytes. */
static bool header_ok(const struct kv_rec_hdr *h, uint64_t off, uint64_t fsize)
{
	if (h->magic != KV_REC_MAGIC || h->klen == 0 || h->ks > 1 || h->vlen > KV_MAX_VALUE)
		return false;
	if (h->type != KV_REC_PUT && !(h->type == KV_REC_DEL && h->vlen == 0))
		return false;
	return kv_rec_size(h->klen, h->vlen) <= fsize - off;
}

int kv_log_load(struct kv_store *s, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(s->fd, &st) != 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "%s: %s", s->path, strerror(e));
		return -e;
	}
	uint64_t fsize = (uint64_t)st.st_size;
	s->tail = KV_SB_SIZE;
	s->seq = 1;
	if (fsize == 0) {
		int r = kv_log_init_file(s->fd);
		if (r)
			emu_ns_set_error(err, errlen, "%s: cannot initialise: %s", s->path, strerror(-r));
		return r;
	}
	uint8_t sb[KV_SB_SIZE];
	uint32_t crc;
	if (fsize < KV_SB_SIZE || pread_all(s->fd, sb, sizeof(sb), 0) != 0 ||
	    memcmp(sb, KV_SB_MAGIC, 8) != 0 || (memcpy(&crc, sb + 12, 4), crc != kv_crc32c(0, sb, 12))) {
		emu_ns_set_error(err, errlen, "%s is not a KV namespace log (bad superblock)", s->path);
		return -EINVAL;
	}

	/* a window as large as the file is enough (a small log costs no 6 MiB buffer) */
	struct scan sc = { .fd = s->fd, .fsize = fsize,
			   .buf = malloc(fsize < SCAN_WINDOW ? fsize : SCAN_WINDOW) };
	if (!sc.buf) {
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	uint64_t off = KV_SB_SIZE;
	int r = 0;
	while (off < fsize) {
		struct kv_rec_hdr h;
		const uint8_t *p = scan_get(&sc, off, KV_REC_HDR);
		if (!p)
			break;
		memcpy(&h, p, sizeof(h));
		if (!header_ok(&h, off, fsize))
			break;
		p = scan_get(&sc, off, KV_REC_HDR + (size_t)h.klen + h.vlen);
		if (!p)
			break;
		const uint8_t *key = p + KV_REC_HDR;
		if (rec_crc(&h, key, key + h.klen) != h.crc)
			break;
		r = replay(s, &h, key, off);
		if (r) {
			emu_ns_set_error(err, errlen, "%s: out of memory rebuilding the index", s->path);
			break;
		}
		if (h.seq >= s->seq)
			s->seq = h.seq + 1;
		off += kv_rec_size(h.klen, h.vlen);
	}
	free(sc.buf);
	if (r)
		return r;
	if (off < fsize && ftruncate(s->fd, (off_t)off) != 0) {
		int e = errno;
		emu_ns_set_error(err, errlen, "%s: cannot cut the torn tail: %s", s->path, strerror(e));
		return -e;
	}
	s->tail = off;
	return 0;
}
