/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metadata journal. Operations change the in-memory metadata and append a record under
 * jlock; a commit turns every record appended so far into one transaction: NVMe Flush (so
 * the data the records describe is durable first), the transaction, Flush. A transaction is
 * all or nothing at replay (one checksum covers it), so a crash leaves a prefix of the
 * operations. Concurrent fsyncs share one commit (group commit).
 *
 * Transactions are bounded (txn_max bytes of records, as jbd2 bounds its transactions): a
 * commit that holds more writes them as several transactions, cut only where an operation
 * ends (bfs_jnl_op_done), each durable (FUA) before the next one is written. A crash in
 * between leaves a prefix of the operations, as always; and because nothing is written to
 * the journal before the transactions ahead of it are durable, a valid transaction found
 * after a damaged one proves that the damaged one had been acknowledged: replay reports it
 * (bfs_jnl_replay's *lost) instead of silently dropping both. A burst of changes that fills
 * txn_max wakes the flusher, which commits it without waiting for the commit interval.
 *
 * When the transactions do not fit before the journal's end, the commit writes a checkpoint
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

void bfs_jnl_op_done(struct blobfs *fs)
{
	struct bfs_journal *j = &fs->j;
	if (j->ncuts && j->cuts[j->ncuts - 1].len >= j->len)
		return;
	if (j->ncuts == j->capcuts) {
		size_t cap = j->capcuts ? j->capcuts * 2 : 256;
		struct bfs_jcut *c = realloc(j->cuts, cap * sizeof(*c));
		if (!c)
			return; /* this operation and the next share a transaction: still correct */
		j->cuts = c;
		j->capcuts = cap;
	}
	j->cuts[j->ncuts++] = (struct bfs_jcut){ j->len, j->nrec };
	/* A full transaction is committed now, not at the next interval (jbd2's t_max). */
	if (j->len >= j->txn_max && !j->kicked) {
		j->kicked = true;
		bfs_flusher_kick(fs);
	}
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
	j->deferred_clusters += count;
}

/* jlock held: frees what transactions up to `seq` released. */
static void release_deferred(struct blobfs *fs, uint64_t seq)
{
	struct bfs_journal *j = &fs->j;
	size_t w = 0;
	for (size_t i = 0; i < j->ndefer; i++) {
		if (j->defer[i].seq <= seq) {
			bfs_alloc_free(&fs->alloc, j->defer[i].pclu, j->defer[i].count);
			j->deferred_clusters -= j->defer[i].count;
		} else
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

/* The records one commit takes from the buffer, cut into bounded transactions. */
struct taken {
	uint8_t *recs;
	size_t len;
	uint32_t nrec;
	struct bfs_jcut *parts;      /* end of each transaction (bytes, records) */
	size_t nparts;
	uint64_t blocks;             /* all of them, headers included */
};

static uint64_t txn_blocks(size_t payload)
{
	return (TXN_HDR + payload + BFS_BLOCK - 1) / BFS_BLOCK;
}

/* jlock held: the records appended so far leave the buffer. Transactions end at operation
 * boundaries once they hold txn_max bytes (one operation larger than that goes whole). */
static int take_records(struct bfs_journal *j, struct taken *t)
{
	memset(t, 0, sizeof(*t));
	t->parts = malloc((j->ncuts + 1) * sizeof(*t->parts));
	if (!t->parts)
		return bfs_err(-ENOMEM, "out of memory for a journal commit");
	size_t start = 0;
	for (size_t i = 0; i < j->ncuts; i++) {
		const struct bfs_jcut *c = &j->cuts[i];
		bool last_cut = i + 1 == j->ncuts;
		size_t next = last_cut ? j->len : j->cuts[i + 1].len;
		if (c->len > start && next - start > j->txn_max) {
			t->parts[t->nparts++] = *c;
			start = c->len;
		}
	}
	if (j->len > start || t->nparts == 0)
		t->parts[t->nparts++] = (struct bfs_jcut){ j->len, j->nrec };
	size_t prev = 0;
	for (size_t i = 0; i < t->nparts; i++) {
		t->blocks += txn_blocks(t->parts[i].len - prev);
		prev = t->parts[i].len;
	}
	t->recs = j->buf;
	t->len = j->len;
	t->nrec = j->nrec;
	j->buf = NULL;
	j->len = j->cap = 0;
	j->nrec = 0;
	j->ncuts = 0;
	j->kicked = false;
	return 0;
}

static void taken_free(struct taken *t)
{
	free(t->recs);
	free(t->parts);
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

/* Writes the taken records as transactions seq, seq+1, ... from journal block head, each
 * durable before the next is written. commit_lock held. */
static int write_parts(struct blobfs *fs, struct bfs_qctx *q, const struct taken *t, uint64_t seq,
		       uint64_t head)
{
	size_t off = 0;
	uint32_t nrec = 0;
	for (size_t i = 0; i < t->nparts; i++) {
		size_t len = t->parts[i].len - off;
		uint64_t nb = txn_blocks(len);
		int rc = write_txn(fs, q, seq + i, head, t->recs + off, len, t->parts[i].nrec - nrec, nb);
		if (rc)
			return rc;
		atomic_fetch_add(&fs->st.commits, 1);
		head += nb;
		off = t->parts[i].len;
		nrec = t->parts[i].nrec;
	}
	return 0;
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
	struct taken t;
	rc = take_records(j, &t);
	if (rc) {
		pthread_mutex_unlock(&fs->jlock);
		goto out;
	}
	bool ckpt = j->head + t.blocks > fs->g.jnl_blocks;
	uint8_t *snap = NULL;
	size_t snap_len = 0;
	uint64_t ninodes = 0;
	/* A checkpoint takes one sequence number, transactions one each. */
	uint64_t seq = j->seq, last = ckpt ? seq : seq + t.nparts - 1;
	j->seq = last + 1;
	if (ckpt)
		rc = bfs_ckpt_build(fs, &snap, &snap_len, &ninodes);
	uint64_t head = j->head;
	pthread_mutex_unlock(&fs->jlock);

	/* Data first: a Flush makes every write the records describe durable (skipped when
	 * nothing was written since the last one). Then the transactions, with FUA, so each is
	 * durable when it completes; or, when they do not fit, a checkpoint instead. */
	if (!rc && gen != fs->flushed_gen)
		rc = bfs_io_flush(q);
	if (!rc && ckpt)
		rc = write_checkpoint(fs, q, seq, snap, snap_len, ninodes, false);
	else if (!rc)
		rc = write_parts(fs, q, &t, seq, head);
	taken_free(&t);
	free(snap);
	if (rc) {
		fs->jnl_error = rc;
		goto out;
	}
	committed(fs, last, ckpt ? 0 : head + t.blocks, gen);
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
	uint8_t *snap = NULL;
	size_t snap_len = 0;
	uint64_t ninodes = 0;
	struct taken t;
	uint64_t seq = fs->j.seq;
	rc = take_records(&fs->j, &t);
	if (!rc) {
		taken_free(&t);
		fs->j.seq++;
		rc = bfs_ckpt_build(fs, &snap, &snap_len, &ninodes);
	}
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

/* A header that could start a transaction of this file system at journal block blk. */
static bool hdr_plausible(const struct blobfs *fs, const struct bfs_txn_hdr *h, uint64_t blk)
{
	return h->magic == BFS_TXN_MAGIC && memcmp(h->uuid, fs->sb.uuid, 16) == 0 && h->nblocks > 0 &&
	       h->nblocks <= fs->g.jnl_blocks - blk &&
	       (uint64_t)h->payload_len + TXN_HDR <= (uint64_t)h->nblocks * BFS_BLOCK;
}

/* Reads the transaction whose plausible header h sits at journal block blk into fs->jdma
 * and checks its checksum: *valid says whether it is whole. */
static int read_txn(struct blobfs *fs, struct bfs_qctx *q, uint64_t blk, const struct bfs_txn_hdr *h,
		    bool *valid)
{
	/* Reserving may replace the buffer: read the whole transaction after it. */
	int rc = bfs_jdma_reserve(fs, (size_t)h->nblocks * BFS_BLOCK);
	if (!rc)
		rc = bfs_io_read(q, fs->jdma, fs->g.jnl_start + blk, h->nblocks, "journal read");
	if (rc)
		return rc;
	struct bfs_txn_hdr z = *h;
	z.crc = 0;
	memcpy(fs->jdma, &z, TXN_HDR);
	*valid = bfs_crc(fs->jdma, TXN_HDR + h->payload_len) == h->crc;
	return 0;
}

static int apply_txn(struct blobfs *fs, const struct bfs_txn_hdr *h)
{
	const uint8_t *p = fs->jdma + TXN_HDR, *end = p + h->payload_len;
	for (uint32_t i = 0; i < h->nrecords; i++) {
		struct bfs_rec r;
		size_t l = bfs_rec_decode(p, (size_t)(end - p), &r);
		if (!l)
			return bfs_err(BLOBFS_EBADSB, "journal transaction %llu: record %u is malformed",
				       (unsigned long long)h->seq, i);
		int rc;
		if (r.type == BFS_REC_MAP || r.type == BFS_REC_SETSIZE || r.type == BFS_REC_TRUNCATE ||
		    r.type == BFS_REC_PUNCH)
			rc = bfs_rec_replay_data(fs, &r);
		else
			rc = bfs_rec_apply_ns(fs, &r, false, NULL);
		if (rc) {
			char msg[512];
			snprintf(msg, sizeof(msg), "%s", blobfs_errmsg());
			return bfs_err(rc, "journal transaction %llu record %u: %s",
				       (unsigned long long)h->seq, i, msg);
		}
		p += l;
	}
	return 0;
}

#define SCAN_CHUNK 64u /* blocks read at a time when looking for stray transactions */

/* Looks through the whole journal for whole transactions newer than `last` (the last one
 * replay could apply). The journal is written in order, each transaction durable before the
 * next is started, so one found there was written after the transaction replay stopped at:
 * that one had been acknowledged, and the newer ones are acknowledged work the chain no
 * longer reaches. Also notes the highest sequence number in use. */
static int scan_newer(struct blobfs *fs, struct bfs_qctx *q, uint64_t last, struct bfs_replay *rp)
{
	uint8_t *chunk = unvme_dma_alloc((size_t)SCAN_CHUNK * BFS_BLOCK, BFS_PAGE);
	if (!chunk)
		return bfs_err(-ENOMEM, "out of DMA memory to scan the journal");
	int rc = 0;
	for (uint64_t base = 0; base < fs->g.jnl_blocks && !rc; base += SCAN_CHUNK) {
		uint64_t n = BFS_MIN((uint64_t)SCAN_CHUNK, fs->g.jnl_blocks - base);
		rc = bfs_io_read(q, chunk, fs->g.jnl_start + base, n, "journal scan");
		for (uint64_t i = 0; i < n && !rc; i++) {
			struct bfs_txn_hdr h;
			memcpy(&h, chunk + i * BFS_BLOCK, TXN_HDR);
			if (!hdr_plausible(fs, &h, base + i) || h.seq <= last)
				continue;
			bool valid = false;
			rc = read_txn(fs, q, base + i, &h, &valid);
			if (rc || !valid)
				continue;
			rp->max_seq = BFS_MAX(rp->max_seq, h.seq);
			if (!rp->lost || h.seq < rp->lost_first) {
				rp->lost_first = h.seq;
				rp->lost_blk = base + i;
			}
			rp->lost_last = BFS_MAX(rp->lost_last, h.seq);
			rp->lost++;
		}
	}
	unvme_dma_free(chunk);
	return rc;
}

int bfs_jnl_replay(struct blobfs *fs, struct bfs_qctx *q, struct bfs_replay *rp, FILE *report)
{
	struct bfs_journal *j = &fs->j;
	uint64_t head = j->head, expect = j->committed_seq + 1;
	memset(rp, 0, sizeof(*rp));
	int rc = 0;
	while (head < fs->g.jnl_blocks) {
		rc = bfs_jdma_reserve(fs, BFS_BLOCK);
		if (!rc)
			rc = bfs_io_read(q, fs->jdma, fs->g.jnl_start + head, 1, "journal read");
		if (rc)
			return rc;
		struct bfs_txn_hdr h;
		memcpy(&h, fs->jdma, TXN_HDR);
		if (h.magic != BFS_TXN_MAGIC || memcmp(h.uuid, fs->sb.uuid, 16) != 0 || h.seq != expect)
			break; /* the end of the chain: an older transaction or nothing */
		bool valid = false;
		if (hdr_plausible(fs, &h, head)) {
			rc = read_txn(fs, q, head, &h, &valid);
			if (rc)
				return rc;
		}
		if (!valid) {
			/* Incomplete: it was being written when the system stopped. */
			rp->torn = true;
			rp->torn_seq = h.seq;
			rp->torn_blk = head;
			break;
		}
		rc = apply_txn(fs, &h);
		if (rc)
			return rc;
		head += h.nblocks;
		expect++;
		rp->count++;
	}
	rp->max_seq = expect - 1;
	rc = scan_newer(fs, q, expect - 1, rp);
	if (rc)
		return rc;
	if (report && rp->lost)
		fprintf(report, "journal: %s transaction %llu at block %llu, but %llu whole "
			"transaction%s (%llu..%llu, the first at block %llu) written after it: they were "
			"acknowledged and the replay cannot reach them\n",
			rp->torn ? "damaged" : "the chain ends before",
			(unsigned long long)expect, (unsigned long long)head,
			(unsigned long long)rp->lost, rp->lost == 1 ? "" : "s",
			(unsigned long long)rp->lost_first, (unsigned long long)rp->lost_last,
			(unsigned long long)rp->lost_blk);
	else if (report && rp->torn)
		fprintf(report, "journal: transaction %llu at block %llu is incomplete (a write cut "
			"short by the crash, so nobody was told it was durable); it is ignored\n",
			(unsigned long long)rp->torn_seq, (unsigned long long)rp->torn_blk);
	j->head = head;
	/* Numbers seen in the journal are never given out again, so nothing left there can
	 * ever pass for a newer transaction. */
	j->seq = BFS_MAX(expect, rp->max_seq + 1);
	j->committed_seq = expect - 1;
	return 0;
}
