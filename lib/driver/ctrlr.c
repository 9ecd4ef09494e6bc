/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Controller attach, initialisation, reset and detach (NVMe Base 2.0 section 3.5.1).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/common/env.h"
#include "lib/common/opts.h"
#include "ctrlr.h"
#include "errmsg.h"
#include "transport.h"

#define DEFAULT_IO_QUEUES 64
#define DEFAULT_ADMIN_DEPTH 32
#define DEFAULT_ADMIN_TIMEOUT_MS 10000
#define DEFAULT_IO_DEPTH 256
#define DEFAULT_IO_TIMEOUT_MS 30000
#define SHUTDOWN_TIMEOUT_MS 5000

static int ctrlr_attach(struct unvme_ctrlr *c);
static void ctrlr_detach(struct unvme_ctrlr *c);

uint32_t unvme_env_timeout_ms(const char *name, uint32_t def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	unsigned long long ms = strtoull(v, &end, 10);
	if (errno || *end || ms == 0 || ms > 86400000ull || !isdigit((unsigned char)v[0])) {
		if (unvme_log_on())
			fprintf(stderr, "unvme: %s=%.32s is not a timeout in milliseconds (1..86400000); "
				"using %u\n", name, v, def);
		return def;
	}
	return (uint32_t)ms;
}

/* The first version's fields (opts.h: a size of 0 means these). */
#define CTRLR_OPTS_V1 OPTS_SIZE_THROUGH(struct unvme_ctrlr_opts, io_timeout_ms)
#define QPAIR_OPTS_V1 OPTS_SIZE_THROUGH(struct unvme_qpair_opts, split)

UNVME_API void unvme_ctrlr_opts_init(struct unvme_ctrlr_opts *opts, size_t size)
{
	struct unvme_ctrlr_opts d = {
		.size = size,
		.num_io_queues = DEFAULT_IO_QUEUES,
		.admin_queue_depth = DEFAULT_ADMIN_DEPTH,
		.admin_timeout_ms = unvme_env_timeout_ms("UNVME_ADMIN_TIMEOUT_MS", DEFAULT_ADMIN_TIMEOUT_MS),
		.io_queue_depth = DEFAULT_IO_DEPTH,
		.io_timeout_ms = unvme_env_timeout_ms("UNVME_IO_TIMEOUT_MS", DEFAULT_IO_TIMEOUT_MS),
	};
	if (opts)
		memcpy(opts, &d, size < sizeof(d) ? size : sizeof(d));
}

/* The header's macro of this name calls unvme_ctrlr_opts_init with the caller's size. */
UNVME_API void (unvme_ctrlr_opts_default)(struct unvme_ctrlr_opts *opts)
{
	unvme_ctrlr_opts_init(opts, CTRLR_OPTS_V1);
}

uint64_t ctrlr_ready_limit_ms(const struct unvme_ctrlr *c)
{
	return (uint64_t)(NVME_CAP_TO(c->cap) ? NVME_CAP_TO(c->cap) : 1) * 500u;
}

uint64_t ctrlr_enable_limit_ms(const struct unvme_ctrlr *c)
{
	return c->ops->enable_limit_ms ? c->ops->enable_limit_ms((struct unvme_ctrlr *)c)
				       : ctrlr_ready_limit_ms(c);
}

/* Waits for CSTS.RDY to equal want within CAP.TO (500 ms units), or to become 1 within the
 * transport's limit. */
static int wait_ready(struct unvme_ctrlr *c, uint32_t want)
{
	bool own = want && c->ops->enable_limit_ms;
	uint64_t limit_ms = want ? ctrlr_enable_limit_ms(c) : ctrlr_ready_limit_ms(c);
	uint64_t deadline = mono_ms_coarse() + limit_ms;
	unsigned delay = 1;
	for (;;) {
		uint32_t csts = reg_read32(c, NVME_REG_CSTS);
		if (csts == 0xffffffffu)
			return unvme_fail(-ENODEV, "%s: controller does not answer (CSTS reads all ones)",
					  c->devid);
		if (want && (csts & NVME_CSTS_CFS))
			return unvme_fail(-EIO, "%s: controller reported a fatal status (CSTS.CFS) while "
					  "enabling", c->devid);
		if ((csts & NVME_CSTS_RDY) == want)
			return 0;
		if (mono_ms_coarse() > deadline)
			return unvme_fail(-ETIMEDOUT, "%s: CSTS.RDY did not become %u within %s "
					  "(%llu ms)", c->devid, want, own ? "the transport's limit" : "CAP.TO",
					  (unsigned long long)limit_ms);
		sleep_us(delay);
		if (delay < 10000)
			delay *= 2;
	}
}

/* The controller whose qp_lock this thread holds (one at a time). */
static __thread const struct unvme_ctrlr *qps_locked_by_me;

void ctrlr_lock_qps(struct unvme_ctrlr *c)
{
	pthread_mutex_lock(&c->qp_lock);
	qps_locked_by_me = c;
}

bool ctrlr_trylock_qps(struct unvme_ctrlr *c)
{
	if (pthread_mutex_trylock(&c->qp_lock) != 0)
		return false;
	qps_locked_by_me = c;
	return true;
}

void ctrlr_unlock_qps(struct unvme_ctrlr *c)
{
	qps_locked_by_me = NULL;
	pthread_mutex_unlock(&c->qp_lock);
}

bool ctrlr_qps_locked_here(const struct unvme_ctrlr *c)
{
	return qps_locked_by_me == c;
}

int ctrlr_disable(struct unvme_ctrlr *c)
{
	uint32_t cc = reg_read32(c, NVME_REG_CC);
	if (cc & NVME_CC_EN)
		reg_write32(c, NVME_REG_CC, cc & ~NVME_CC_EN);
	int rc = wait_ready(c, 0);
	/* every queue on the controller is gone, other processes' too: they create theirs again */
	ctrlr_life(c, CTRLR_LIFE_QUEUES_LOST, rc);
	return rc;
}

void ctrlr_enable_start(struct unvme_ctrlr *c)
{
	struct unvme_qpair *aq = c->admin;
	qpair_reset_rings(aq);
	reg_write32(c, NVME_REG_AQA, NVME_AQA_MAKE(aq->depth, aq->depth));
	reg_write64(c, NVME_REG_ASQ, aq->sq_iova);
	reg_write64(c, NVME_REG_ACQ, aq->cq_iova);
	uint32_t css = (NVME_CAP_CSS(c->cap) & NVME_CAP_CSS_IOCS) ? NVME_CC_CSS_IOCS : NVME_CC_CSS_NVM;
	uint32_t mps = 0;
	while ((4096u << mps) < c->page_size)
		mps++;
	uint32_t cc = NVME_CC_EN | NVME_CC_CSS_SET(css) | NVME_CC_MPS_SET(mps) | NVME_CC_AMS_SET(0) |
		      NVME_CC_IOSQES_SET(NVME_SQES_LOG2) | NVME_CC_IOCQES_SET(NVME_CQES_LOG2);
	reg_write32(c, NVME_REG_CC, cc);
}

int ctrlr_enable(struct unvme_ctrlr *c)
{
	ctrlr_enable_start(c);
	return wait_ready(c, 1);
}

bool ctrlr_fatal_now(struct unvme_ctrlr *c)
{
	/* no registers (the transport marks a controller that went away), or another process
	 * runs the controller: its reset reaches this one as lost queues (lib/driver/mp) */
	if (ctrlr_run_elsewhere(c))
		return c->failed;
	uint32_t csts = reg_read32(c, NVME_REG_CSTS);
	if (csts == 0xffffffffu || (csts & NVME_CSTS_CFS)) {
		c->failed = 1;
		return true;
	}
	return false;
}

int ctrlr_create_hw_queues(struct unvme_ctrlr *c, uint16_t qid, uint32_t depth, uint64_t sq_iova,
			   uint64_t cq_iova)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_CREATE_CQ;
	cmd.prp1 = cq_iova;
	cmd.cdw10 = ((uint32_t)(depth - 1) << 16) | qid;
	cmd.cdw11 = NVME_CREATE_CQ_PC; /* polled: no interrupts */
	int rc = unvme_admin(c, &cmd, NULL, 0, NULL);
	if (rc)
		return rc > 0 ? unvme_fail(rc, "Create I/O CQ %u (depth %u): %s", qid, depth,
					   unvme_status_str(rc, NVME_CSI_NVM))
			      : rc;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_CREATE_SQ;
	cmd.prp1 = sq_iova;
	cmd.cdw10 = ((uint32_t)(depth - 1) << 16) | qid;
	cmd.cdw11 = ((uint32_t)qid << 16) | NVME_CREATE_SQ_PC;
	rc = unvme_admin(c, &cmd, NULL, 0, NULL);
	if (rc) {
		int st = rc;
		memset(&cmd, 0, sizeof(cmd));
		cmd.opc = NVME_ADM_DELETE_CQ;
		cmd.cdw10 = qid;
		unvme_admin(c, &cmd, NULL, 0, NULL);
		return st > 0 ? unvme_fail(st, "Create I/O SQ %u (depth %u): %s", qid, depth,
					   unvme_status_str(st, NVME_CSI_NVM))
			      : st;
	}
	return 0;
}

int ctrlr_delete_hw_queues(struct unvme_ctrlr *c, uint16_t qid)
{
	struct nvme_sqe cmd = {0};
	cmd.opc = NVME_ADM_DELETE_SQ;
	cmd.cdw10 = qid;
	int rc = unvme_admin(c, &cmd, NULL, 0, NULL);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADM_DELETE_CQ;
	cmd.cdw10 = qid;
	int rc2 = unvme_admin(c, &cmd, NULL, 0, NULL);
	return rc ? rc : rc2;
}

int ctrlr_create_io_queues(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	switch (ctrlr_kind(c)) {
	case UNVME_TRANSPORT_FABRICS:
		return c->ops->qp_connect(qp); /* the queue is a connection */
	case UNVME_TRANSPORT_MESSAGE:
		return c->ops->msg->qp_create(qp);
	case UNVME_TRANSPORT_CLIENT:
		return c->ops->queue_create(qp); /* the process that owns the controller does it */
	case UNVME_TRANSPORT_REGISTERS:
		break;
	}
	return ctrlr_create_hw_queues(c, qp->qid, qp->depth, qp->sq_iova, qp->cq_iova);
}

int ctrlr_delete_io_queues(struct unvme_ctrlr *c, struct unvme_qpair *qp)
{
	switch (ctrlr_kind(c)) {
	case UNVME_TRANSPORT_FABRICS:
		c->ops->qp_disconnect(qp);
		return 0;
	case UNVME_TRANSPORT_MESSAGE:
		if (qp->mctx)
			c->ops->msg->qp_destroy(qp);
		qp->mctx = NULL;
		return 0;
	case UNVME_TRANSPORT_CLIENT:
		return c->ops->queue_delete(qp);
	case UNVME_TRANSPORT_REGISTERS:
		break;
	}
	return ctrlr_delete_hw_queues(c, qp->qid);
}

uint32_t ctrlr_max_xfer_for(uint32_t page_size, uint8_t mdts)
{
	/* One PRP list page per command bounds a transfer at page_size / 8 pages. */
	uint64_t list_bytes = (uint64_t)page_size * (page_size / sizeof(uint64_t));
	/* MDTS: 2^mdts units of the memory page size, 0 for no limit; one beyond 64 bits is
	 * beyond any transfer, so it counts as none (nvme_pow2_pages never shifts past 63). */
	uint64_t mdts_bytes = mdts ? nvme_pow2_pages(page_size, mdts) : UINT64_MAX;
	uint64_t m = mdts_bytes < list_bytes ? mdts_bytes : list_bytes;
	return m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

/* Identify, number of queues, namespaces: everything after CSTS.RDY. */
int ctrlr_configure(struct unvme_ctrlr *c)
{
	/* Into a copy, stored where it changed: a device that came back (hotplug.c) is
	 * configured again while other threads' submissions read max_xfer. */
	struct nvme_id_ctrl *id = malloc(sizeof(*id));
	if (!id)
		return -ENOMEM;
	int rc = unvme_identify(c, NVME_CNS_CTRL, 0, 0, id);
	if (rc) {
		free(id);
		return rc > 0 ? unvme_fail(-EIO, "%s: Identify Controller failed: %s", c->devid,
					   unvme_status_str(rc, 0))
			      : rc;
	}
	if (memcmp(id, &c->id, sizeof(*id)) != 0)
		c->id = *id;
	free(id);
	uint32_t max_xfer = ctrlr_max_xfer_for(c->page_size, c->id.mdts);
	if (c->xfer_limit && c->xfer_limit < max_xfer)
		max_xfer = c->xfer_limit;
	if (max_xfer != c->max_xfer)
		c->max_xfer = max_xfer;
	if (c->id.cntrltype == NVME_CTRL_TYPE_DISCOVERY) {
		/* a discovery controller has an admin queue and log pages, nothing more */
		if (!c->qid_used)
			c->qid_used = calloc(1, 1);
		return c->qid_used ? 0 : -ENOMEM;
	}
	rc = ctrlr_set_num_queues(c);
	return rc ? rc : ns_scan(c);
}

static uint32_t num_queues_wanted(const struct unvme_ctrlr *c)
{
	uint32_t want = c->opts.num_io_queues ? c->opts.num_io_queues : 1;
	/* The process that runs a shared device asks for every queue the controller has: the
	 * other processes' queues come out of its grant (lib/driver/mp/mp.h). */
	if (c->serves_others)
		want = 65535;
	if (want > 65535)
		want = 65535;
	return want;
}

uint32_t ctrlr_num_queues_cdw11(const struct unvme_ctrlr *c)
{
	uint32_t want = num_queues_wanted(c);
	return ((want - 1) << 16) | (want - 1);
}

int ctrlr_set_num_queues(struct unvme_ctrlr *c)
{
	uint32_t dw0 = ctrlr_num_queues_cdw11(c);
	/* The kernel (or nobody, for a file) owns the controller's queues: a message-based
	 * transport's queue pairs are its own rings, as many as asked for. A client's come out
	 * of the grant its server got: it asks the controller nothing. */
	int rc = 0;
	if (c->queue_grant)
		dw0 = ((c->queue_grant - 1) << 16) | (c->queue_grant - 1);
	else if (ctrlr_kind(c) != UNVME_TRANSPORT_MESSAGE)
		rc = unvme_set_features(c, NVME_FEAT_NUM_QUEUES, 0, dw0, false, &dw0);
	if (rc)
		return rc > 0 ? unvme_fail(-EIO, "%s: Set Features (Number of Queues) failed: %s",
					   c->devid, unvme_status_str(rc, 0))
			      : rc;
	return ctrlr_num_queues_granted(c, dw0);
}

int ctrlr_num_queues_granted(struct unvme_ctrlr *c, uint32_t dw0)
{
	uint32_t want = num_queues_wanted(c);
	uint32_t nsq = (dw0 & 0xffff) + 1, ncq = (dw0 >> 16) + 1;
	uint32_t granted = nsq < ncq ? nsq : ncq;
	if (granted > want)
		granted = want;
	if (!c->qid_used) {
		c->max_io_queues = granted;
		c->qid_used = calloc(granted + 1, 1);
		if (!c->qid_used)
			return -ENOMEM;
	} else if (granted < c->max_io_queues) {
		/* After a reset the device may grant fewer; queues above the grant fail. */
		c->max_io_queues = granted;
	}
	return 0;
}

/*
 * One controller per device per process: opening an address that is already open returns the
 * same controller and takes a reference; the last close detaches. A device can be driven by
 * one driver instance only (its queues, its IOMMU, a file-backed emulated device's locked
 * file), so two opens in one process (the SDK and a tool's block commands, say) must share.
 * The lock is recursive: a host target's transport (ftl://, hostkv://) opens its inner device
 * from inside its own attach, and closes it from inside its detach.
 */
static pthread_mutex_t open_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct unvme_ctrlr *open_ctrlrs;

static void ctrlr_free(struct unvme_ctrlr *c)
{
	ns_free_all(c);
	if (c->mapper_registered)
		dma_mapper_unregister(&c->mapper);
	if (c->transport_ctx)
		c->ops->detach(c);
	qpair_free(c->admin);
	unvme_dma_free(c->admin_buf);
	free(c->qid_used);
	pthread_mutex_destroy(&c->admin_lock);
	pthread_mutex_destroy(&c->qp_lock);
	pthread_mutex_destroy(&c->rec_lock);
	ctrlr_events_fini(c);
	if (c->wrap_fd >= 0)
		close(c->wrap_fd); /* the lock of the process that ran it goes with it */
	free(c->devid);
	free(c);
}

UNVME_API int unvme_ctrlr_open(const char *devid, const struct unvme_ctrlr_opts *opts,
			       struct unvme_ctrlr **out)
{
	if (!devid || !out)
		return unvme_fail(-EINVAL, "unvme_ctrlr_open: devid and out are required");
	*out = NULL;
	unvme_errmsg_clear();
	struct unvme_ctrlr *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->wrap_fd = -1;
	pthread_mutex_init(&c->admin_lock, NULL);
	pthread_mutex_init(&c->qp_lock, NULL);
	pthread_mutex_init(&c->rec_lock, NULL);
	ctrlr_events_init(c);
	unvme_ctrlr_opts_init(&c->opts, sizeof(c->opts));
	int orc = opts_take(&c->opts, sizeof(c->opts), opts, CTRLR_OPTS_V1);
	if (orc) {
		ctrlr_free(c);
		return unvme_fail(orc, "unvme_ctrlr_open: %s", opts_size_error(orc, opts->size, sizeof(*opts)));
	}
	c->devid = strdup(devid);
	if (!c->devid) {
		ctrlr_free(c);
		return -ENOMEM;
	}

	int rc = unvme_devid_resolve(devid, c->address, sizeof(c->address));
	if (rc) {
		ctrlr_free(c);
		return rc;
	}
	if (c->opts.admin_queue_depth == 1) {
		/* (checked here too: a client of another process makes no admin queue of its own) */
		ctrlr_free(c);
		return unvme_fail(-EINVAL, "%s: admin queue depth 1: a queue needs at least 2 "
				  "entries (one always stays empty)", devid);
	}
	pthread_mutex_lock(&open_lock);
	for (struct unvme_ctrlr *o = open_ctrlrs; o; o = o->open_next) {
		if (strcmp(o->address, c->address) == 0) {
			o->refs++;
			pthread_mutex_unlock(&open_lock);
			ctrlr_free(c);
			*out = o;
			return 0;
		}
	}
	rc = ctrlr_attach(c);
	if (rc == 0) {
		c->refs = 1;
		c->open_next = open_ctrlrs;
		open_ctrlrs = c;
		*out = c;
	}
	pthread_mutex_unlock(&open_lock);
	return rc;
}

struct unvme_ctrlr *ctrlr_open_find(const char *address)
{
	pthread_mutex_lock(&open_lock);
	struct unvme_ctrlr *o = open_ctrlrs;
	while (o && strcmp(o->address, address) != 0)
		o = o->open_next;
	if (o)
		o->refs++;
	pthread_mutex_unlock(&open_lock);
	return o;
}

/* Everything of an open after the address is known; on failure c is freed. */
static int ctrlr_attach(struct unvme_ctrlr *c)
{
	const char *devid = c->devid;
	int rc;
	const struct unvme_transport *t = unvme_transport_find(c->address, &rc);
	if (!t)
		goto fail;
	ctrlr_set_transport(c, t);
	/* a layer on top (multi-process) may take it: to run it here and follow its lifecycle, or
	 * to make it a client of the process that runs it, on the wrapper's transport */
	rc = unvme_transport_wrap(c, &t);
	if (rc < 0)
		goto fail; /* nobody answers, or its device process could not start */
	ctrlr_set_transport(c, t);
	rc = c->ops->attach(c, c->address);
	if (rc)
		goto fail;
	c->mapper = (struct dma_mapper){.map = c->ops->dma_map, .unmap = c->ops->dma_unmap,
					.ctx = c->transport_ctx,
					.map_shared = c->ops->dma_map_shared};
	rc = dma_mapper_register(&c->mapper);
	if (rc)
		goto fail;
	c->mapper_registered = true;
	if (ctrlr_run_elsewhere(c)) {
		/* No registers to bring up: the transport's attach filled cap, vs and page_size. */
		c->max_xfer = c->page_size; /* until Identify tells MDTS */
		rc = ctrlr_configure(c);
		if (rc)
			goto fail;
		if (!c->vs)
			c->vs = c->id.ver;
		rc = ctrlr_life(c, CTRLR_LIFE_ATTACHED, 0);
		if (rc)
			goto fail;
		return 0;
	}

	c->cap = reg_read64(c, NVME_REG_CAP);
	c->vs = reg_read32(c, NVME_REG_VS);
	if (c->cap == UINT64_MAX) {
		rc = unvme_fail(-ENODEV, "%s: controller does not answer (CAP reads all ones)", devid);
		goto fail;
	}
	c->dstrd = NVME_CAP_DSTRD(c->cap);
	c->page_size = 4096u << NVME_CAP_MPSMIN(c->cap);
	c->max_xfer = c->page_size; /* until Identify tells MDTS */

	uint32_t adepth = c->opts.admin_queue_depth ? c->opts.admin_queue_depth : DEFAULT_ADMIN_DEPTH;
	if (adepth > 4096)
		adepth = 4096; /* AQA holds 12 bits */
	rc = qpair_alloc(c, 0, adepth, 0, false, &c->admin);
	if (rc)
		goto fail;
	rc = ctrlr_disable(c);
	if (rc)
		goto fail;
	rc = ctrlr_enable(c);
	if (rc)
		goto fail;
	rc = ctrlr_configure(c);
	if (rc)
		goto fail;
	/* (a wrapper that serves other processes starts here; one that must and cannot fails it) */
	rc = ctrlr_life(c, CTRLR_LIFE_ATTACHED, 0);
	if (rc)
		goto fail;
	return 0;
fail:
	{
		/* Keep the reason: cleanup may overwrite the thread's message. */
		char why[512];
		snprintf(why, sizeof(why), "%s", unvme_errmsg());
		if (c->transport_ctx && c->admin)
			ctrlr_disable(c);
		ctrlr_free(c);
		return unvme_fail(rc < 0 ? rc : -EIO, "%s", why[0] ? why : "controller attach failed");
	}
}

UNVME_API void unvme_ctrlr_close(struct unvme_ctrlr *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&open_lock);
	if (--c->refs > 0) {
		pthread_mutex_unlock(&open_lock);
		return;
	}
	for (struct unvme_ctrlr **pp = &open_ctrlrs; *pp; pp = &(*pp)->open_next) {
		if (*pp == c) {
			*pp = c->open_next;
			break;
		}
	}
	/* detached under the lock: an open of the same device waits for the device to be free */
	ctrlr_detach(c);
	pthread_mutex_unlock(&open_lock);
}

static void ctrlr_detach(struct unvme_ctrlr *c)
{
	/* the processes it serves first: their queues go before the controller does */
	ctrlr_life(c, CTRLR_LIFE_CLOSING, 0);
	if (c->ops->quiesce)
		c->ops->quiesce(c);
	while (c->qpairs)
		unvme_qpair_destroy(c->qpairs);
	if (ctrlr_run_elsewhere(c)) {
		ctrlr_free(c); /* whoever owns the controller keeps it running */
		return;
	}
	if (!c->failed) {
		/* Normal shutdown (3.6.1): data in the device's caches is made durable. */
		uint32_t cc = reg_read32(c, NVME_REG_CC);
		reg_write32(c, NVME_REG_CC, (cc & ~NVME_CC_SHN_SET(3)) | NVME_CC_SHN_SET(NVME_CC_SHN_NORMAL));
		uint64_t deadline = mono_ms_coarse() + SHUTDOWN_TIMEOUT_MS;
		for (;;) {
			uint32_t csts = reg_read32(c, NVME_REG_CSTS);
			/* a device that went away answers all ones: nothing to wait for */
			if (csts == 0xffffffffu || NVME_CSTS_SHST(csts) == NVME_CSTS_SHST_COMPLETE ||
			    mono_ms_coarse() >= deadline)
				break;
			sleep_us(100);
		}
	}
	ctrlr_disable(c);
	ctrlr_free(c);
}

UNVME_API int unvme_ctrlr_reset(struct unvme_ctrlr *c)
{
	if (!c)
		return unvme_fail(-EINVAL, "unvme_ctrlr_reset: no controller");
	if (c->ops->ctrlr_reset) {
		/* another process runs the controller: it resets it (a device process does; a
		 * primary refuses), this process's queue pairs come back at their next use */
		int rc = c->ops->ctrlr_reset(c);
		if (rc == 0)
			rc = ctrlr_configure(c);
		if (rc == 0) {
			c->failed = 0;
			c->gave_up = false;
		}
		return rc;
	}
	if (ctrlr_kind(c) == UNVME_TRANSPORT_CLIENT)
		return unvme_fail(-EPERM, "%s: %s", c->devid, c->transport_info);
	if (ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE) {
		/* The kernel resets its controller; its queues (our rings' commands) come back
		 * failed or completed through the rings, as for any command in flight. */
		ctrlr_lock_qps(c);
		int rc = c->ops->msg->reset(c);
		if (rc == 0)
			rc = ctrlr_configure(c);
		if (rc == 0) {
			c->failed = 0;
			c->gave_up = false;
		}
		ctrlr_unlock_qps(c);
		return rc;
	}
	ctrlr_lock_qps(c);
	/* no automatic reset inside this one (its admin commands may time out): one under way
	 * ends where it is, this one does it all */
	atomic_store(&c->resetting, true);
	recovery_abandon(c);
	int rc = ctrlr_disable(c);
	/* Disabled, the controller touches no memory: now the commands can be given back. */
	qpair_fail_outstanding(c->admin, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next) {
		qpair_recovery_forget(qp); /* this reset does its fence or rebuild */
		qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
		qpair_reset_rings(qp);
	}
	c->failed = 0;
	c->gave_up = false;
	c->quiesced = false;
	if (rc == 0)
		rc = ctrlr_enable(c);
	if (rc == 0)
		rc = ctrlr_configure(c);
	uint32_t gen = atomic_fetch_add(&c->generation, 1) + 1;
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next) {
		qp->failed = 0;
		qp->generation = gen;
		int qrc = (rc == 0 && qp->qid <= c->max_io_queues) ? ctrlr_create_io_queues(c, qp) : -EIO;
		if (qrc) {
			qp->failed = 1;
			if (rc == 0)
				rc = qrc;
		}
	}
	for (struct unvme_qpair *qp = c->qpairs; qp; qp = qp->next)
		atomic_store(&qp->gone, qp->failed != 0);
	if (rc)
		c->failed = 1;
	atomic_store(&c->resetting, false);
	ctrlr_unlock_qps(c);
	return rc;
}

/* How long a queue's creation waits for a fabric target to release an id (see below). */
#define QID_RELEASE_WAIT_MS 3000u
#define QID_RELEASE_POLL_MS 10u

/* A free I/O queue id (0: none): the lowest, or on a fabric the next after the last taken,
 * so that an id just given back is taken last: the target releases a disconnected queue's
 * id in the background. (qp_lock held.) */
static uint16_t qid_pick(struct unvme_ctrlr *c)
{
	uint32_t n = c->max_io_queues;
	bool fabric = ctrlr_kind(c) == UNVME_TRANSPORT_FABRICS;
	uint32_t start = fabric && n ? c->qid_last % n : 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t q = (start + i) % n + 1;
		if (!c->qid_used[q]) {
			if (fabric)
				c->qid_last = (uint16_t)q;
			return (uint16_t)q;
		}
	}
	return 0;
}

static int qpair_create_once(struct unvme_ctrlr *c, const struct unvme_qpair_opts *opts,
			     struct unvme_qpair **out)
{
	uint32_t mqes = NVME_CAP_MQES(c->cap) + 1;
	uint32_t depth = opts && opts->depth ? opts->depth : c->opts.io_queue_depth;
	if (!depth)
		depth = DEFAULT_IO_DEPTH;
	if ((!opts || !opts->depth) && depth > mqes)
		depth = mqes;
	uint32_t timeout = opts && opts->timeout_ms ? opts->timeout_ms : c->opts.io_timeout_ms;
	if (timeout == UINT32_MAX)
		timeout = 0;

	ctrlr_lock_qps(c);
	struct unvme_qpair *qp = NULL;
	int rc;
	for (uint32_t waited_ms = 0;; waited_ms += QID_RELEASE_POLL_MS) {
		uint16_t qid = qid_pick(c);
		if (!qid) {
			ctrlr_unlock_qps(c);
			return unvme_fail(-EBUSY, "%s: all %u I/O queue pairs granted by the controller are in use",
					  c->devid, c->max_io_queues);
		}
		rc = qpair_alloc(c, qid, depth, timeout, opts && opts->split, &qp);
		if (rc)
			break;
		qp->generation = atomic_load(&c->generation);
		rc = ctrlr_create_io_queues(c, qp);
		if (rc == 0)
			break;
		char why[512];
		snprintf(why, sizeof(why), "%s", unvme_errmsg());
		qpair_free(qp);
		qp = NULL;
		/* A target answers the Connect of an id whose earlier connection it is still
		 * tearing down with Command Sequence Error (Linux nvmet does so until its release
		 * work has run): another id, or the same one a little later, is taken. */
		bool releasing = ctrlr_kind(c) == UNVME_TRANSPORT_FABRICS &&
				 rc == NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR);
		if (!releasing) {
			unvme_fail(rc, "%s", why);
			break;
		}
		if (waited_ms >= QID_RELEASE_WAIT_MS) {
			/* (a Connect's status comes without a message of its own) */
			unvme_fail(rc, "%s: I/O queue %u: Connect answered %s for %u ms (the target was "
				   "still releasing the queue id)", c->devid, qid,
				   unvme_status_str(rc, NVME_CSI_NVM), waited_ms);
			break;
		}
		ctrlr_unlock_qps(c);
		usleep(QID_RELEASE_POLL_MS * 1000);
		ctrlr_lock_qps(c);
	}
	if (rc == 0) {
		c->qid_used[qp->qid] = 1; /* a secondary's queue id is the primary's choice */
		qp->next = c->qpairs;
		c->qpairs = qp;
		*out = qp;
	}
	ctrlr_unlock_qps(c);
	return rc;
}

UNVME_API int unvme_qpair_create(struct unvme_ctrlr *c, const struct unvme_qpair_opts *opts,
				 struct unvme_qpair **out)
{
	if (!c || !out)
		return unvme_fail(-EINVAL, "unvme_qpair_create: controller and out are required");
	/* A fatal status found before or while creating the queue is reset here, as a poll
	 * would, and the queue created once more on the controller that came back. */
	struct unvme_qpair_opts o = {0};
	int orc = opts_take(&o, sizeof(o), opts, QPAIR_OPTS_V1);
	if (orc)
		return unvme_fail(orc, "unvme_qpair_create: %s", opts_size_error(orc, opts->size, sizeof(o)));
	for (int attempt = 0;; attempt++) {
		if (atomic_load(&c->removed))
			return unvme_fail(-ENODEV, "%s: the device was removed", c->devid);
		if (c->failed && !c->gave_up)
			ctrlr_recover_fatal(c);
		if (c->failed)
			return unvme_fail(-EIO, "%s: controller has failed; reset it", c->devid);
		uint32_t gen = atomic_load(&c->generation);
		int rc = qpair_create_once(c, &o, out);
		/* once more on a controller that was reset meanwhile (an admin command lost) */
		if (rc == 0 || attempt == 1 || (!c->failed && atomic_load(&c->generation) == gen))
			return rc;
	}
}

UNVME_API void unvme_qpair_destroy(struct unvme_qpair *qp)
{
	if (!qp)
		return;
	struct unvme_ctrlr *c = qp->ctrlr;
	ctrlr_lock_qps(c);
	/* an automatic reset under way is finished first: the device may still touch the queue
	 * until it is disabled (a reset cannot start while qp_lock is held here) */
	while (atomic_load(&c->rec_phase) != CTRLR_REC_IDLE) {
		ctrlr_unlock_qps(c);
		recovery_run(c);
		ctrlr_lock_qps(c);
	}
	/* its own recovery's admin command outstanding (a fence, a Create) is answered first */
	qpair_recovery_settle(qp);
	/* A message-based transport's queue is ours to free, and its commands in flight must
	 * come back from the kernel first, even from a device that has failed. */
	if (ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE || (!c->failed && !qp->failed))
		ctrlr_delete_io_queues(c, qp);
	/* Deleted on the device (or the device is dead): nothing more will complete. */
	qpair_fail_outstanding(qp, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	if (c->admin) {
		/* its recovery's admin commands still outstanding must not find it */
		ctrlr_admin_lock(c);
		admin_forget_args(c, qp, qp + 1);
		admin_forget_args(c, qp->reqs, qp->reqs + qp->depth);
		ctrlr_admin_unlock(c);
	} else if (c->ops->admin_forget) {
		c->ops->admin_forget(c, qp, qp + 1); /* a client's, sent to its owner */
		c->ops->admin_forget(c, qp->reqs, qp->reqs + qp->depth);
	}
	for (struct unvme_qpair **pp = &c->qpairs; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	if (qp->qid <= c->max_io_queues)
		c->qid_used[qp->qid] = 0;
	ctrlr_unlock_qps(c);
	qpair_free(qp);
}

UNVME_API int unvme_ctrlr_is_failed(const struct unvme_ctrlr *c)
{
	return c->failed ? 1 : 0;
}

UNVME_API const char *unvme_ctrlr_devid(const struct unvme_ctrlr *c)
{
	return c->devid;
}

UNVME_API const char *unvme_ctrlr_address(const struct unvme_ctrlr *c)
{
	return c->address;
}

UNVME_API const char *unvme_ctrlr_transport(const struct unvme_ctrlr *c)
{
	return c->transport->name;
}

UNVME_API const char *unvme_ctrlr_transport_info(const struct unvme_ctrlr *c)
{
	return c->transport_info;
}

UNVME_API const struct nvme_id_ctrl *unvme_ctrlr_identify_data(const struct unvme_ctrlr *c)
{
	return &c->id;
}

UNVME_API uint64_t unvme_ctrlr_cap(const struct unvme_ctrlr *c)
{
	return c->cap;
}

UNVME_API uint32_t unvme_ctrlr_vs(const struct unvme_ctrlr *c)
{
	return c->vs;
}

UNVME_API uint32_t unvme_ctrlr_max_io_queues(const struct unvme_ctrlr *c)
{
	return c->max_io_queues;
}

UNVME_API uint32_t unvme_ctrlr_max_xfer(const struct unvme_ctrlr *c)
{
	return c->max_xfer;
}

UNVME_API int unvme_ctrlr_regs(struct unvme_ctrlr *c, struct nvme_regs_snapshot *out)
{
	if (ctrlr_kind(c) == UNVME_TRANSPORT_MESSAGE)
		return unvme_fail(-EOPNOTSUPP, "%s: the %s transport has no controller registers to "
				  "read (the kernel's driver or nobody runs this controller)", c->devid,
				  c->transport->name);
	out->cap = reg_read64(c, NVME_REG_CAP);
	out->vs = reg_read32(c, NVME_REG_VS);
	out->cc = reg_read32(c, NVME_REG_CC);
	out->csts = reg_read32(c, NVME_REG_CSTS);
	out->aqa = reg_read32(c, NVME_REG_AQA);
	out->asq = reg_read64(c, NVME_REG_ASQ);
	out->acq = reg_read64(c, NVME_REG_ACQ);
	return 0;
}
