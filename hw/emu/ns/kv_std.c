/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The standard NVMe Key Value Command Set 1.0 (CSI 01h) on keyspace 0: Store, Retrieve,
 * Delete, Exist, List and Flush. Keys of 1..16 bytes travel in CDW2-3 (bytes 0..7) and
 * CDW14-15 (bytes 8..15), their length in CDW11 bits 7:0; statuses are the set's generic
 * codes 81h..89h.
 */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/ns/kv_ns.h"
#include "hw/emu/ns/ns_internal.h"

#define STD_KS 0u

static uint16_t std_status(uint8_t sc)
{
	return emu_ns_status(NVME_SCT_GENERIC, sc, true);
}

static uint16_t rc_status(enum kv_rc rc)
{
	switch (rc) {
	case KV_OK:     return 0;
	case KV_NOENT:  return std_status(NVME_SC_KV_KEY_NOT_EXIST);
	case KV_EXISTS: return std_status(NVME_SC_KV_KEY_EXISTS);
	case KV_NOSPC:  return std_status(NVME_SC_KV_CAPACITY_EXCEEDED);
	case KV_BADOFF:
	case KV_TOOBIG: return std_status(NVME_SC_KV_INVALID_VALUE_SIZE);
	case KV_NOMEM:
	case KV_EIO:    break;
	}
	return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_KV_UNRECOVERED, false);
}

/* Key from CDW2-3 and CDW14-15; min_len 0 lets List start from the first key. */
static uint16_t get_key(const struct nvme_sqe *cmd, uint8_t *key, uint8_t *klen, unsigned min_len)
{
	unsigned len = cmd->cdw11 & 0xffu;
	if (len < min_len || len > NVME_KV_MAX_KEY)
		return std_status(NVME_SC_KV_INVALID_KEY_SIZE);
	uint8_t k[16];
	memcpy(k, &cmd->cdw2, 4);
	memcpy(k + 4, &cmd->cdw3, 4);
	memcpy(k + 8, &cmd->cdw14, 4);
	memcpy(k + 12, &cmd->cdw15, 4);
	memcpy(key, k, len);
	*klen = (uint8_t)len;
	return 0;
}

static uint16_t std_store(struct emu_kv *kv, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			  const uint8_t *key, uint8_t klen, bool *changed)
{
	uint8_t opt = (uint8_t)(cmd->cdw11 >> 8);
	if ((opt & NVME_KV_STORE_MUST_EXIST) && (opt & NVME_KV_STORE_MUST_NOT_EXIST))
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	uint32_t len = cmd->cdw10;
	if (len > NVME_KVV_MAX_VALUE)
		return std_status(NVME_SC_KV_INVALID_VALUE_SIZE);
	uint8_t *val = NULL;
	if (len) {
		struct emu_xfer x;
		uint16_t st = emu_xfer_map(io->ctrl, cmd, len, &x);
		if (st)
			return st;
		val = kv_store_value_alloc(kv->st, (uint32_t)len);
		if (!val)
			return rc_status(KV_NOMEM);
		emu_xfer_from_host(&x, val, len);
	}
	unsigned flags = 0;
	if (opt & NVME_KV_STORE_MUST_EXIST)
		flags |= KV_PUT_MUST_EXIST;
	if (opt & NVME_KV_STORE_MUST_NOT_EXIST)
		flags |= KV_PUT_MUST_NOT_EXIST;
	enum kv_rc rc = kv_store_put(kv->st, STD_KS, key, klen, val, len, 0, flags, false);
	*changed = rc == KV_OK;
	if (rc == KV_OK && io->stats) {
		emu_kv_count(&io->stats->write_cmds, 1);
		emu_kv_count(&io->stats->bytes_written, len);
	}
	return rc_status(rc);
}

static uint16_t std_retrieve(struct emu_kv *kv, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			     const uint8_t *key, uint8_t klen)
{
	/* no value is larger than 2 MiB, so a larger buffer is only partly used */
	uint32_t buflen = cmd->cdw10 < NVME_KVV_MAX_VALUE ? cmd->cdw10 : NVME_KVV_MAX_VALUE;
	/* not zero-initialised: that would clear all its segments (8 KiB) on every retrieve */
	struct emu_xfer x;
	x.nseg = 0;
	x.len = 0;
	if (buflen) {
		uint16_t st = emu_xfer_map(io->ctrl, cmd, buflen, &x);
		if (st)
			return st;
	}
	uint32_t size = 0, copied = 0;
	enum kv_rc rc = kv_store_get(kv->st, STD_KS, key, klen, 0, &x, buflen, &size, &copied);
	if (rc == KV_OK) {
		io->dw0 = size;
		if (io->stats) {
			emu_kv_count(&io->stats->read_cmds, 1);
			emu_kv_count(&io->stats->bytes_read, copied);
		}
	}
	return rc_status(rc);
}

/* Byte order, then shorter first: the order List walks keys in. */
static int key_cmp(const uint8_t *a, uint8_t alen, const uint8_t *b, uint8_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (int)alen - (int)blen;
}

struct start_key {
	const uint8_t *key;
	uint8_t klen;
};

static bool at_or_after(const uint8_t *key, uint8_t klen, const void *arg)
{
	const struct start_key *s = arg;
	return key_cmp(key, klen, s->key, s->klen) >= 0;
}

static int cmp_packed(const void *a, const void *b)
{
	const uint8_t *ka = *(const uint8_t *const *)a, *kb = *(const uint8_t *const *)b;
	return key_cmp(ka + 1, ka[0], kb + 1, kb[0]);
}

/*
 * List: the keys at or after the given one (length 0: from the first key) in byte order,
 * as a u32 count then {u16 length, key} entries each padded to 4 bytes, as many as fit in
 * CDW10 bytes. DW0 = the number of keys returned. The index is a hash table, so each List
 * sorts the matching keys: O(n log n), fine for a command meant for inspection.
 */
static uint16_t std_list(struct emu_kv *kv, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			 const uint8_t *key, uint8_t klen)
{
	uint32_t buflen = cmd->cdw10 < EMU_MDTS_BYTES ? cmd->cdw10 : EMU_MDTS_BYTES;
	if (buflen < 4)
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD, true);
	struct emu_xfer x;
	uint16_t st = emu_xfer_map(io->ctrl, cmd, buflen, &x);
	if (st)
		return st;
	struct start_key sk = { key, klen };
	uint8_t *keys;
	size_t len, count;
	if (kv_store_keys(kv->st, STD_KS, at_or_after, &sk, &keys, &len, &count) != 0)
		return rc_status(KV_NOMEM);
	const uint8_t **order = malloc((count ? count : 1) * sizeof(*order));
	uint8_t *out = calloc(1, buflen);
	if (!order || !out) {
		free(order);
		free(out);
		free(keys);
		return rc_status(KV_NOMEM);
	}
	size_t n = 0;
	for (size_t pos = 0; pos < len; pos += 1 + (size_t)keys[pos])
		order[n++] = keys + pos;
	qsort(order, n, sizeof(*order), cmp_packed);
	uint32_t used = 4, returned = 0;
	for (size_t i = 0; i < n; i++) {
		uint16_t l = order[i][0];
		uint32_t entry = (2u + l + 3u) & ~3u;
		if (used + entry > buflen)
			break;
		memcpy(out + used, &l, 2);
		memcpy(out + used + 2, order[i] + 1, l);
		used += entry;
		returned++;
	}
	memcpy(out, &returned, 4);
	emu_xfer_to_host(&x, out, buflen);
	free(order);
	free(out);
	free(keys);
	io->dw0 = returned;
	return 0;
}

uint16_t emu_kv_std_execute(struct emu_kv *kv, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			    bool *changed)
{
	uint8_t key[NVME_KV_MAX_KEY], klen = 0;
	uint16_t st;
	switch (cmd->opc) {
	case NVME_KV_FLUSH:
		return kv_store_flush(kv->st) ? emu_ns_status(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT, false)
					      : 0;
	case NVME_KV_LIST:
		st = get_key(cmd, key, &klen, 0);
		return st ? st : std_list(kv, cmd, io, key, klen);
	case NVME_KV_STORE:
	case NVME_KV_RETRIEVE:
	case NVME_KV_DELETE:
	case NVME_KV_EXIST:
		st = get_key(cmd, key, &klen, 1);
		if (st)
			return st;
		break;
	default:
		/* the NVM commands (Compare, Write Zeroes, DSM, Verify...) are not in this set */
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE, true);
	}
	switch (cmd->opc) {
	case NVME_KV_STORE:
		return std_store(kv, cmd, io, key, klen, changed);
	case NVME_KV_RETRIEVE:
		return std_retrieve(kv, cmd, io, key, klen);
	case NVME_KV_DELETE: {
		enum kv_rc rc = kv_store_del(kv->st, STD_KS, key, klen, false);
		*changed = rc == KV_OK;
		return rc_status(rc);
	}
	default: /* NVME_KV_EXIST */
		return kv_store_exist(kv->st, STD_KS, key, klen) ? 0
			: std_status(NVME_SC_KV_KEY_NOT_EXIST);
	}
}
