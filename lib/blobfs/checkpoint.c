/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoints: a snapshot of every inode's logged state (the tree, attributes, sizes and
 * the extents whose MAP record was written), in two slots used alternately. A checkpoint is
 * valid when its header and payload checksums match and it carries the file system's uuid;
 * mount takes the valid one with the higher sequence number, so a checkpoint torn by a
 * crash leaves the previous one (and the journal after it, which is not reused until the
 * new checkpoint is durable) in charge.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

struct build {
	uint8_t *buf;
	size_t len, cap;
	uint64_t n;
	int rc;
};

static int grow(struct build *b, size_t need)
{
	if (b->len + need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap * 2 : 64 * 1024;
	while (cap < b->len + need)
		cap *= 2;
	uint8_t *p = realloc(b->buf, cap);
	if (!p)
		return bfs_err(-ENOMEM, "out of memory for a checkpoint");
	b->buf = p;
	b->cap = cap;
	return 0;
}

static void add_inode(void *arg, struct bfs_inode *in)
{
	struct build *b = arg;
	if (b->rc)
		return;
	uint32_t nlogged = 0;
	for (uint32_t i = 0; i < in->ext.n; i++)
		if (!(in->ext.e[i].flags & BFS_UNLOGGED))
			nlogged++;
	size_t link_len = in->link ? strlen(in->link) : 0;
	size_t need = sizeof(struct bfs_ckpt_inode) + in->name_len + link_len +
		      (size_t)nlogged * sizeof(struct bfs_extent_disk) + 8;
	if ((b->rc = grow(b, need)) != 0)
		return;
	struct bfs_ckpt_inode ci = {
		.ino = in->ino,
		.parent = in->parent ? in->parent->ino : 0,
		.size = in->type == BLOBFS_TYPE_FILE ? in->logged_size :
			in->type == BLOBFS_TYPE_CHR || in->type == BLOBFS_TYPE_BLK ? in->rdev : link_len,
		.atime_ns = atomic_load(&in->atime_ns),
		.mtime_ns = in->type == BLOBFS_TYPE_FILE ? in->logged_mtime : atomic_load(&in->mtime_ns),
		.ctime_ns = atomic_load(&in->ctime_ns),
		.mode = in->mode, .uid = in->uid, .gid = in->gid,
		.type = in->type,
		.name_len = in->name_len,
		.nextents = nlogged,
		.link_len = (uint32_t)link_len,
	};
	uint8_t *p = b->buf + b->len;
	memcpy(p, &ci, sizeof(ci));
	p += sizeof(ci);
	if (in->name_len)
		memcpy(p, in->name, in->name_len);
	p += in->name_len;
	if (link_len)
		memcpy(p, in->link, link_len);
	p += link_len;
	for (uint32_t i = 0; i < in->ext.n; i++) {
		const struct bfs_extent *e = &in->ext.e[i];
		if (e->flags & BFS_UNLOGGED)
			continue;
		struct bfs_extent_disk d = { e->lclu, e->pclu, e->count, 0 };
		memcpy(p, &d, sizeof(d));
		p += sizeof(d);
	}
	size_t used = (size_t)(p - (b->buf + b->len));
	size_t padded = (used + 7) & ~(size_t)7;
	memset(p, 0, padded - used);
	b->len += padded;
	b->n++;
}

int bfs_ckpt_build(struct blobfs *fs, uint8_t **payload, size_t *len, uint64_t *ninodes)
{
	struct build b = {0};
	bfs_itable_each(fs, add_inode, &b);
	if (b.rc) {
		free(b.buf);
		return b.rc;
	}
	*payload = b.buf;
	*len = b.len;
	*ninodes = b.n;
	return 0;
}

int bfs_ckpt_write(struct blobfs *fs, struct bfs_qctx *q, uint32_t slot, uint64_t seq,
		   uint64_t jnl_head, const uint8_t *payload, size_t len, uint64_t ninodes, bool clean)
{
	uint64_t blocks = 1 + (len + BFS_BLOCK - 1) / BFS_BLOCK;
	if (blocks > fs->g.ckpt_blocks)
		return bfs_err(-ENOSPC, "the metadata (%zu bytes) no longer fits its %llu-byte checkpoint "
			       "slot", len, (unsigned long long)((fs->g.ckpt_blocks - 1) * BFS_BLOCK));
	int rc = bfs_jdma_reserve(fs, blocks * BFS_BLOCK);
	if (rc)
		return rc;
	uint8_t *buf = fs->jdma;
	memset(buf, 0, BFS_BLOCK);
	if (len)
		memcpy(buf + BFS_BLOCK, payload, len);
	memset(buf + BFS_BLOCK + len, 0, blocks * BFS_BLOCK - BFS_BLOCK - len);
	struct bfs_ckpt_hdr h = {
		.magic = BFS_CKPT_MAGIC, .seq = seq, .jnl_head = jnl_head, .next_ino = fs->next_ino,
		.ninodes = ninodes, .payload_len = len, .payload_crc = bfs_crc(payload, len),
		.clean = clean ? 1u : 0u, .time_ns = bfs_now_ns(),
	};
	memcpy(h.uuid, fs->sb.uuid, 16);
	h.crc = bfs_crc(&h, sizeof(h));
	memcpy(buf, &h, sizeof(h));
	return bfs_io_write(q, buf, fs->g.ckpt[slot], blocks, "checkpoint write");
}

/* ---- loading ---- */

static int read_hdr(struct blobfs *fs, struct bfs_qctx *q, uint32_t slot, struct bfs_ckpt_hdr *h)
{
	int rc = bfs_jdma_reserve(fs, BFS_BLOCK);
	if (rc)
		return rc;
	rc = bfs_io_read(q, fs->jdma, fs->g.ckpt[slot], 1, "checkpoint read");
	if (rc)
		return rc;
	memcpy(h, fs->jdma, sizeof(*h));
	struct bfs_ckpt_hdr z = *h;
	z.crc = 0;
	if (h->magic != BFS_CKPT_MAGIC || memcmp(h->uuid, fs->sb.uuid, 16) != 0 ||
	    bfs_crc(&z, sizeof(z)) != h->crc)
		return 1; /* not a checkpoint of this file system */
	if (h->payload_len > (fs->g.ckpt_blocks - 1) * BFS_BLOCK)
		return 1;
	return 0;
}

struct pending_link {
	struct bfs_inode *in;
	uint64_t parent;
	const char *name;
	uint16_t name_len;
};

static int parse(struct blobfs *fs, const uint8_t *p, size_t len, uint64_t ninodes, const char **why)
{
	struct pending_link *links = calloc(ninodes ? ninodes : 1, sizeof(*links));
	if (!links)
		return bfs_err(-ENOMEM, "out of memory loading a checkpoint");
	const uint8_t *end = p + len;
	uint64_t n = 0;
	int rc = 0;
	while (n < ninodes) {
		struct bfs_ckpt_inode ci;
		if ((size_t)(end - p) < sizeof(ci)) {
			*why = "truncated inode record";
			rc = BLOBFS_EBADSB;
			break;
		}
		memcpy(&ci, p, sizeof(ci));
		size_t need = sizeof(ci) + ci.name_len + ci.link_len +
			      (size_t)ci.nextents * sizeof(struct bfs_extent_disk);
		uint32_t tmax = fs->sb.version >= 2 ? BFS_TYPE_MAX : BLOBFS_TYPE_SYMLINK;
		if ((size_t)(end - p) < need || ci.type < 1 || ci.type > tmax ||
		    ci.name_len > BLOBFS_NAME_MAX || ci.link_len > BLOBFS_PATH_MAX ||
		    bfs_itable_find(fs, ci.ino) || ci.ino == 0) {
			*why = "malformed or duplicate inode record";
			rc = BLOBFS_EBADSB;
			break;
		}
		struct bfs_inode *in = bfs_inode_new(fs, ci.ino, ci.type);
		if (!in) {
			rc = -ENOMEM;
			break;
		}
		in->mode = ci.mode;
		in->uid = ci.uid;
		in->gid = ci.gid;
		atomic_store(&in->atime_ns, ci.atime_ns);
		atomic_store(&in->mtime_ns, ci.mtime_ns);
		atomic_store(&in->ctime_ns, ci.ctime_ns);
		in->logged_mtime = ci.mtime_ns;
		if (ci.type == BLOBFS_TYPE_CHR || ci.type == BLOBFS_TYPE_BLK) {
			in->rdev = ci.size;
		} else if (ci.type == BLOBFS_TYPE_FILE || ci.type == BLOBFS_TYPE_SYMLINK) {
			atomic_store(&in->size, ci.size);
			in->logged_size = ci.size;
		}
		const uint8_t *q = p + sizeof(ci);
		links[n] = (struct pending_link){ in, ci.parent, (const char *)q, ci.name_len };
		q += ci.name_len;
		if (ci.type == BLOBFS_TYPE_SYMLINK) {
			in->link = malloc(ci.link_len + 1u);
			if (!in->link) {
				bfs_inode_destroy(fs, in);
				rc = -ENOMEM;
				break;
			}
			memcpy(in->link, q, ci.link_len);
			in->link[ci.link_len] = '\0';
		}
		q += ci.link_len;
		for (uint32_t i = 0; i < ci.nextents && !rc; i++) {
			struct bfs_extent_disk d;
			memcpy(&d, q, sizeof(d));
			q += sizeof(d);
			if (d.count == 0 || d.pclu >= fs->g.nclusters || d.count > fs->g.nclusters - d.pclu) {
				*why = "an extent lies outside the data area";
				rc = BLOBFS_EBADSB;
			} else if (bfs_ext_add(&in->ext, d.lclu, d.pclu, d.count, 0)) {
				*why = "overlapping extents in one file";
				rc = BLOBFS_EBADSB;
			}
		}
		if (!rc)
			rc = bfs_itable_insert(fs, in);
		if (rc) {
			bfs_inode_destroy(fs, in);
			break;
		}
		size_t padded = (need + 7) & ~(size_t)7;
		p = (size_t)(end - p) < padded ? end : p + padded;
		n++;
	}
	/* Second pass: hang every inode under its parent. */
	for (uint64_t i = 0; i < n && !rc; i++) {
		struct pending_link *l = &links[i];
		if (l->in->ino == BFS_ROOT_INO) {
			if (l->parent != 0 || l->in->type != BLOBFS_TYPE_DIR) {
				*why = "the root is not a directory without a parent";
				rc = BLOBFS_EBADSB;
			}
			fs->root = l->in;
		} else {
			struct bfs_inode *parent = bfs_itable_find(fs, l->parent);
			if (!parent || parent->type != BLOBFS_TYPE_DIR || l->name_len == 0 ||
			    bfs_dir_find(parent, l->name, l->name_len)) {
				*why = "an inode's parent is missing, not a directory, or has the name twice";
				rc = BLOBFS_EBADSB;
			} else {
				rc = bfs_dir_add(parent, l->name, l->name_len, l->in);
			}
		}
		l->in->linked = true;
		atomic_store(&l->in->refs, 1);
		bfs_meta_update(fs, l->in);
	}
	if (!rc && !fs->root) {
		*why = "no root directory";
		rc = BLOBFS_EBADSB;
	}
	free(links);
	return rc;
}

/* Drops whatever a failed parse left in the table. */
static void unload(struct blobfs *fs)
{
	for (uint64_t i = 0; i < fs->itab_cap; i++) {
		struct bfs_inode *in = fs->itab[i];
		while (in) {
			struct bfs_inode *next = in->hnext;
			bfs_inode_destroy(fs, in);
			in = next;
		}
		fs->itab[i] = NULL;
	}
	fs->itab_n = 0;
	fs->root = NULL;
	atomic_store(&fs->meta_bytes, 0);
}

int bfs_ckpt_load(struct blobfs *fs, struct bfs_qctx *q, struct bfs_ckpt_hdr *hdr_out,
		  uint32_t *slot_out, FILE *report)
{
	struct bfs_ckpt_hdr h[2];
	int ok[2];
	for (uint32_t s = 0; s < 2; s++) {
		int rc = read_hdr(fs, q, s, &h[s]);
		if (rc < 0)
			return rc;
		ok[s] = rc == 0;
	}
	/* Newest first; fall back to the other if its payload is damaged. */
	uint32_t order[2] = { 0, 1 };
	if (ok[1] && (!ok[0] || h[1].seq > h[0].seq)) {
		order[0] = 1;
		order[1] = 0;
	}
	const char *why = "no valid checkpoint header";
	for (int k = 0; k < 2; k++) {
		uint32_t s = order[k];
		if (!ok[s])
			continue;
		size_t blocks = (h[s].payload_len + BFS_BLOCK - 1) / BFS_BLOCK;
		int rc = bfs_jdma_reserve(fs, (blocks ? blocks : 1) * BFS_BLOCK);
		if (!rc && blocks)
			rc = bfs_io_read(q, fs->jdma, fs->g.ckpt[s] + 1, blocks, "checkpoint read");
		if (rc)
			return rc;
		if (bfs_crc(fs->jdma, h[s].payload_len) != h[s].payload_crc) {
			why = "checkpoint payload checksum mismatch";
			if (report)
				fprintf(report, "checkpoint %c (seq %llu): payload checksum mismatch\n",
					s ? 'B' : 'A', (unsigned long long)h[s].seq);
			continue;
		}
		rc = parse(fs, fs->jdma, h[s].payload_len, h[s].ninodes, &why);
		if (rc == -ENOMEM)
			return rc;
		if (rc) {
			if (report)
				fprintf(report, "checkpoint %c (seq %llu): %s\n", s ? 'B' : 'A',
					(unsigned long long)h[s].seq, why);
			unload(fs);
			continue;
		}
		if (k == 1 && report)
			fprintf(report, "using the older checkpoint %c (seq %llu)\n", s ? 'B' : 'A',
				(unsigned long long)h[s].seq);
		fs->next_ino = BFS_MAX(h[s].next_ino, fs->next_ino);
		fs->j.committed_seq = h[s].seq;
		fs->j.seq = h[s].seq + 1;
		fs->j.head = h[s].jnl_head;
		fs->j.last_ckpt_slot = s;
		*hdr_out = h[s];
		*slot_out = s;
		return 0;
	}
	return bfs_err(BLOBFS_EBADSB, "no usable checkpoint: %s; run 'unvme fsck'", why);
}
