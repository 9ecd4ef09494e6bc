/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One command on its way from an API call to its completion: the prepared SQE, the SDK-owned
 * DMA buffers it points at, and what the completion must do with the caller's kv_pair.
 */
#ifndef KVSDK_REQ_H
#define KVSDK_REQ_H

#include <limits.h>
#include <stdatomic.h>

#include "kv_internal.h"

enum kv_op {
	KV_OP_STORE,
	KV_OP_RETRIEVE,
	KV_OP_DELETE,
	KV_OP_EXIST,
	KV_OP_ITER_READ,
	KV_OP_RAW,      /* the caller built the SQE (iterate open and close) */
};

struct kv_req {
	struct nvme_sqe sqe;
	struct kv_state *s;
	struct kv_dev *dev;
	struct kv_queue *q;
	enum kv_op op;
	bool lba;           /* a block command on an NVM namespace (ssd_type "lba") */
	bool async;         /* call kv->param.async_cb when done, then free the request */
	kv_pair *kv;        /* the caller's pair (for iterate reads, &it->kv) */
	void *cb_arg;       /* what async_cb receives: the kv_pair or the kv_iterate */
	void *data;         /* DMA buffer passed as the command's data, or NULL */
	size_t data_len;
	bool data_is_callers; /* data is the caller's own value buffer (DMA memory): no copies */
	void *keybuf;       /* DMA copy of a key longer than 16 bytes, or NULL */
	uint8_t iterator;   /* iterate read: the handle, kept here (the caller's kv_iterate
			     * may be reused or freed by another callback meanwhile) */
	uint64_t ticket;    /* cache ticket taken before submission */
	int result;         /* kv_result */
	int status;         /* NVMe status, (SCT << 8) | SC; 0 for host-side failures */
	uint32_t dw0;
	int *status_out;    /* sync requests: receives status at completion (raw commands) */
	atomic_bool done;   /* set (release) when a waiting caller may read result/status */
	struct kv_req_slot *slot; /* the async queue's slot it lives in, or NULL (malloc'd) */
};

/* A request slot of an async queue (struct kv_queue); cache-line aligned, as neighbouring
 * slots are in use on different cores. */
struct kv_req_slot {
	_Alignas(64) struct kv_req req;
	_Atomic bool busy;  /* set by a submitter under the queue's lock, cleared (release)
			     * when the request is done with */
};

/* How async_cb is called, as the original did: the kv_pair (or kv_iterate), result =
 * completion dword 0 (the stored value size of a retrieve, the bytes filled by an iterate
 * read), status = the command's status code, which is its kv_result. The public field is
 * declared without a prototype, as in the original. */
typedef void (*kv_async_cb_fn)(void *arg, unsigned int result, unsigned int status);

/* kv_submit.c: calls cb as above, with the full NVMe status ((SCT << 8) | SC, 0 for host-side
 * failures) readable through kv_async_nvme_status() during the call. */
void kv_call_back(kv_async_cb_fn cb, void *arg, uint32_t result, int kvr, int nvme_status);

/* kv_cmd.c: fills req->sqe for the request's operation (the wire protocol). Returns
 * KV_SUCCESS or a kv_result for a request the device could not take. */
int kv_cmd_build(struct kv_req *req);
/* Places a key in CDW12..15 (at most 16 bytes) or, longer, in keybuf (DMA memory that does
 * not cross a page) and points a PRP pair in CDW12..15 at it. */
void kv_cmd_set_key(struct nvme_sqe *sqe, const void *key, uint16_t klen, void *keybuf);
void kv_cmd_iterate_open(struct nvme_sqe *sqe, uint8_t ks, uint32_t bitmask, uint32_t prefix,
			 uint8_t type);
void kv_cmd_iterate_close(struct nvme_sqe *sqe, uint8_t handle);

/* kv_submit.c: validated request with buffers -> device -> completion. */
/* Runs the request to completion on a queue of its device and returns its kv_result;
 * *dw0 (may be NULL) receives completion DW0. Takes ownership of req (malloc'd, buffers from
 * kv_dma_get) and frees it. */
int kv_submit_sync(struct kv_req *req, uint32_t *dw0);
/* Hands the request to an async queue; on KV_SUCCESS the callback runs exactly once. The
 * contents of *req, buffers included, move into the queue (or are released on failure); the
 * struct itself stays the caller's, so it may live on the stack. */
int kv_submit_async(struct kv_req *req);
/* The same on queue q of the request's device, as the driver-level API (kvnvme.h) names it;
 * NULL: the queue kv_pick_queue gives the calling thread. */
int kv_submit_sync_on(struct kv_queue *q, struct kv_req *req, uint32_t *dw0);
int kv_submit_async_on(struct kv_queue *q, struct kv_req *req);
/* Driver completion callback (struct unvme_cmd_cb shape). */
void kv_req_on_cpl(void *arg, const struct nvme_cqe *cpl);
/* Completes a request that never reached the device (host-side failure). */
void kv_req_fail(struct kv_req *req, int result);
/* Releases the SDK buffers of a request. */
void kv_req_release(struct kv_req *req);

/* kv_io.c: store, retrieve, delete or exist of kv through the SDK (checks, cache, SDK-owned
 * buffers), on the queue of core qid as the driver-level API (kvnvme.h) names it, or
 * KV_QID_ANY for the queue the SDK picks (kv_apis.h). fn names the call in log lines (NULL:
 * the kv_* name). */
#define KV_QID_ANY INT_MIN
int kv_io(uint64_t handle, kv_pair *kv, enum kv_op op, bool async, int qid, const char *fn);
/* kv_iterate.c: iterate read, likewise. */
int kv_iterate_read_on(uint64_t handle, kv_iterate *it, bool async, int qid, const char *fn);

/* kv_iterate.c: used by kv_format_device too (device admin lock held by the caller). */
int kv_iterator_close(struct kv_state *s, struct kv_dev *d, uint8_t iterator);
int kv_iterator_table(struct kv_dev *d, kv_iterate_handle_info *info, int n);

#endif
