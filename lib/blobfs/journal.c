/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metadata journal. Operations change the in-memory metadata and append a record under
 * jlock; a commit turns every record appended so far into one transaction: NVMe Flush (so
 * the data the records describe is durable first), the transaction, Flush. A transaction is
 * all or nothing at replay (one checksum covers it), so a crash leaves a prefix of the
 * operations. Concurrent fsyncs share one commit (group commit).
 *
 * When a transaction does not fit before the journal's end, the commit writes a checkpoint
 * (a snapshot of the metadata) to the older slot instead, and the journal starts again at
 * its first block. Clusters freed by a record are reused only once its transaction is
 * durable, so a crash can never leave a file pointing at another file's new data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

#define TXN_HDR sizeof(struct bfs_txn_hdr)

int bfs_jnl_append(struct blobfs *fs, const struct bfs_rec *r)
{
	struct bfs_journal *j = &fs->j;
	size_t need = bfs_rec_size(r);
	if (j->len + need > j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 64 * 1024;
		while (cap < j->len + need)
			cap *= 2;
		uint8_t *b = realloc(j->buf, cap);
		if (!b)
			return bfs_err(-ENOMEM, "out of memory for the journal buffer");
		j->buf = b;
		j->cap = cap;
	}
	if (!j->len)
		j->first_rec_ns = bfs_now_ns();
	j->len += bfs_rec_encode(r, j->buf + j->len);
	j->nrec++;
	return 0;
}

void bfs_jnl_defer_free(struct blobfs *fs, uint64_t pclu, uint64_t count)
{
	struct bfs_journal *j = &fs->j;
	if (j->ndefer == j->capdefer) {
		size_t cap = j->capdefer ? j->capdefer * 2 : 64;
		struct bfs_deferred *d = realloc(j->defer, cap * sizeof(*d));
		if (!d) {
			/* Cannot remember it: leaking the clusters until the next mount is safe. */
			return;
		}
		j->defer = d;
		j->capdefer = cap;
	}
	j->defer[j->ndefer++] = (struct bfs_deferred){ pclu, count, j->seq };
}

/* jlock held: frees what transactions up to `seq` released. */
static void release_deferred(struct blobfs *fs, uint64_t seq)
{
	struct bfs_journal *j = &fs->j;
	size_t w = 0;
	for (size_t i = 0; i < j->ndefer; i++) {
		if (j->defer[i].seq <= seq)
			bfs_alloc_free(&fs->alloc, j->defer[i].pclu, j->defer[i].count);
		else
			j->defer[w++] = j->defer[i];
	}
	j->ndefer = w;
}

bool bfs_jnl_pending(struct blobfs *fs)
{
	pthread_mutex_lock(&fs->jlock);
	bool p = fs->j.len > 0 || fs->j.ndefer > 0;
	pthread_mutex_unlock(&fs->jlock);
	return p;
}

int bfs_jdma_reserve(struct blobfs *fs, size_t bytes)
{
	if (fs->jdma_cap >= bytes)
		return 0;
	size_t cap = fs->jdma_cap ? fs->jdma_cap : 64 * 1024;
	while (cap < bytes)
		cap *= 2;
	uint8_t *b = unvme_dma_alloc(cap, BFS_PAGE);
	if (!b)
		return bfs_err(-ENOMEM, "out of DMA memory for a %zu-byte journal transaction", bytes);
	unvme_dma_free(fs->jdma);
	fs->jdma = b;
	fs->jdma_cap = cap;
	return 0;
}

static int write_txn(struct blobfs *fs, struct bfs_qctx *q, uint64_t seq, uint64_t head,
		     const uint8_t *recs, size_t len, uint32_t nrec, uint64_t nblocks)
{
	int rc = bfs_jdma_reserve(fs, nblocks * BFS_BLOCK);
	if (rc)
		return rc;
	struct bfs_txn_hdr h = { .magic = BFS_TXN_MAGIC, .seq = seq, .nblocks = (uint32_t)nblocks,
				 .payload_len = (uint32_t)len, .nrecords = nrec };
	memcpy(h.uuid, fs->sb.uuid, 16);
	memcpy(fs->jdma, &h, TXN_HDR);
	memcpy(fs->jdma + TXN_HDR, recs, len);
	memset(fs->jdma + TXN_HDR + len, 0, nblocks * BFS_BLOCK - TXN_HDR - len);
	h.crc = bfs_crc(fs->jdma, TXN_HDR + len);
	memcpy(fs->jdma, &h, TXN_HDR);
	return bfs_io_write_fua(q, fs->jdma, fs->g.jnl_start + head, nblocks, "journal write");
}

/* jlock held: the records appended so far leave the buffer, as transaction `seq`. */
static uint64_t take_records(struct bfs_journal *j, uint8_t **recs, size_t *len, uint32_t *nrec)
{
	*recs = j->buf;
	*len = j->len;
	*nrec = j->nrec;
	j->buf = NULL;
	j->len = j->cap = 0;
	j->nrec = 0;
	return j->seq++;
}

/* Writes a checkpoint of transaction seq to the older slot, then a Flush (it is several
 * blocks, written without FUA). commit_lock held. */
static int write_checkpoint(struct blobfs *fs, struct bfs_qctx *q, uint64_t seq, const uint8_t *snap,
			    size_t len, uint64_t ninodes, bool clean)
{
	uint32_t slot = fs->j.last_ckpt_slot ^ 1u;
	int rc = bfs_ckpt_write(fs, q, slot, seq, 0, snap, len, ninodes, clean);
	if (!rc)
		rc = bfs_io_flush(q);
	if (!rc) {
		fs->j.last_ckpt_slot = slot;
		atomic_fetch_add(&fs->st.checkpoints, 1);
	}
	return rc;
}

/* commit_lock held: transaction seq is durable; the journal continues at head. */
static void committed(struct blobfs *fs, uint64_t seq, uint64_t head, uint64_t gen)
{
	fs->flushed_gen = gen;
	pthread_mutex_lock(&fs->jlock);
	fs->j.committed_seq = seq;
	fs->j.head = head;
	release_deferred(fs, seq);
	pthread_mutex_unlock(&fs->jlock);
}

/* commit_lock held: a commit failed before, nothing more goes to the journal. */
static int failed_before(struct blobfs *fs)
{
	return bfs_err(fs->jnl_error, "the journal failed earlier; remount to recover");
}

int bfs_jnl_commit(struct blobfs *fs)
{
	if (fs->read_only)
		return 0;
	int rc = 0;
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		return rc;
	struct bfs_journal *j = &fs->j;
	pthread_mutex_lock(&fs->jlock);
	uint64_t target = j->len ? j->seq : j->seq - 1;
	pthread_mutex_unlock(&fs->jlock);

	pthread_mutex_lock(&fs->commit_lock);
	if (fs->jnl_error) {
		rc = failed_before(fs);
		goto out;
	}
	pthread_mutex_lock(&fs->jlock);
	/* Sampled under jlock: every record taken below had its data write counted already. */
	uint64_t gen = atomic_load(&fs->write_gen);
	if (j->committed_seq >= target) {
		/* Someone committed our records already; data written since may still need a Flush. */
		pthread_mutex_unlock(&fs->jlock);
		if (gen != fs->flushed_gen) {
			rc = bfs_io_flush(q);
			if (!rc)
				fs->flushed_gen = gen;
		}
		goto out;
	}
	uint8_t *recs;
	size_t len;
	uint32_t nrec;
	uint64_t seq = take_records(j, &recs, &len, &nrec);
	uint64_t nblocks = (TXN_HDR + len + BFS_BLOCK - 1) / BFS_BLOCK;
	bool ckpt = j->head + nblocks > fs->g.jnl_blocks;
	uint8_t *snap = NULL;
	size_t snap_len = 0;
	uint64_t ninodes = 0;
	if (ckpt)
		rc = bfs_ckpt_build(fs, &snap, &snap_len, &ninodes);
	uint64_t head = j->head;
	pthread_mutex_unlock(&fs->jlock);

	/* Data first: a Flush makes every write the records describe durable (skipped when
	 * nothing was written since the last one). Then the transaction, with FUA, so it is
	 * durable when it completes; or, when it does not fit, a checkpoint instead. */
	if (!rc && gen != fs->flushed_gen)
		rc = bfs_io_flush(q);
	if (!rc && ckpt)
		rc = write_checkpoint(fs, q, seq, snap, snap_len, ninodes, false);
	else if (!rc)
		rc = write_txn(fs, q, seq, head, recs, len, nrec, nblocks);
	free(recs);
	free(snap);
	if (rc) {
		fs->jnl_error = rc;
		goto out;
	}
	if (!ckpt)
		atomic_fetch_add(&fs->st.commits, 1);
	committed(fs, seq, ckpt ? 0 : head + nblocks, gen);
out:
	pthread_mutex_unlock(&fs->commit_lock);
	return rc;
}

int bfs_jnl_checkpoint(struct blobfs *fs, bool clean)
{
	if (fs->read_only)
		return 0;
	int rc = 0;
	struct bfs_qctx *q = bfs_qctx_get(fs, &rc);
	if (!q)
		return rc;
	pthread_mutex_lock(&fs->commit_lock);
	if (fs->jnl_error) {
		rc = failed_before(fs);
		pthread_mutex_unlock(&fs->commit_lock);
		return rc;
	}
	pthread_mutex_lock(&fs->jlock);
	uint64_t gen = atomic_load(&fs->write_gen);
	/* Pending records (if any) are folded into the snapshot, which takes a sequence number
	 * of its own like a transaction (so the newer of two checkpoints is always known). */
	uint8_t *recs, *snap = NULL;
	size_t len, snap_len = 0;
	uint32_t nrec;
	uint64_t ninodes = 0;
	uint64_t seq = take_records(&fs->j, &recs, &len, &nrec);
	free(recs);
	rc = bfs_ckpt_build(fs, &snap, &snap_len, &ninodes);
	pthread_mutex_unlock(&fs->jlock);
	if (!rc && gen != fs->flushed_gen)
		rc = bfs_io_flush(q);
	if (!rc)
		rc = write_checkpoint(fs, q, seq, snap, snap_len, ninodes, clean);
	free(snap);
	if (rc)
		fs->jnl_error = rc;
	else
		committed(fs, seq, 0, gen);
	pthread_mutex_unlock(&fs->commit_lock);
	return rc;
}

/* ---- replay ---- */

int bfs_jnl_replay(struct blobfs *fs, struct bfs_qctx *q, uint64_t *count, bool *torn, FILE *report)
{
	struct bfs_journal *j = &fs->j;
	uint64_t head = j->head, expect = j->committed_seq + 1, n = 0;
	*torn = false;
	int rc = 0;
	while (head < fs->g.jnl_blocks) {
		rc = bfs_jdma_reserve(fs, BFS_BLOCK);
		if (rc)
			return rc;
		rc = bfs_io_read(q, fs->jdma, fs->g.jnl_start + head, 1, "journal read");
		if (rc)
			return rc;
		struct bfs_txn_hdr h;
		memcpy(&h, fs->jdma, TXN_HDR);
		if (h.magic != BFS_TXN_MAGIC || memcmp(h.uuid, fs->sb.uuid, 16) != 0 || h.seq != expect)
			break; /* the end of the journal: an older transaction or nothing */
		if (h.nblocks == 0 || h.nblocks > fs->g.jnl_blocks - head ||
		    (uint64_t)h.payload_len + TXN_HDR > (uint64_t)h.nblocks * BFS_BLOCK) {
			*torn = true;
			break;
		}
		rc = bfs_jdma_reserve(fs, (size_t)h.nblocks * BFS_BLOCK);
		if (rc)
			return rc;
		if (h.nblocks > 1) {
			rc = bfs_io_read(q, fs->jdma + BFS_BLOCK, fs->g.jnl_start + head + 1, h.nblocks - 1,
					 "journal read");
			if (rc)
				return rc;
		}
		uint32_t crc = h.crc;
		struct bfs_txn_hdr z = h;
		z.crc = 0;
		memcpy(fs->jdma, &z, TXN_HDR);
		if (bfs_crc(fs->jdma, TXN_HDR + h.payload_len) != crc) {
			/* Torn by the crash: it was never acknowledged, so it is not applied. */
			*torn = true;
			if (report)
				fprintf(report, "journal: transaction %llu at block %llu is incomplete (torn "
					"write); it and anything after it are ignored\n",
					(unsigned long long)h.seq, (unsigned long long)head);
			break;
		}
		const uint8_t *p = fs->jdma + TXN_HDR, *end = p + h.payload_len;
		for (uint32_t i = 0; i < h.nrecords; i++) {
			struct bfs_rec r;
			size_t l = bfs_rec_decode(p, (size_t)(end - p), &r);
			if (!l)
				return bfs_err(BLOBFS_EBADSB, "journal transaction %llu: record %u is malformed",
					       (unsigned long long)h.seq, i);
			if (r.type == BFS_REC_MAP || r.type == BFS_REC_SETSIZE || r.type == BFS_REC_TRUNCATE)
				rc = bfs_rec_replay_data(fs, &r);
			else
				rc = bfs_rec_apply_ns(fs, &r, false, NULL);
			if (rc) {
				char msg[512];
				snprintf(msg, sizeof(msg), "%s", blobfs_errmsg());
				return bfs_err(rc, "journal transaction %llu record %u: %s",
					       (unsigned long long)h.seq, i, msg);
			}
			p += l;
		}
		head += h.nblocks;
		expect++;
		n++;
	}
	j->head = head;
	j->seq = expect;
	j->committed_seq = expect - 1;
	*count = n;
	return 0;
}
