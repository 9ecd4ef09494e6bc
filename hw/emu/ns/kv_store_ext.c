/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A KV store whose engine the device's creator provides (ns=kvext: a host key-value engine on
 * another device, see emu_device.h). The KV command sets (kv_std.c, kv_vendor.c) and the
 * iterators run unchanged on top: kv_store.c hands every call over to the engine, and this file
 * converts between the engine's interface (iovecs) and the namespace's (host transfers).
 */
#include <errno.h>
#include <stdlib.h>

#include "hw/emu/emu_device.h"
#include "hw/emu/ns/kv_store_int.h"
#include "hw/emu/ns/ns_internal.h"

/* The two interfaces number their results the same way. */
_Static_assert(EMU_KV_OK == (int)KV_OK && EMU_KV_NOENT == (int)KV_NOENT &&
		       EMU_KV_EXISTS == (int)KV_EXISTS && EMU_KV_NOSPC == (int)KV_NOSPC &&
		       EMU_KV_BADOFF == (int)KV_BADOFF && EMU_KV_TOOBIG == (int)KV_TOOBIG &&
		       EMU_KV_NOMEM == (int)KV_NOMEM && EMU_KV_EIO == (int)KV_EIO,
	       "emu_kv_rc and kv_rc agree");
_Static_assert(EMU_KV_MUST_EXIST == KV_PUT_MUST_EXIST && EMU_KV_MUST_NOT_EXIST == KV_PUT_MUST_NOT_EXIST,
	       "put flags agree");

int kv_store_open_ext(uint64_t capacity, const struct emu_kv_media_ops *ops, void *ctx,
		      struct kv_store **out, char *err, size_t errlen)
{
	*out = NULL;
	struct kv_store *s = calloc(1, sizeof(*s));
	if (!s || kv_index_init(&s->ix) != 0) {
		free(s);
		ops->close(ctx);
		emu_ns_set_error(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->capacity = capacity;
	s->fd = -1;
	s->ext = ops;
	s->ext_ctx = ctx;
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->sync_lock, NULL);
	pthread_cond_init(&s->sync_done, NULL);
	kv_vmem_init(&s->vmem);
	*out = s;
	return 0;
}

enum kv_rc kv_ext_put(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
		      uint8_t *val, uint32_t len, uint32_t off, unsigned flags, bool durable)
{
	int rc = s->ext->put(s->ext_ctx, ks, key, klen, val, len, off, flags, durable);
	kv_store_value_free(s, val, len);
	return (enum kv_rc)rc;
}

enum kv_rc kv_ext_get(struct kv_store *s, uint8_t ks, const uint8_t *key, uint8_t klen,
		      uint32_t off, const struct emu_xfer *x, uint32_t max, uint32_t *size,
		      uint32_t *copied)
{
	struct iovec iov[EMU_XFER_MAX_SEGS];
	unsigned n = emu_xfer_iov(x, max, iov);
	uint32_t room = 0;
	for (unsigned i = 0; i < n; i++)
		room += (uint32_t)iov[i].iov_len;
	*copied = 0;
	return (enum kv_rc)s->ext->get(s->ext_ctx, ks, key, klen, off, iov, n, room, size, copied);
}

void kv_ext_stats(struct kv_store *s, struct kv_store_stats *st)
{
	struct emu_kv_usage u = { 0 };
	s->ext->usage(s->ext_ctx, &u);
	st->capacity = u.capacity ? u.capacity : s->capacity;
	st->used = u.used;
	st->nr_keys = u.nr_keys;
	st->nr_keys_ks[0] = u.nr_keys_ks[0];
	st->nr_keys_ks[1] = u.nr_keys_ks[1];
	st->host_bytes = u.host_bytes;
	st->media_bytes = u.media_bytes;
	st->compactions = u.compactions;
	st->file_size = 0;
}
