/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Samsung KV SSD vendor protocol, as the uNVMe 2.0 SDK sends it (field layout in
 * include/unvme/spec/kv.h). NSID is a keyspace id here, not a namespace: the controller
 * routes these opcodes to its first KV namespace whatever the NSID (emu_io.c).
 *
 * Errors complete with SCT 1 and the SDK's kv_result code as SC, so the SDK passes the code
 * through unchanged; host memory problems (bad PRPs) keep their generic status. Checks run
 * in the order key size, keyspace, option, value size, offset, so one command gets one
 * well-defined answer.
 */
#include <stdlib.h>
#include <string.h>

#include "hw/emu/ns/kv_ns.h"
#include "hw/emu/ns/ns_internal.h"

static uint16_t kvv_status(uint8_t sc)
{
	/* end of iteration is an outcome, not a failure worth retrying either way; no DNR */
	return emu_ns_status(NVME_SCT_CMD, sc, sc != NVME_KVV_SC_ITER_EOF);
}

static uint16_t rc_status(enum kv_rc rc)
{
	switch (rc) {
	case KV_OK:      return 0;
	case KV_NOENT:   return kvv_status(NVME_KVV_SC_KEY_NOT_EXIST);
	case KV_EXISTS:  return kvv_status(NVME_KVV_SC_IDEMPOTENT_STORE_FAIL);
	case KV_NOSPC:   return kvv_status(NVME_KVV_SC_CAPACITY_EXCEEDED);
	case KV_BADOFF:  return kvv_status(NVME_KVV_SC_INVALID_VALUE_OFFSET);
	case KV_TOOBIG:  return kvv_status(NVME_KVV_SC_MAX_VALUE_SIZE);
	case KV_NOMEM:
	case KV_EIO:     break;
	}
	return emu_ns_status(NVME_SCT_CMD, NVME_KVV_SC_UNRECOVERED, false);
}

static uint8_t cmd_option(const struct nvme_sqe *cmd)
{
	return (uint8_t)(cmd->cdw11 >> 8);
}

/* Fetches the key: inline in CDW12-15 up to 16 bytes, else through the PRP pair there. */
static uint16_t get_key(struct emu_io_ctx *io, const struct nvme_sqe *cmd, uint8_t *key,
			uint8_t *klen)
{
	unsigned len = (cmd->cdw11 & 0xffu) + 1;
	if (len < NVME_KVV_MIN_KEY || len > NVME_KVV_MAX_KEY)
		return kvv_status(NVME_KVV_SC_INVALID_KEY_SIZE);
	*klen = (uint8_t)len;
	if (len <= NVME_KVV_INLINE_KEY) {
		memcpy(key, &cmd->cdw12, len);
		return 0;
	}
	/* the key's PRP pair follows every PRP rule of a data pointer */
	struct nvme_sqe kcmd = { 0 };
	kcmd.prp1 = cmd->cdw12 | (uint64_t)cmd->cdw13 << 32;
	kcmd.prp2 = cmd->cdw14 | (uint64_t)cmd->cdw15 << 32;
	struct emu_xfer x;
	uint16_t st = emu_xfer_map(io->ctrl, &kcmd, len, &x);
	if (st)
		return st;
	emu_xfer_from_host(&x, key, len);
	return 0;
}

static uint16_t get_keyspace(const struct nvme_sqe *cmd, uint8_t *ks)
{
	if (cmd->nsid >= NVME_KVV_NR_KEYSPACES)
		return kvv_status(NVME_KVV_SC_INVALID_KEYSPACE);
	*ks = (uint8_t)cmd->nsid;
	return 0;
}

static uint16_t check_offset(uint64_t off)
{
	if (off % NVME_KVV_OFFSET_ALIGN)
		return kvv_status(NVME_KVV_SC_MISALIGNED_VALUE_OFFSET);
	if (off > NVME_KVV_MAX_VALUE)
		return kvv_status(NVME_KVV_SC_INVALID_VALUE_OFFSET);
	return 0;
}

static uint16_t kvv_store(struct emu_kv *kv, const struct nvme_sqe *cmd, struct emu_io_ctx *io,
			  const uint8_t *key, uint8_t klen, uint8_t ks, bool *changed)
{
	uint8_t opt = cmd_option(cmd);
	/* KV_STORE_COMPRESSION (1) is a hint this device ignores; IDEMPOTENT (2) is honoured */
	if (opt & ~(1u | NVME_KVV_STORE_IDEMPOTENT))
		return kvv_status(NVME_KVV_SC_INVALID_OPTION);
	uint64_t dwords = cmd->cdw10;
	unsigned pad = (cmd->cdw11 >> 16) & 3u;
	if (dwords == 0 && pad)
		return kvv_status(NVME_KVV_SC_INVALID_VALUE_SIZE);
	uint64_t len = dwords * 4 - pad;
	if (len > NVME_KVV_MAX_VALUE)
		return kvv_status(NVME_KVV_SC_MAX_VALUE_SIZE);
	uint16_t st = check_offset(cmd->mptr);
	if (st)
		return st;
	if (cmd->mptr + len > NVME_KVV_MAX_VALUE)
		return kvv_status(NVME_KVV_SC_MAX_VALUE_SIZE);

	uint8_t *val = NULL;
	if (len) {
		struct emu_xfer x;
		st = emu_xfer_map(io->ctrl, cmd, (uint32_t)len, &x);
		if (st)
			return st;
		val = kv_store_value_alloc(kv->st, (uint32_t)len);
		if (!val)
			return rc_status(KV_NOMEM);
		emu_xfer_from_host(&x, val, (uint32_t)len);
	}
	unsigned flags = (opt & NVME_KVV_STORE_IDEMPOTENT) ? KV_PUT_MUST_NOT_EXIST : 0;
	enum kv_rc rc = kv_store_put(kv->st, ks, key, klen, val, (uint32_t)len,
				     (uint32_t)cmd->mptr, flags, false);
	*changed = rc == KV_OK;
	if (rc == KV_OK && io->stats) {
		emu_kv_count(&io->stats->write_cmds, 1);
		emu_kv_count(&io->stats->bytes_written, len);
	}
	return rc_status(rc);
}

static uint16_t kvv_retrieve(struct emu_kv *kv, const struct nvme_sqe *cmd,
			     struct emu_io_ctx *io, const uint8_t *key, uint8_t klen, uint8_t ks)
{
	/* KV_RETRIEVE_DECOMPRESSION (1): nothing is compressed, so nothing to undo */
	if (cmd_option(cmd) & ~1u)
		return kvv_status(NVME_KVV_SC_INVALID_OPTION);
	if ((cmd->cdw11 >> 16) & 3u)  /* the buffer is counted in whole dwords */
		return kvv_status(NVME_KVV_SC_MISALIGNED_VALUE_SIZE);
	uint64_t buflen = (uint64_t)cmd->cdw10 * 4;
	if (buflen > NVME_KVV_MAX_VALUE)
		return kvv_status(NVME_KVV_SC_INVALID_VALUE_SIZE);
	uint16_t st = check_offset(cmd->mptr);
	if (st)
		return st;
	/* not zero-initialised: that would clear all its segments (8 KiB) on every retrieve */
	struct emu_xfer x;
	x.nseg = 0;
	x.len = 0;
	if (buflen) {
		st = emu_xfer_map(io->ctrl, cmd, (uint32_t)buflen, &x);
		if (st)
			return st;
	}
	uint32_t size = 0, copied = 0;
	enum kv_rc rc = kv_store_get(kv->st, ks, key, klen, (uint32_t)cmd->mptr, &x,
				     (uint32_t)buflen, &size, &copied);
	if (rc == KV_OK || rc == KV_BADOFF)
		io->dw0 = size;
	if (rc == KV_OK && io->stats) {
		emu_kv_count(&io->stats->read_cmds, 1);
		emu_kv_count(&io->stats->bytes_read, copied);
	}
	return rc_status(rc);
}

/* Iterate request (B1h): open with option 05h / 09h / 11h, close with option 02h. */
static uint16_t kvv_iter_request(struct emu_kv *kv, const struct nvme_sqe *cmd,
				 struct emu_io_ctx *io)
{
	uint8_t ks;
	uint16_t st = get_keyspace(cmd, &ks);
	if (st)
		return st;
	uint8_t opt = cmd_option(cmd);
	if (opt == NVME_KVV_ITER_CLOSE) {
		uint8_t sc = kv_iter_close(&kv->its, (uint8_t)(cmd->cdw11 & 0xffu));
		return sc ? kvv_status(sc) : 0;
	}
	uint8_t type;
	if (opt == NVME_KVV_ITER_OPEN_KEY)
		type = KV_ITER_TYPE_KEY;
	else if (opt == NVME_KVV_ITER_OPEN_KEY_DELETE)
		type = KV_ITER_TYPE_KEY_DELETE;
	else if (opt == NVME_KVV_ITER_OPEN_KEY_VALUE)
		type = KV_ITER_TYPE_KEY_VALUE;
	else
		return kvv_status(NVME_KVV_SC_INVALID_OPTION);
	/* CDW12/13 carry the prefix and bitmask big-endian */
	uint32_t prefix = __builtin_bswap32(cmd->cdw12);
	uint32_t mask = __builtin_bswap32(cmd->cdw13);
	uint32_t low = ~mask;
	if (low & (low + 1u))  /* not contiguous high bits */
		return kvv_status(NVME_KVV_SC_INVALID_OPTION);
	uint8_t handle = 0;
	uint8_t sc = kv_iter_open(&kv->its, kv->st, ks, type, prefix, mask, &handle);
	if (sc)
		return kvv_status(sc);
	io->dw0 = handle;
	return 0;
}

/* Iterate read (B2h): exactly one 32 KiB buffer per read. */
static uint16_t kvv_iter_read(struct emu_kv *kv, const struct nvme_sqe *cmd,
			      struct emu_io_ctx *io, bool *changed)
{
	uint8_t ks;
	uint16_t st = get_keyspace(cmd, &ks);
	if (st)
		return st;
	if ((uint64_t)cmd->cdw10 * 4 != NVME_KVV_ITER_BUF)
		return kvv_status(NVME_KVV_SC_INVALID_VALUE_SIZE);
	struct emu_xfer x;
	st = emu_xfer_map(io->ctrl, cmd, NVME_KVV_ITER_BUF, &x);
	if (st)
		return st;
	uint8_t *buf = malloc(NVME_KVV_ITER_BUF);
	if (!buf)
		return rc_status(KV_NOMEM);
	uint32_t filled = 0, dw0;
	uint8_t handle = (uint8_t)(cmd->cdw11 & 0xffu), sc;
	if (kv_iter_type(&kv->its, handle) == KV_ITER_TYPE_KEY_VALUE) {
		sc = kv_iter_read_pair(&kv->its, kv->st, handle, buf, NVME_KVV_ITER_BUF, &filled,
				       &dw0);
	} else {
		sc = kv_iter_read(&kv->its, kv->st, handle, buf, NVME_KVV_ITER_BUF, &filled,
				  changed);
		dw0 = filled;
	}
	if (filled)
		emu_xfer_to_host(&x, buf, filled);
	free(buf);
	io->dw0 = dw0;
	return sc ? kvv_status(sc) : 0;
}

uint16_t emu_kv_vendor_execute(struct emu_kv *kv, const struct nvme_sqe *cmd,
			       struct emu_io_ctx *io, bool *changed)
{
	switch (cmd->opc) {
	case NVME_KVV_ITER_REQ:
		return kvv_iter_request(kv, cmd, io);
	case NVME_KVV_ITER_READ:
		return kvv_iter_read(kv, cmd, io, changed);
	case NVME_KVV_STORE:
	case NVME_KVV_RETRIEVE:
	case NVME_KVV_DELETE:
	case NVME_KVV_EXIST:
		break;
	default:
		/* append (83h) included: the original device did not implement it either */
		return emu_ns_status(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE, true);
	}
	uint8_t key[NVME_KVV_MAX_KEY + 1], klen, ks;
	uint16_t st = get_key(io, cmd, key, &klen);
	if (!st)
		st = get_keyspace(cmd, &ks);
	if (st)
		return st;
	switch (cmd->opc) {
	case NVME_KVV_STORE:
		return kvv_store(kv, cmd, io, key, klen, ks, changed);
	case NVME_KVV_RETRIEVE:
		return kvv_retrieve(kv, cmd, io, key, klen, ks);
	case NVME_KVV_DELETE:
		/* KV_DELETE_CHECK_IDEMPOTENT (1): a missing key is reported either way */
		if (cmd_option(cmd) & ~1u)
			return kvv_status(NVME_KVV_SC_INVALID_OPTION);
	{
		enum kv_rc rc = kv_store_del(kv->st, ks, key, klen, false);
		*changed = rc == KV_OK;
		return rc_status(rc);
	}
	default: /* NVME_KVV_EXIST */
		if (cmd_option(cmd))
			return kvv_status(NVME_KVV_SC_INVALID_OPTION);
		return kv_store_exist(kv->st, ks, key, klen) ? 0
			: kvv_status(NVME_KVV_SC_KEY_NOT_EXIST);
	}
}
