/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log file of a file-backed KV namespace: appending checksummed records, taking back an
 * append whose durability failed, and rebuilding the index from the records when the
 * namespace is opened.
 *
 * A store is acknowledged only after its record was written with pwrite, so it survives the
 * death of the process; Flush (or a disabled write cache) adds fdatasync for power loss. An
 * append whose fdatasync fails is taken back (the file is cut back to where the record
 * started, or, if that fails too, the record is rewritten as a void one), so a store that
 * returned an error never comes back at the next open.
 *
 * Recovery reads the records in order. A record that is incomplete or fails its checks
 * (magic, lengths, CRC) starts a damaged span, which ends at the next intact record (records
 * are 8-byte aligned, so the search steps 8 bytes at a time) or at the end of the file (a torn
 * last append). Damaged spans are skipped, never trusted, and never deleted silently: every
 * span is reported (stderr unless UNVME_QUIET, and the capacity log C0h's damage counters),
 * its bytes are copied to "<log>.damaged", and only then is it taken out of the log (a torn
 * tail is cut off, damage in the middle is compacted away). Intact records after a damaged
 * span are kept. Should the copy fail, the damaged bytes stay where they are and are
 * reported again at the next open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "hw/emu/ns/kv_crc.h"
#include "hw/emu/ns/kv_store_int.h"
#include "hw/emu/ns/ns_internal.h"
#include "lib/common/env.h"
#include "lib/common/fdio.h"

#define SALVAGE_MAGIC "UNVMEKVD"

static const uint8_t zero_pad[8];

int kv_file_init(int fd)
{
	uint8_t sb[KV_SB_SIZE] = { 0 };
	memcpy(sb, KV_SB_MAGIC, 8);
	uint32_t version = 1;
	memcpy(sb + 8, &version, 4);
	uint32_t crc = kv_crc32c(0, sb, 12);
	memcpy(sb + 12, &crc, 4);
	if (ftruncate(fd, 0) != 0)
		return -errno;
	int r = fd_pwrite_all(fd, sb, sizeof(sb), 0);
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

int kv_file_append(struct kv_store *s, uint8_t type, uint8_t ks, const uint8_t *key, uint8_t klen,
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
	int flags = 0;
	int e = fd_pio_all(s->fd, iov, 4, off, true, &flags);
	if (e) {
		/* leave no partial record behind; should this fail too, recovery skips it */
		int ignored = ftruncate(s->fd, (off_t)off);
		(void)ignored;
		return e;
	}
	s->tail = off + size;
	s->seq++;
	s->media_bytes += size;
	*at = off;
	return 0;
}

void kv_file_revoke(struct kv_store *s, uint64_t at)
{
	uint64_t size = s->tail - at;
	if (ftruncate(s->fd, (off_t)at) == 0) {
		s->tail = at;
		s->media_bytes -= size;
		return;
	}
	/* Cannot cut it off: turn it into a void record of the same size in place, which
	 * recovery passes over. The header alone is rewritten; its CRC covers the key and
	 * value bytes that stay as they are. */
	struct kv_rec_hdr h;
	if (fd_pread_all(s->fd, &h, sizeof(h), at) != 0)
		return;
	uint8_t *rest = malloc(size - KV_REC_HDR);
	if (!rest)
		return;
	if (fd_pread_all(s->fd, rest, size - KV_REC_HDR, at + KV_REC_HDR) == 0) {
		h.type = KV_REC_VOID;
		h.crc = rec_crc(&h, rest, rest + h.klen);
		(void)fd_pwrite_all(s->fd, &h, sizeof(h), at);
	}
	free(rest);
}

int kv_file_read_value(struct kv_store *s, uint64_t rec, uint8_t klen, uint32_t off, void *buf,
		       uint32_t len)
{
	return fd_pread_all(s->fd, buf, len, rec + KV_REC_HDR + klen + off);
}

int kv_file_read_value_xfer(struct kv_store *s, uint64_t rec, uint8_t klen, uint32_t off,
			    const struct emu_xfer *x, uint32_t len)
{
	uint64_t pos = rec + KV_REC_HDR + klen + off;
	for (uint32_t i = 0; i < x->nseg && len; i++) {
		uint32_t n = x->seg[i].len < len ? x->seg[i].len : len;
		int r = fd_pread_all(s->fd, x->seg[i].addr, n, pos);
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
	if (h->type == KV_REC_VOID) {
		s->dead += size;
		return 0;
	}
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
	int err;        /* a read error (not the end of the file): recovery stops */
};

/* Pointer to n (<= SCAN_WINDOW) bytes at file offset off, or NULL past the end of the file
 * or on a read error (sc->err). */
static const uint8_t *scan_get(struct scan *sc, uint64_t off, size_t n)
{
	if (off + n > sc->fsize)
		return NULL;
	if (off < sc->base || off + n > sc->base + sc->len) {
		size_t want = (size_t)(sc->fsize - off < SCAN_WINDOW ? sc->fsize - off : SCAN_WINDOW);
		int r = fd_pread_all(sc->fd, sc->buf, want, off);
		if (r) {
			sc->err = r;
			sc->len = 0;
			return NULL;
		}
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
	if (h->type != KV_REC_PUT && h->type != KV_REC_VOID &&
	    !(h->type == KV_REC_DEL && h->vlen == 0))
		return false;
	return kv_rec_size(h->klen, h->vlen) <= fsize - off;
}

/* The intact record at off: its header in *h and its key (the value follows), or NULL. */
static const uint8_t *record_at(struct scan *sc, uint64_t off, struct kv_rec_hdr *h)
{
	const uint8_t *p = scan_get(sc, off, KV_REC_HDR);
	if (!p)
		return NULL;
	memcpy(h, p, sizeof(*h));
	if (!header_ok(h, off, sc->fsize))
		return NULL;
	p = scan_get(sc, off, KV_REC_HDR + (size_t)h->klen + h->vlen);
	if (!p)
		return NULL;
	const uint8_t *key = p + KV_REC_HDR;
	return rec_crc(h, key, key + h->klen) == h->crc ? key : NULL;
}

/* Where the next intact record after the damaged one at off starts (fsize: none). */
static uint64_t resync(struct scan *sc, uint64_t off)
{
	for (uint64_t p = off + 8; p + KV_REC_HDR <= sc->fsize && !sc->err; p += 8) {
		const uint8_t *m = scan_get(sc, p, 4);
		uint32_t magic;
		if (!m)
			break;
		memcpy(&magic, m, 4);
		struct kv_rec_hdr h;
		if (magic == KV_REC_MAGIC && record_at(sc, p, &h))
			return p;
	}
	return sc->fsize;
}

struct span {
	uint64_t off, len;
};

/* Appends the damaged spans' bytes to "<log>.damaged", each after a 32-byte header (magic
 * "UNVMEKVD", u64 offset in the log, u64 length, u64 UNIX time), and makes the copy durable.
 * 0 or -errno. */
static int salvage(struct kv_store *s, const struct span *sp, size_t n, char *where, size_t wlen)
{
	snprintf(where, wlen, "%s.damaged", s->path);
	int fd = open(where, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	uint8_t *buf = malloc(SCAN_CHUNK);
	int r = buf ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && !r; i++) {
		uint64_t hdr[4];
		memcpy(hdr, SALVAGE_MAGIC, 8);
		hdr[1] = sp[i].off;
		hdr[2] = sp[i].len;
		hdr[3] = (uint64_t)time(NULL);
		r = fd_write_all(fd, hdr, sizeof(hdr));
		for (uint64_t done = 0; done < sp[i].len && !r; done += SCAN_CHUNK) {
			size_t k = (size_t)(sp[i].len - done < SCAN_CHUNK ? sp[i].len - done : SCAN_CHUNK);
			r = fd_pread_all(s->fd, buf, k, sp[i].off + done);
			if (!r)
				r = fd_write_all(fd, buf, k);
		}
	}
	free(buf);
	if (!r && fsync(fd) != 0)
		r = -errno;
	close(fd);
	return r;
}

/* Says what recovery found and did, on stderr (unless UNVME_QUIET). */
static void report(const struct kv_store *s, const struct span *sp, size_t n, bool tail,
		   const char *saved, int salvage_err)
{
	if (!unvme_log_on())
		return;
	fprintf(stderr, "unvme: emulated KV namespace %s: recovery found %llu damaged byte%s in "
		"%zu span%s (", s->path, (unsigned long long)s->damaged_bytes,
		s->damaged_bytes == 1 ? "" : "s", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < 8; i++)
		fprintf(stderr, "%s%llu bytes at offset %llu", i ? ", " : "",
			(unsigned long long)sp[i].len, (unsigned long long)sp[i].off);
	fprintf(stderr, "%s)%s; ", n > 8 ? ", ..." : "",
		tail ? ", the last one a torn append" : "");
	if (salvage_err)
		fprintf(stderr, "they could not be copied to %s (%s) and stay in the log, skipped; "
			"intact records after them are kept\n", saved, strerror(-salvage_err));
	else
		fprintf(stderr, "their bytes were copied to %s and taken out of the log; intact "
			"records after them are kept (a key whose record was damaged may show an "
			"older value)\n", saved);
}

int kv_file_load(struct kv_store *s, char *err, size_t errlen)
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
		int r = kv_file_init(s->fd);
		if (r)
			emu_ns_set_error(err, errlen, "%s: cannot initialise: %s", s->path, strerror(-r));
		return r;
	}
	uint8_t sb[KV_SB_SIZE];
	uint32_t crc;
	if (fsize < KV_SB_SIZE || fd_pread_all(s->fd, sb, sizeof(sb), 0) != 0 ||
	    memcmp(sb, KV_SB_MAGIC, 8) != 0 || (memcpy(&crc, sb + 12, 4), crc != kv_crc32c(0, sb, 12))) {
		emu_ns_set_error(err, errlen, "%s is not a KV namespace log (bad superblock)", s->path);
		return -EINVAL;
	}

	/* a window as large as the file is enough (a small log costs no 6 MiB buffer) */
	struct scan sc = { .fd = s->fd, .fsize = fsize,
			   .buf = malloc(fsize < SCAN_WINDOW ? fsize : SCAN_WINDOW) };
	struct span *spans = NULL;
	size_t nspans = 0, cap = 0;
	if (!sc.buf) {
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	uint64_t off = KV_SB_SIZE;
	int r = 0;
	while (off < fsize && !r) {
		struct kv_rec_hdr h;
		const uint8_t *key = record_at(&sc, off, &h);
		if (sc.err)
			break;
		if (!key) {
			uint64_t next = resync(&sc, off);
			if (sc.err)
				break;
			if (nspans == cap) {
				cap = cap ? 2 * cap : 8;
				struct span *ns = realloc(spans, cap * sizeof(*ns));
				if (!ns) {
					r = -ENOMEM;
					break;
				}
				spans = ns;
			}
			spans[nspans++] = (struct span){ off, next - off };
			s->damaged_bytes += next - off;
			off = next;
			continue;
		}
		r = replay(s, &h, key, off);
		if (h.seq >= s->seq)
			s->seq = h.seq + 1;
		off += kv_rec_size(h.klen, h.vlen);
	}
	free(sc.buf);
	if (sc.err && !r) {
		r = sc.err;
		emu_ns_set_error(err, errlen, "%s: cannot read the log: %s", s->path, strerror(-r));
	} else if (r) {
		emu_ns_set_error(err, errlen, "%s: out of memory rebuilding the index", s->path);
	}
	if (r) {
		free(spans);
		return r;
	}
	s->damaged_spans = nspans;
	s->tail = fsize;
	if (!nspans)
		return 0;

	bool tail = spans[nspans - 1].off + spans[nspans - 1].len == fsize;
	char saved[PATH_MAX + 16];
	int se = salvage(s, spans, nspans, saved, sizeof(saved));
	report(s, spans, nspans, tail, saved, se);
	if (se) {
		/* the damage stays; appends go after it, 8-byte aligned for the next resync */
		s->tail = (fsize + 7) & ~(uint64_t)7;
		s->dead += s->tail - fsize + s->damaged_bytes;
		free(spans);
		return 0;
	}
	if (tail) {
		s->tail = spans[nspans - 1].off;
		if (ftruncate(s->fd, (off_t)s->tail) != 0) {
			int e = errno;
			free(spans);
			emu_ns_set_error(err, errlen, "%s: cannot cut the torn tail: %s", s->path,
					 strerror(e));
			return -e;
		}
		nspans--;
	}
	if (nspans) {
		/* damage in the middle: copied away, now compacted out of the log */
		for (size_t i = 0; i < nspans; i++)
			s->dead += spans[i].len;
		r = kv_compact(s);
		if (r) {
			free(spans);
			emu_ns_set_error(err, errlen, "%s: cannot rewrite the log without its damaged "
					 "records: %s", s->path, strerror(-r));
			return r;
		}
	}
	free(spans);
	return 0;
}
