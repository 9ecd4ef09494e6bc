/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated controller's private state, shared by the controller core's files
 * (the .c files of hw/emu). The namespaces never see this header; they get emu.h only.
 *
 * Concurrency model (read this before touching any field):
 *
 *  - ctrl->lock (mutex) serialises everything slow: CC writes, admin command processing,
 *    invalid-doorbell error handling and Asynchronous Events. In thread mode the engine also
 *    holds it for each pass over the device, so in thread mode every device-side action runs
 *    under it.
 *  - Each I/O SQ has a "busy" spin lock held by whoever is fetching from it: the host thread
 *    that rang its doorbell (inline mode) or the engine. Admin actions that touch an I/O queue
 *    (delete, abort, reset, format, SMART sums) take the busy locks of the affected SQs
 *    ("quiesce") while holding ctrl->lock. Busy holders never wait for ctrl->lock, so the
 *    order ctrl->lock -> busy is deadlock free.
 *  - An I/O CQ is written only by holders of its SQs' busy locks. When several SQs share one
 *    CQ in inline mode its tail is guarded by the CQ's spin lock (cq->locked).
 *  - The admin CQ is always guarded by its spin lock: I/O threads post deferred Abort
 *    completions to it. Completions that find it full wait in a small backlog.
 *  - Leaf locks (never held while taking another): errlog_lock, fault_lock, CQ spin locks.
 */
#ifndef UNVME_EMU_CTRL_H
#define UNVME_EMU_CTRL_H

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <time.h>

#include "lib/common/clock.h"
#include "lib/common/compiler.h"
#include "emu.h"
#include "emu_device.h"
#include "emu_iommu.h"

/* ---- identity and limits reported to the host ---- */

#define EMU_PCI_VID          0xc0deu
#define EMU_MODEL_DEFAULT    "uNVMe Emulated Controller"
#define EMU_FW_DEFAULT       "EMU1.0"
#define EMU_MDTS_LOG2        9u          /* Identify MDTS: 2^9 x 4 KiB = EMU_MDTS_BYTES */
#define EMU_CNTLID           1u
#define EMU_ACL              3u          /* Abort Command Limit, 0's based: 4 outstanding */
#define EMU_AERL             3u          /* Async Event Request Limit, 0's based: 4 outstanding */
#define EMU_ERRLOG_ENTRIES   64u         /* Identify ELPE = 63 */
#define EMU_FW_SLOTS         3u          /* slot 1 read-only (factory), slots 2 and 3 writable */
#define EMU_FW_STAGING_MAX   (16u << 20) /* largest firmware image accepted */
#define EMU_FWUG_BYTES       4096u       /* Identify FWUG = 1 (4 KiB) */
#define EMU_TEMP_KELVIN      313u        /* composite temperature reported in SMART (40 C) */
#define EMU_WCTEMP_KELVIN    343u
#define EMU_CCTEMP_KELVIN    358u
#define EMU_MAX_QUEUES_LIMIT 1023u       /* queues= upper bound (I/O queue pairs) */
#define EMU_MAX_UNITS        1024u       /* units= upper bound */
#define EMU_MAX_ENGINES      64u         /* engine= upper bound (exclusive) */
#define EMU_ACQ_BACKLOG      16u         /* > AERL+1 + ACL+1 + 1: see emu_acq_post() */
#define EMU_DEFAULT_AB       5u          /* Arbitration Burst default: 2^5 = 32 commands per pass */

/* Status word helpers (NVME_CQE_STATUS form, without phase). DNR is bit 15. */
#define EMU_DNR 0x8000u
#define EMU_ST(sct, sc)     NVME_CQE_STATUS(sct, sc)
#define EMU_ST_DNR(sct, sc) ((uint16_t)(NVME_CQE_STATUS(sct, sc) | EMU_DNR))
#define EMU_ST_INVALID_FIELD  EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)
#define EMU_ST_INVALID_OPCODE EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE)
#define EMU_ST_INVALID_NS     EMU_ST_DNR(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT)
#define EMU_ST_INTERNAL       EMU_ST(NVME_SCT_GENERIC, NVME_SC_INTERNAL)

/* Error log "Parameter Error Location": byte offset of the offending SQE field. */
#define EMU_PLOC_NONE   0xffffu
#define EMU_PLOC_FLAGS  1u
#define EMU_PLOC_NSID   4u
#define EMU_PLOC_PRP1   24u
#define EMU_PLOC_PRP2   32u
#define EMU_PLOC_CDW10  40u
#define EMU_PLOC_CDW11  44u
#define EMU_PLOC_CDW12  48u
#define EMU_PLOC_CDW14  56u

struct emu_ctrl;
void emu_errlog_record(struct emu_ctrl *c, uint16_t sqid, uint16_t cid, uint16_t status,
		       uint16_t param_loc, uint64_t lba, uint32_t nsid);

/* ---- small helpers ---- */

/* A test-and-test-and-set spin lock; yields after a while so that a holder that was
 * preempted gets the CPU back (host threads may outnumber cores). */
static inline void emu_spin_lock(_Atomic uint32_t *l)
{
	unsigned spins = 0;
	while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
		while (atomic_load_explicit(l, memory_order_relaxed)) {
			if (++spins < 256)
				cpu_relax();
			else
				sched_yield();
		}
	}
}

static inline void emu_spin_unlock(_Atomic uint32_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* Copies a C string into a fixed-width, space padded ASCII field (Identify SN/MN/FR). */
void emu_pad_ascii(char *dst, size_t width, const char *src);

/* ---- completion of one command ---- */

struct emu_result {
	uint32_t dw0;
	uint32_t dw1;        /* Zone Append: the written LBA's high half */
	uint16_t status;     /* 0 or NVME_CQE_STATUS form (+DNR) */
	uint16_t param_loc;  /* error log parameter location, EMU_PLOC_NONE when unknown */
	uint64_t lba;        /* error log LBA */
	bool     deferred;   /* no completion now: AER held, Abort waiting for its target */
};

static inline void emu_fail(struct emu_result *r, uint16_t status, uint16_t param_loc)
{
	r->status = status;
	r->param_loc = param_loc;
}

/* ---- queues ---- */

struct emu_cq;

/* An Abort command waiting for its target, which is still in the SQ (not yet fetched). */
struct emu_pending_abort {
	uint16_t target_cid;
	uint16_t abort_cid;  /* CID of the Abort command in the admin SQ */
};

struct emu_sq {
	/* Written by the busy holder only. */
	struct nvme_sqe *ring;       /* host memory, translated once at creation */
	struct emu_cq   *cq;
	uint32_t         size;       /* entries */
	uint32_t         head;
	uint16_t         qid;
	bool             live;
	uint8_t          nr_aborts;
	_Atomic uint32_t busy;       /* the fetch lock, see the top of this file */
	struct emu_io_stats stats;   /* summed into SMART */
	struct emu_iommu_tlb tlb;    /* the fetch loop's last IOMMU region (emu_iommu.h) ... */
	uint32_t tlb_gen;            /* ... valid while the IOMMU's gen is this */
	struct emu_pending_abort aborts[EMU_ACL + 1];
	/* Read by the host's doorbell writes on any thread and written only when the queue is
	 * created or deleted or stops on a full CQ: a line apart from the fetch state above, which
	 * the busy holder writes on every command, so that a CQ head doorbell rung on another core
	 * (a completion thread) does not pull that line away from the submitting core. */
	alignas(64) _Atomic uint32_t db_limit; /* queue size while the queue exists, else 0 */
	_Atomic uint32_t blocked;    /* stopped on a full CQ (inline mode resumes on CQ head write) */
	_Atomic uint16_t next_on_cq; /* next SQ sharing this SQ's CQ, 0 = end */
	/* Written by the host's doorbell writes: a line of its own so that, in thread mode, the
	 * host's stores do not bounce the line the engine works on. */
	alignas(64) _Atomic uint32_t tail_db;
};

struct emu_cq {
	/* Written by the posters on every completion. */
	struct nvme_cqe *ring;
	uint32_t         size;
	uint32_t         tail;
	uint32_t         reserved;   /* slots promised to fetched, not yet completed commands */
	uint16_t         qid;
	uint8_t          phase;
	bool             live;
	bool             locked;     /* posters take the spin lock (admin CQ, shared CQ inline) */
	bool             ien;
	uint16_t         iv;
	uint16_t         nr_sqs;     /* SQs using this CQ */
	_Atomic uint32_t lock;
	/* Read by the host's CQ head doorbell writes, which may come from another core than the
	 * posting one: a line apart from the posters' (see emu_sq). */
	alignas(64) _Atomic uint16_t first_sq; /* head of the list through emu_sq.next_on_cq */
	_Atomic uint32_t db_limit;
	alignas(64) _Atomic uint32_t head_db;
};

/* Free CQ slots that no fetched command has claimed yet. The CQ is full when
 * tail + 1 == head (NVMe Base 2.0, 4.1 "Empty and Full Queue Conditions"). */
static inline uint32_t emu_cq_space(const struct emu_cq *cq)
{
	uint32_t head = atomic_load_explicit(&cq->head_db, memory_order_acquire);
	if (head >= cq->size)
		head = 0; /* cannot happen: doorbell values are checked; keeps indexes in range */
	uint32_t used = cq->tail >= head ? cq->tail - head : cq->tail + cq->size - head;
	uint32_t free_slots = cq->size - 1 - used;
	return free_slots > cq->reserved ? free_slots - cq->reserved : 0;
}

/* emu_cq_reserve of a CQ that several SQs post to (under its spin lock; emu_queue.c). */
uint32_t emu_cq_reserve_locked(struct emu_cq *cq, uint32_t want);

/* Claims up to want CQ slots for commands about to be fetched; returns how many. A CQ with
 * one SQ in inline mode (or the engine's) is its poster's alone: no lock. */
static inline uint32_t emu_cq_reserve(struct emu_cq *cq, uint32_t want)
{
	if (cq->locked)
		return emu_cq_reserve_locked(cq, want);
	uint32_t n = emu_cq_space(cq);
	if (n > want)
		n = want;
	cq->reserved += n;
	return n;
}

/* Writes one CQE at the tail and publishes it: DW0..DW3 first, the status word with the phase
 * tag last with a release store, so a host polling from another thread never sees a
 * half-written entry. Caller owns the CQ (see the top of this file) and has a reserved slot. */
static inline void emu_cq_write(struct emu_cq *cq, uint32_t dw0, uint32_t dw1, uint16_t sqhd,
				uint16_t sqid, uint16_t cid, uint16_t status)
{
	/* as two 8-byte stores (the host is little-endian, spec.h): DW0, DW1, then SQHD, SQID, CID
	 * and the status; a host reading them with 8-byte loads (lib/driver/qpair.c) gets them
	 * from the store buffer when it reads right away on the same core */
	uint64_t *e = (uint64_t *)&cq->ring[cq->tail];
	uint16_t st = (uint16_t)((status & 0xfffeu) | cq->phase);
	*(volatile uint64_t *)e = dw0 | (uint64_t)dw1 << 32;
	__atomic_store_n(e + 1, sqhd | (uint64_t)sqid << 16 | (uint64_t)cid << 32 | (uint64_t)st << 48,
			 __ATOMIC_RELEASE);
	cq->reserved--;
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1u;
	}
}

/* ---- latency model (thread mode) ---- */

struct emu_delayed {
	uint64_t due_ns;
	uint64_t seq;        /* FIFO among equal due times */
	uint32_t dw0;
	uint32_t dw1;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status;
	uint32_t nsid;
	uint64_t err_lba;
	uint16_t param_loc;
};

struct emu_latency {
	bool      enabled;
	uint64_t *unit_free_ns;  /* per internal unit: when it is free again */
	uint32_t  units;
	uint64_t  bw_next_ns;    /* when the bandwidth pipe is free again */
	struct emu_delayed *heap;
	uint32_t  heap_len;
	uint32_t  heap_cap;
	uint64_t  seq;
};

/* ---- features (Base 2.0 5.27.1) ---- */

enum emu_feat_slot {
	EMU_FEAT_ARBITRATION,
	EMU_FEAT_POWER_MGMT,
	EMU_FEAT_TEMP_OVER,      /* temperature threshold, composite sensor, over */
	EMU_FEAT_TEMP_UNDER,     /* ... under */
	EMU_FEAT_ERR_RECOVERY,
	EMU_FEAT_VWC,
	EMU_FEAT_NUM_QUEUES,     /* DW0 form: NCQA(31:16) NSQA(15:0), 0's based */
	EMU_FEAT_IRQ_COALESCE,
	EMU_FEAT_WRITE_ATOMIC,
	EMU_FEAT_ASYNC_EVENT,
	EMU_FEAT_IOCS_PROFILE,
	EMU_FEAT_NSLOTS
};

/* ---- firmware ---- */

struct emu_fw {
	char     rev[EMU_FW_SLOTS + 1][9]; /* [1..3]; "" = empty slot */
	uint8_t  active;                   /* 1..3 */
	uint8_t  next;                     /* slot activated at the next reset, 0 = none */
	uint8_t  last_committed;           /* slot of the last replace (FS = 0 with CA 2/3) */
	char     running[9];               /* revision running since the last activation (FR) */
	uint8_t *staging;                  /* Firmware Image Download buffer */
	uint32_t staging_cap;
	uint32_t staged_end;               /* highest byte downloaded + 1 */
	uint32_t final_end;                /* end of a short (final) piece, 0 = none yet */
	uint8_t  granules[EMU_FW_STAGING_MAX / EMU_FWUG_BYTES / 8]; /* downloaded 4 KiB pieces */
};

/* ---- non-volatile state (state file) ---- */

struct emu_nvstate {
	bool     running;            /* a session is live: not shut down cleanly (yet) */
	uint64_t power_cycles;
	uint64_t power_on_secs;
	uint64_t unsafe_shutdowns;
	uint64_t error_count;
	uint64_t media_errors;
	struct emu_io_stats io;      /* host commands and bytes of earlier sessions */
	uint8_t  fw_active;
	uint8_t  fw_next;
	char     fw_rev[EMU_FW_SLOTS + 1][9];
	uint32_t feat_saved_mask;    /* bit per enum emu_feat_slot */
	uint32_t feat_saved[EMU_FEAT_NSLOTS];
	uint32_t ns_lba_size[EMU_MAX_NS]; /* 0 = not recorded */
};

/* ---- Asynchronous Events (Base 2.0 5.2) ---- */

enum emu_event {
	EMU_EVENT_INVALID_DB_REG,    /* error: write to invalid doorbell register */
	EMU_EVENT_INVALID_DB_VALUE,  /* error: invalid doorbell write value */
	EMU_EVENT_TEMPERATURE,       /* SMART / health: temperature threshold */
	EMU_EVENT_ZONE_CHANGED,      /* notice: zone descriptor changed (ZNS) */
	EMU_EVENT_NS_CHANGED,        /* notice: namespace attribute changed */
	EMU_EVENT_COUNT
};

struct emu_acq_backlog_entry {
	uint32_t dw0;
	uint16_t cid;
	uint16_t status;
};

/* A command fetched and then "lost" by the DROP fault: in flight until aborted. */
struct emu_dropped {
	uint16_t sqid;
	uint16_t cid;
	bool swallowed;      /* SWALLOW fault: Abort does not find it */
};

struct emu_engine;

struct emu_ctrl {
	struct emu_params p;
	char     uri[256];           /* for messages */

	/* registers */
	uint64_t cap;
	uint32_t vs;
	uint32_t dstrd;
	size_t   bar_size;
	_Atomic uint32_t cc;
	_Atomic uint32_t csts;       /* read lock free */
	_Atomic uint32_t aqa;
	_Atomic uint64_t asq;
	_Atomic uint64_t acq;
	_Atomic bool running;        /* CSTS.RDY && !CSTS.CFS: queues are processed */
	/* pulled out of its slot (emu_device_remove): registers read all ones, writes are lost,
	 * the namespaces are closed; only emu_device_destroy is left to free the struct */
	_Atomic bool removed;

	pthread_mutex_t lock;

	struct emu_iommu iommu;

	/* namespaces: index nsid - 1; NN (Identify) is EMU_MAX_NS, the ones given are active */
	struct emu_ns *ns[EMU_MAX_NS];
	uint32_t nr_ns;

	/* queues: index = QID, 0 = admin */
	struct emu_sq *sq;
	struct emu_cq *cq;
	uint32_t nr_qids;            /* max_queues + 1 */
	uint16_t *active_sqs;        /* live I/O SQs, for the engine's round robin */
	uint32_t nr_active_sqs;
	uint32_t rr_next;
	bool     io_queue_created;   /* since the last reset: Number of Queues is locked */
	struct emu_io_stats retired; /* stats of deleted SQs (this session) */

	/* admin CQ backlog, under cq[0].lock */
	struct emu_acq_backlog_entry acq_backlog[EMU_ACQ_BACKLOG];
	uint32_t acq_backlog_len;

	/* Asynchronous Event Requests, under lock */
	uint16_t aer_cids[EMU_AERL + 1];
	uint32_t nr_aers;
	uint32_t events_pending;     /* bit per enum emu_event */
	/* Changed Namespace List (log 04h): NSIDs changed since it was last read, under lock */
	uint32_t changed_ns[EMU_MAX_NS];
	uint32_t nr_changed_ns;
	uint32_t event_types_masked; /* bit per AER event type (0 error, 1 SMART, 2 notice) until log read */

	/* Abort commands waiting for a not yet fetched target */
	_Atomic uint32_t aborts_outstanding;

	/* features */
	uint32_t feat[EMU_FEAT_NSLOTS];

	struct emu_fw fw;

	/* fault injection (vendor command C1h): commands still to drop in bits 20:0, to swallow
	 * in bits 41:21, reads/writes still to fail in bits 63:42 (emu_fault.c). One word, so the
	 * per-command check is a single load. */
	_Atomic uint64_t faults;
	pthread_mutex_t fault_lock;
	struct emu_dropped *dropped;
	uint32_t nr_dropped;
	uint32_t dropped_cap;
	uint32_t admin_swallow;      /* admin commands still to swallow (under lock) */

	/* error log ring, newest at errlog_next - 1 */
	pthread_mutex_t errlog_lock;
	struct nvme_error_log errlog[EMU_ERRLOG_ENTRIES];
	uint32_t errlog_next;
	uint64_t error_count;        /* lifetime, persisted */
	_Atomic uint64_t media_errors; /* this session */

	/* non-volatile state */
	struct emu_nvstate nv;
	bool     has_state;
	uint64_t created_ns;

	struct emu_latency lat;

	/* thread mode */
	struct emu_engine *engine;

	/* doorbells written by other processes (emu_dbwin.c), NULL until one is handed out */
	_Atomic(struct emu_dbwin *) dbwin;
};

struct emu_device {
	struct emu_ctrl ctrl;
};

/* Posts one completion for a command of sq into its CQ, using a slot reserved when the
 * command was fetched, and records an error in the error log (every error except Command
 * Abort Requested, Base 2.0 5.16.1.2). Caller holds sq->busy (or is the engine). */
static inline void emu_complete(struct emu_ctrl *c, struct emu_sq *sq, uint16_t cid,
				const struct emu_result *r, uint32_t nsid)
{
	struct emu_cq *cq = sq->cq;
	if (cq->locked)
		emu_spin_lock(&cq->lock);
	emu_cq_write(cq, r->dw0, r->dw1, (uint16_t)sq->head, sq->qid, cid, r->status);
	if (cq->locked)
		emu_spin_unlock(&cq->lock);
	if (__builtin_expect(r->status != 0, 0) &&
	    (r->status & 0x0ffeu) != NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_ABORT_REQUESTED))
		emu_errlog_record(c, sq->qid, cid, r->status, r->param_loc, r->lba, nsid);
}

/* ---- emu_regs.c: the register file (Base 2.0 3.1) ---- */
void emu_regs_init(struct emu_ctrl *c);
uint32_t emu_regs_read32(struct emu_ctrl *c, uint32_t off);
uint64_t emu_regs_read64(struct emu_ctrl *c, uint32_t off);
void emu_regs_write32(struct emu_ctrl *c, uint32_t off, uint32_t val);

/* ---- emu_ctrl_state.c: enable, reset, shutdown, fatal (Base 2.0 3.5, 3.6, 3.7) ---- */
void emu_ctrl_cc_write(struct emu_ctrl *c, uint32_t val);
/* Controller Fatal Status: stop processing until CC.EN is cleared. Caller holds lock. */
void emu_ctrl_fatal(struct emu_ctrl *c);
/* Tears down all queues and in-flight state (reset and destroy). Caller holds lock. */
void emu_ctrl_teardown_queues(struct emu_ctrl *c);

/* ---- emu_doorbell.c ---- */
void emu_doorbell_write(struct emu_ctrl *c, uint32_t off, uint32_t val);

/* ---- emu_queue.c: rings, fetching, posting ---- */
int emu_queues_alloc(struct emu_ctrl *c);
void emu_queues_free(struct emu_ctrl *c);
/* Takes / releases the busy locks of every SQ using cq (for posting to it from admin). */
void emu_cq_quiesce(struct emu_ctrl *c, struct emu_cq *cq);
void emu_cq_unquiesce(struct emu_ctrl *c, struct emu_cq *cq);
/* Takes / releases the busy locks of every live I/O SQ. */
void emu_io_quiesce(struct emu_ctrl *c);
void emu_io_unquiesce(struct emu_ctrl *c);
/* Host read/write counters of this session: deleted queues plus live ones. Quiesces each SQ
 * in turn; caller holds lock. */
void emu_io_stats_sum(struct emu_ctrl *c, struct emu_io_stats *out);
/* Adds a deleted SQ's counters to the device total. */
void emu_sq_retire_stats(struct emu_ctrl *c, struct emu_sq *sq);
/* The engine's round-robin list of live I/O SQs (caller holds lock). */
void emu_active_sq_add(struct emu_ctrl *c, uint16_t qid);
void emu_active_sq_remove(struct emu_ctrl *c, uint16_t qid);
/* Links / unlinks an SQ on its CQ's list (caller holds lock; see emu_queue.c for busy locks). */
void emu_cq_attach_sq(struct emu_ctrl *c, struct emu_cq *cq, struct emu_sq *sq);
void emu_cq_detach_sq(struct emu_ctrl *c, struct emu_cq *cq, struct emu_sq *sq);


/* ---- emu_io.c: the I/O command path ---- */
/* Fetches and executes up to budget commands of an I/O SQ. Caller holds sq->busy. Returns the
 * number of commands fetched. */
uint32_t emu_sq_run(struct emu_ctrl *c, struct emu_sq *sq, uint32_t budget);
/* Inline mode: take sq->busy, run until empty or the CQ is full, release. */
void emu_sq_run_inline(struct emu_ctrl *c, struct emu_sq *sq);

/* ---- emu_admin.c ---- */
/* Processes the admin SQ. Caller holds lock. Returns the number of commands fetched. */
uint32_t emu_admin_run(struct emu_ctrl *c, uint32_t budget);
/* Posts an admin completion, or queues it in the backlog if the admin CQ is full. */
void emu_acq_post(struct emu_ctrl *c, uint16_t cid, uint16_t status, uint32_t dw0);
/* Moves backlog entries into the admin CQ as space allows. */
void emu_acq_drain(struct emu_ctrl *c);
/* Whether the controller implements an admin opcode (Commands Supported and Effects log). */
bool emu_admin_opcode_supported(uint8_t opc);

/* ---- admin command handlers (one file each) ---- */
void emu_cmd_identify(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_get_log_page(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_get_features(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_set_features(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_create_cq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_create_sq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_delete_sq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_delete_cq(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_abort(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_async_event(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_fw_download(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_fw_commit(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_format(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);
void emu_cmd_fault(struct emu_ctrl *c, const struct nvme_sqe *cmd, struct emu_result *r);

/* ---- emu_qmgmt.c: teardown used by reset ---- */
/* Deletes one I/O SQ: in-flight commands complete with Aborted due to SQ Deletion. Caller
 * holds lock; post_aborts false on controller reset (nothing is posted then). */
void emu_sq_delete(struct emu_ctrl *c, struct emu_sq *sq, bool post_aborts);

/* ---- emu_abort.c ---- */
/* Called by the fetch path when an SQ with pending aborts fetches a command: true if this
 * command is the target of an Abort (it is then completed with Abort Requested). */
bool emu_abort_check_fetched(struct emu_ctrl *c, struct emu_sq *sq, uint16_t cid);
/* SQ deletion: the Aborts waiting for this SQ's commands complete with "not aborted". */
void emu_abort_release_sq(struct emu_ctrl *c, struct emu_sq *sq);

/* ---- emu_aer.c ---- */
/* Raises an event; delivered to an outstanding AER now or when one arrives. Caller holds lock. */
void emu_aer_raise(struct emu_ctrl *c, enum emu_event ev);
/* Namespace nsid's Identify data changed (its LBA format, say): it joins the Changed
 * Namespace List and a Namespace Attribute Changed notice is raised. Under lock. */
void emu_aer_ns_changed(struct emu_ctrl *c, uint32_t nsid);
/* The Changed Namespace List into out (4 KiB); emptied unless retain. Under lock. */
void emu_aer_changed_ns_log(struct emu_ctrl *c, struct nvme_changed_ns_log *out, bool retain);
/* The host read log page lid with RAE=0: events of that type are reported again. */
void emu_aer_log_read(struct emu_ctrl *c, uint8_t lid);
void emu_aer_reset(struct emu_ctrl *c);
/* Abort of an outstanding AER (CID cid): it completes with Command Abort Requested. True if
 * there was one. Caller holds lock. */
bool emu_aer_abort(struct emu_ctrl *c, uint16_t cid);

/* ---- emu_errlog.c (emu_errlog_record is declared at the top) ---- */
/* An error not tied to a command: a bad doorbell write at BAR0 offset off. */
void emu_errlog_record_doorbell(struct emu_ctrl *c, uint32_t off);
/* Copies the log, newest entry first, into out (EMU_ERRLOG_ENTRIES entries; NULL: none) and
 * the lifetime error count into *count (if count is not NULL). */
void emu_errlog_snapshot(struct emu_ctrl *c, struct nvme_error_log *out, uint64_t *count);

/* ---- emu_features.c ---- */
void emu_features_reset(struct emu_ctrl *c);
const char *emu_feat_slot_name(unsigned slot);
bool emu_feat_slot_saveable(unsigned slot);
/* Temperature threshold crossed by the composite temperature (SMART critical warning bit 1). */
bool emu_temp_warning(const struct emu_ctrl *c);
/* Granted I/O SQs and CQs (1's based). */
uint32_t emu_granted_sqs(const struct emu_ctrl *c);
uint32_t emu_granted_cqs(const struct emu_ctrl *c);

/* ---- emu_firmware.c ---- */
void emu_fw_init(struct emu_ctrl *c);
/* Controller reset: a pending activation takes effect; the staged image is discarded. */
void emu_fw_reset(struct emu_ctrl *c);
void emu_fw_free(struct emu_ctrl *c);
const char *emu_fw_active_rev(const struct emu_ctrl *c);

/* ---- emu_fw_image.c ---- */
#define EMU_FW_MAGIC       "UNVMEFW1"
#define EMU_FW_HEADER_SIZE 32u
uint32_t emu_crc32(const void *buf, size_t len);
/* Checks a staged image; on success copies its revision (NUL terminated) into rev[9]. */
bool emu_fw_image_valid(const uint8_t *img, uint32_t len, char rev[9]);

/* ---- emu_fault.c ---- */
enum emu_fault_outcome {
	EMU_FAULT_NONE,      /* execute the command normally */
	EMU_FAULT_DROPPED,   /* fetched and lost: no completion until aborted or deleted */
	EMU_FAULT_FAILED,    /* do not execute; complete with the result filled in */
};
/* Slow path of the per-command fault check (taken only while c->faults is non-zero). */
enum emu_fault_outcome emu_fault_apply(struct emu_ctrl *c, struct emu_sq *sq,
				       const struct nvme_sqe *cmd, struct emu_result *r);
/* Removes (sqid, cid) from the dropped list; true if it was there (a swallowed command is not
 * found: Abort cannot end it). */
bool emu_dropped_take(struct emu_ctrl *c, uint16_t sqid, uint16_t cid);
/* Removes every dropped command of sqid, calling fn for each. */
void emu_dropped_take_sq(struct emu_ctrl *c, uint16_t sqid, void (*fn)(struct emu_ctrl *, uint16_t, uint16_t));
/* Forgets every dropped command (controller reset). */
void emu_dropped_clear(struct emu_ctrl *c);
void emu_faults_clear(struct emu_ctrl *c);

/* ---- emu_latency.c ---- */
int emu_latency_init(struct emu_ctrl *c);
void emu_latency_free(struct emu_ctrl *c);
/* Schedules the completion of a command executed now: posted at once when it is due now. */
void emu_latency_submit(struct emu_ctrl *c, struct emu_sq *sq, const struct nvme_sqe *cmd,
			const struct emu_result *r);
/* Posts the completions that are due; returns how many; *next_due = earliest remaining. */
uint32_t emu_latency_poll(struct emu_ctrl *c, uint64_t now, uint64_t *next_due);
/* Removes the delayed completion of (sqid, cid); true if found. */
bool emu_latency_take(struct emu_ctrl *c, uint16_t sqid, uint16_t cid);
/* Removes every delayed completion of sqid, calling fn for each. */
void emu_latency_take_sq(struct emu_ctrl *c, uint16_t sqid, void (*fn)(struct emu_ctrl *, uint16_t, uint16_t));
void emu_latency_clear(struct emu_ctrl *c);

/* ---- emu_engine.c (thread mode) ---- */
int emu_engine_attach(struct emu_ctrl *c, char *err, size_t errlen);
void emu_engine_detach(struct emu_ctrl *c);
/* One pass over a device: admin, I/O round robin, due completions. Returns work done. */
uint32_t emu_ctrl_poll(struct emu_ctrl *c, uint64_t *next_due);

/* ---- emu_dbwin.c: the doorbell window other processes write ---- */
struct emu_dbwin;
/* Acts on the doorbells written into the window since the last scan; returns how many. */
uint32_t emu_dbwin_scan(struct emu_ctrl *c);
/* A queue is created: its doorbell in the window starts at 0. */
void emu_dbwin_clear(struct emu_ctrl *c, uint32_t qid, bool sq);
void emu_dbwin_stop(struct emu_ctrl *c);  /* stops the inline-mode watcher */
void emu_dbwin_free(struct emu_ctrl *c);

/* ---- emu_state.c ---- */
/* Loads the state file; a missing file is not an error (*found = false). */
int emu_state_load(const char *path, struct emu_nvstate *st, bool *found, char *err, size_t errlen);
int emu_state_save(const char *path, const struct emu_nvstate *st);
/* Gathers the controller's current non-volatile values into c->nv and writes the file (no-op
 * without a state file). Caller holds lock (or is the only user, at create/destroy). */
int emu_ctrl_persist(struct emu_ctrl *c);

/* ---- emu_prp.c: admin data transfers through PRPs ---- */
uint16_t emu_dma_to_host(struct emu_ctrl *c, const struct nvme_sqe *cmd, const void *buf, uint32_t len);
uint16_t emu_dma_from_host(struct emu_ctrl *c, const struct nvme_sqe *cmd, void *buf, uint32_t len);
/* Copies n bytes of buf then zeroes the rest of the len-byte transfer (n <= len). */
uint16_t emu_dma_to_host_padded(struct emu_ctrl *c, const struct nvme_sqe *cmd, const void *buf,
				uint32_t n, uint32_t len);

/* ---- emu_smart.c ---- */
void emu_smart_build(struct emu_ctrl *c, struct nvme_smart_log *out);

#endif
