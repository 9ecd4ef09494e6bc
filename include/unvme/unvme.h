/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uNVMe: a user-space NVMe driver.
 *
 * Return convention, everywhere in this header unless a function says otherwise:
 *   0            success
 *   < 0          a host-side failure, as a negative errno (-EINVAL bad argument, -ENODEV no
 *                such device, -ENOMEM, -EAGAIN queue full or a reset under way, -ETIMEDOUT,
 *                -EIO controller or queue failed, -EDEADLK a poll nested too deep in
 *                callbacks, -ENAMETOOLONG a device id or alias target too long)
 *   > 0          the device completed the command with an NVMe error status, encoded as
 *                NVME_STATUS(sct, sc) = (SCT << 8) | SC; unvme_status_str() names it.
 * Functions never set errno as their result. Failures also leave a human-readable reason in
 * a thread-local buffer, unvme_errmsg().
 *
 * Threading contract:
 *   - A queue pair (struct unvme_qpair) belongs to one thread at a time: submit and poll it from
 *     that thread only. The I/O path takes no locks.
 *   - Admin commands (everything taking only a controller) are serialised internally and may be
 *     called from any thread.
 *   - unvme_ctrlr_reset() and unvme_ctrlr_close() must not run while another thread uses one of
 *     the controller's queue pairs.
 *   - A completion callback may submit on its own queue pair and may poll it (a synchronous
 *     command inside a callback works): the nested poll reaps the completions after the one
 *     being called back, running their callbacks first. Nesting is bounded (8 levels; deeper
 *     polls answer -EDEADLK and reap nothing).
 *   - Recovery, one model for timeouts and controller failures: a command older than its
 *     queue's timeout gets an Abort; one the Abort does not end fences its queue (Delete I/O
 *     SQ/CQ); a controller fatal status (CSTS.CFS), an admin command that never completes, or
 *     a fence the device refuses resets the controller. Either way the queue pair's owner
 *     creates its queue again at its next submit or poll, then its commands in flight
 *     complete with ABORTED_SQ_DELETION (so their callbacks may submit again). A split queue
 *     pair is rebuilt by unvme_qpair_recover. See unvme_ctrlr_reset_count().
 *   - One controller per device per process: opening a device that is already open returns
 *     the same controller (see unvme_ctrlr_open).
 *
 * Device ids: "emu://..." names an emulated controller (see docs/devices.md), a PCI address
 * ("0000:02:00.0") names a PCIe controller, "nvme-tcp://HOST:PORT/NQN" a subsystem over NVMe/TCP
 * (docs/nvme-tcp.md), a device file names what the kernel's NVMe driver keeps ("/dev/ng0n1"
 * through io_uring passthrough, "/dev/nvme0" with all its namespaces, "/dev/nvme0n1" through
 * the block layer), "file:///path?lba=4096" (or an absolute path) a regular file
 * (docs/kernel-backends.md), and any other word is looked up as an alias in
 * $UNVME_DEVICES ("name=devid;name=devid") and the devices file ($UNVME_CONFIG, else
 * ~/.config/unvme/devices.json, else /etc/unvme/devices.json). "emu0" is built in.
 *
 * Environment: UNVME_QUIET (any value but "" and "0") silences the library's notices on
 * stderr; UNVME_IO_TIMEOUT_MS and UNVME_ADMIN_TIMEOUT_MS change the default timeouts of
 * unvme_ctrlr_opts_default (as the kernel's nvme_core io_timeout / admin_timeout do).
 */
#ifndef UNVME_H
#define UNVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(UNVME_BUILDING_LIBRARY)
#define UNVME_API __attribute__((visibility("default")))
#else
#define UNVME_API
#endif

struct unvme_ctrlr;
struct unvme_ns;
struct unvme_qpair;

/* Option structs (unvme_ctrlr_opts, unvme_qpair_opts, unvme_serve_opts and BlobFS's) start
 * with their size, so that later versions can append fields without breaking programs built
 * before them. Initialise one with UNVME_OPTS_INIT (or its *_opts_default function) and the
 * library reads exactly the fields your header declares, with its defaults for any it added
 * since:
 *     struct unvme_qpair_opts o = UNVME_OPTS_INIT(struct unvme_qpair_opts);
 *     o.depth = 64;
 * A size of 0 (a zeroed struct, or designated initialisers without .size) reads the fields of
 * the first version, which are every field these headers have today. A struct from a newer
 * header whose extra fields are set is refused with -E2BIG: a setting is never dropped
 * silently. */
#define UNVME_OPTS_INIT(type) { .size = sizeof(type) }

/* ---- version ---- */

/* The library's version, "MAJOR.MINOR.PATCH" (the meson project version). */
UNVME_API const char *unvme_version(void);
/* How this library was built, one line of key=value words: buildtype, compiler, sanitizers,
 * and the versions of the libraries it was built against (liburing, json-c, libcrypto, zlib),
 * e.g. "buildtype=release compiler=gcc-12.2.0 sanitize=none liburing=2.3 ...". */
UNVME_API const char *unvme_build_options(void);

/* ---- errors ---- */

/* Name of an NVMe status in the library's (SCT << 8) | SC form, e.g. "LBA Out of Range".
 * The generic codes 0x80..0xbf depend on the command set: csi picks the naming. */
UNVME_API const char *unvme_status_str(int status, uint8_t csi);
/* Name of a status type, e.g. "Generic Command Status". */
UNVME_API const char *unvme_sct_str(unsigned sct);
/* The reason for the calling thread's last failure, "" if none. */
UNVME_API const char *unvme_errmsg(void);
/* The library writes nothing on stderr unless asked: unvme_set_log(1) turns its notices on
 * (automatic controller resets, the no-hugepages notice, SDK warnings, misuse such as freeing
 * memory it did not allocate), unvme_set_log(0) off, unvme_set_log(-1) leaves it to the
 * environment again, which decides until a program calls it: UNVME_LOG=1 turns them on
 * (even with UNVME_QUIET=1, the older switch, set). One exception: a failure that ends an
 * initialisation (kv_sdk_init) is printed by default, one line with its reason; a program
 * that prints kv_errmsg() itself calls unvme_set_log(0), and UNVME_LOG=0 or UNVME_QUIET=1
 * silence it. */
UNVME_API void unvme_set_log(int on);

/* ---- DMA memory ----
 * Buffers passed to queue pairs must come from here: the memory is pinned and mapped for the
 * device (hugepages when reserved, else locked regular pages). Thread safe. */
UNVME_API void *unvme_dma_alloc(size_t size, size_t align);
UNVME_API void *unvme_dma_zalloc(size_t size, size_t align);
UNVME_API void unvme_dma_free(void *buf);
/* Bus address of DMA memory, or UINT64_MAX if buf is not DMA memory. */
UNVME_API uint64_t unvme_dma_iova(const void *buf);
/* Bytes from buf to the end of the DMA mapping that holds it (a buffer of up to that many
 * bytes can be handed to a queue pair as it is), or 0 if buf is not DMA memory. */
UNVME_API size_t unvme_dma_contig(const void *buf);
/* Bytes of DMA memory the machine can still provide now: free hugepages plus the regular
 * memory the kernel reports available (MemAvailable); UINT64_MAX when it cannot tell. Check
 * a large reservation against it up front: unvme_dma_alloc refuses regular memory beyond it
 * (-ENOMEM with a message) rather than pushing the machine into its OOM killer. */
UNVME_API uint64_t unvme_dma_mem_available(void);

/* ---- controllers ---- */

struct unvme_ctrlr_opts {
	size_t size;                /* UNVME_OPTS_INIT: sizeof this struct (0: version 1) */
	uint32_t num_io_queues;     /* requested I/O queue pairs (default 64; the device may grant fewer) */
	uint32_t admin_queue_depth; /* default 32 */
	uint32_t admin_timeout_ms;  /* default 10000 ($UNVME_ADMIN_TIMEOUT_MS) */
	uint32_t io_queue_depth;    /* default for unvme_qpair_create with depth 0 (default 256) */
	uint32_t io_timeout_ms;     /* default per-command I/O timeout (default 30000, or
				       $UNVME_IO_TIMEOUT_MS; 0 = none) */
};
/* Fills opts with the defaults for the fields size bytes cover and sets opts->size. */
UNVME_API void unvme_ctrlr_opts_init(struct unvme_ctrlr_opts *opts, size_t size);
/* The defaults for a struct of this header's size (the macro). The function of that name, for
 * bindings that call the library without this header, fills a first-version struct. */
UNVME_API void unvme_ctrlr_opts_default(struct unvme_ctrlr_opts *opts);
#define unvme_ctrlr_opts_default(opts) unvme_ctrlr_opts_init((opts), sizeof(*(opts)))

/* Attach: resolves devid, runs the NVMe init sequence (disable, admin queue, enable, identify,
 * number of queues) and discovers the active namespaces. opts may be NULL. A device whose
 * resolved address is already open in this process is not attached twice: the same
 * controller is returned (with the options of its first open) and a reference taken, so the
 * SDK and a program's own calls share one device. -ENAMETOOLONG for an over-long id. */
UNVME_API int unvme_ctrlr_open(const char *devid, const struct unvme_ctrlr_opts *opts,
			       struct unvme_ctrlr **out);
/* Drops a reference; the last one deletes the I/O queues (destroy yours before closing:
 * another user's stay while the controller is shared), requests a normal shutdown (CC.SHN)
 * and detaches. NULL is ignored. */
UNVME_API void unvme_ctrlr_close(struct unvme_ctrlr *ctrlr);
/* Controller reset: outstanding commands complete with ABORTED_SQ_DELETION, the controller is
 * disabled and re-initialised, existing queue pairs are re-created on the device. On a device
 * the kernel keeps, the kernel resets the controller (NVME_IOCTL_RESET, needs CAP_SYS_ADMIN)
 * and finishes its commands itself; queue pairs stay as they are. On a file: a no-op. */
UNVME_API int unvme_ctrlr_reset(struct unvme_ctrlr *ctrlr);
/* 1 if the controller reported a fatal status (CSTS.CFS) or stopped answering and is not (or
 * not yet) recovered. */
UNVME_API int unvme_ctrlr_is_failed(const struct unvme_ctrlr *ctrlr);
/* How many automatic resets the driver completed on this controller: after a fatal status
 * (CSTS.CFS), an admin command that timed out and Abort could not end, a queue whose fence
 * (Delete I/O SQ/CQ) the device refused, or a queue that could not be created again. Resets
 * asked for with unvme_ctrlr_reset() and automatic ones that failed are not counted. Each
 * counted reset also says so on stderr (unless UNVME_QUIET is set). The driver stops trying,
 * and the controller stays failed until unvme_ctrlr_reset(), when the device does not answer,
 * when a reset fails, or after three automatic resets within 10 s. */
UNVME_API uint32_t unvme_ctrlr_reset_count(const struct unvme_ctrlr *ctrlr);

UNVME_API const char *unvme_ctrlr_devid(const struct unvme_ctrlr *ctrlr);   /* as given */
UNVME_API const char *unvme_ctrlr_address(const struct unvme_ctrlr *ctrlr); /* resolved: URI or BDF */
UNVME_API const char *unvme_ctrlr_transport(const struct unvme_ctrlr *ctrlr); /* "emu", "vfio", ... */
/* One line for people on how the transport reaches the device: for a kernel-kept device, e.g.
 * "io_uring passthrough on /dev/ng0n1 (...), completions polled (IOPOLL); buffers registered".
 * "" when there is nothing to add to the transport's name. */
UNVME_API const char *unvme_ctrlr_transport_info(const struct unvme_ctrlr *ctrlr);
UNVME_API const struct nvme_id_ctrl *unvme_ctrlr_identify_data(const struct unvme_ctrlr *ctrlr);
UNVME_API uint64_t unvme_ctrlr_cap(const struct unvme_ctrlr *ctrlr);
UNVME_API uint32_t unvme_ctrlr_vs(const struct unvme_ctrlr *ctrlr);
/* Reads CAP, VS, CC, CSTS, AQA, ASQ and ACQ now. Returns 0, or -EOPNOTSUPP for a device the
 * kernel (or nobody, for a file) runs: there are no registers to read. */
UNVME_API int unvme_ctrlr_regs(struct unvme_ctrlr *ctrlr, struct nvme_regs_snapshot *out);
/* Number of I/O queue pairs granted by Set Features (Number of Queues). */
UNVME_API uint32_t unvme_ctrlr_max_io_queues(const struct unvme_ctrlr *ctrlr);
/* Largest transfer of one command in bytes (from MDTS; capped by the driver's PRP pool). */
UNVME_API uint32_t unvme_ctrlr_max_xfer(const struct unvme_ctrlr *ctrlr);

/* Active namespaces: iterate with first/next (0 ends). */
UNVME_API uint32_t unvme_ctrlr_first_nsid(const struct unvme_ctrlr *ctrlr);
UNVME_API uint32_t unvme_ctrlr_next_nsid(const struct unvme_ctrlr *ctrlr, uint32_t prev);
/* NULL if nsid is not an active namespace. */
UNVME_API struct unvme_ns *unvme_ctrlr_ns(struct unvme_ctrlr *ctrlr, uint32_t nsid);
/* Re-reads Identify for every namespace (after Format, for example). */
UNVME_API int unvme_ctrlr_refresh_ns(struct unvme_ctrlr *ctrlr);

/* ---- namespaces ---- */
UNVME_API uint32_t unvme_ns_id(const struct unvme_ns *ns);
UNVME_API uint8_t unvme_ns_csi(const struct unvme_ns *ns);
UNVME_API uint64_t unvme_ns_nlbas(const struct unvme_ns *ns);
UNVME_API uint32_t unvme_ns_lba_size(const struct unvme_ns *ns);
UNVME_API const struct nvme_id_ns *unvme_ns_identify_data(const struct unvme_ns *ns);
UNVME_API struct unvme_ctrlr *unvme_ns_ctrlr(const struct unvme_ns *ns);

/* ---- admin commands (synchronous, any thread) ----
 * buf may be any memory: the driver copies through its own DMA buffer. cpl (may be NULL)
 * receives the completion entry. The command's CID and data pointer are filled in. A command
 * without completion within admin_timeout_ms returns -ETIMEDOUT after the driver aborted it
 * (an Asynchronous Event Request sent here ends so) or, when Abort does not find it, reset
 * the controller: its slot always comes back. Over NVMe/TCP the transport ends it itself: it
 * completes with Command Aborted By Host (SCT 3h, SC 71h) once admin_timeout_ms has passed
 * (docs/nvme-tcp.md). */
UNVME_API int unvme_admin(struct unvme_ctrlr *ctrlr, struct nvme_sqe *cmd, void *buf, size_t len,
			  struct nvme_cqe *cpl);
UNVME_API int unvme_identify(struct unvme_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, uint8_t csi,
			     void *buf4096);
UNVME_API int unvme_get_log_page(struct unvme_ctrlr *ctrlr, uint8_t lid, uint32_t nsid, void *buf,
				 uint32_t len, uint64_t offset);
/* *value (may be NULL) receives completion DW0. */
UNVME_API int unvme_get_features(struct unvme_ctrlr *ctrlr, uint8_t fid, uint32_t nsid,
				 uint32_t cdw11, uint32_t *value);
UNVME_API int unvme_set_features(struct unvme_ctrlr *ctrlr, uint8_t fid, uint32_t nsid,
				 uint32_t cdw11, bool save, uint32_t *value);
/* Format NVM; nsid 0xffffffff for all. ses: enum nvme_format_ses. Refreshes namespace data. */
UNVME_API int unvme_format(struct unvme_ctrlr *ctrlr, uint32_t nsid, uint8_t lbaf, uint8_t ses);
/* Firmware Image Download of a whole image in chunks of xfer bytes (0: 4 KiB or FWUG). */
UNVME_API int unvme_fw_download(struct unvme_ctrlr *ctrlr, const void *image, size_t len,
				uint32_t xfer);
/* Firmware Commit of slot with commit action (CA) action. Status FW_NEEDS_RESET etc. are
 * returned as positive statuses like any other. */
UNVME_API int unvme_fw_commit(struct unvme_ctrlr *ctrlr, uint8_t slot, uint8_t action);
/* Abort command cid on queue sqid; *aborted (may be NULL) is set when the device aborted it. */
UNVME_API int unvme_abort(struct unvme_ctrlr *ctrlr, uint16_t sqid, uint16_t cid, bool *aborted);

/* ---- events: hot-plug and Asynchronous Events (docs/devices.md "Hot-plug") ----
 * A controller handle outlives its device: when the device is pulled out (surprise removal)
 * every outstanding command completes with ABORTED_SQ_DELETION, submissions, polls and
 * admin commands answer -ENODEV ("... was removed"), and listeners get UNVME_EVENT_REMOVED.
 * When a device appears again at the same address (the same one or a replacement with
 * another serial number: the handle re-attaches by address) the driver initialises it,
 * reads its namespaces again (an unvme_ns pointer of a namespace that is still there stays
 * valid), and listeners get UNVME_EVENT_ARRIVED; each queue pair is created again on the
 * device by its owner's next submit or poll (a split queue pair by unvme_qpair_recover), so
 * the same process continues its I/O. */
enum unvme_event_type {
	UNVME_EVENT_REMOVED = 1, /* the device left its slot */
	UNVME_EVENT_ARRIVED = 2, /* a device is at the address again; status 0 when attached */
	UNVME_EVENT_AER = 3,     /* an Asynchronous Event (unvme_ctrlr_aer_enable) */
};
struct unvme_event {
	enum unvme_event_type type;
	int status;          /* ARRIVED: 0, or the negative errno of a re-attach that failed */
	uint32_t aer_dw0;    /* AER: completion DW0: type (2:0), information (15:8), log page (23:16) */
	char serial[21];     /* Identify SN (ARRIVED: the new device's), NUL terminated */
};
/* Called on the thread that noticed the event (the one that unplugged or plugged the device,
 * or called unvme_ctrlr_process_events). A callback may issue admin commands and submit I/O;
 * it must not add or remove listeners, nor close the controller. Argument order: the
 * controller, the event, then the arg given to unvme_ctrlr_add_event_cb last (a command
 * callback, unvme_cmd_cb, takes its arg first; the ABI keeps both orders). */
typedef void (*unvme_event_cb)(struct unvme_ctrlr *ctrlr, const struct unvme_event *ev, void *arg);
/* At most 8 listeners per controller (-ENOSPC); the same (cb, arg) twice is -EEXIST. */
UNVME_API int unvme_ctrlr_add_event_cb(struct unvme_ctrlr *ctrlr, unvme_event_cb cb, void *arg);
UNVME_API void unvme_ctrlr_remove_event_cb(struct unvme_ctrlr *ctrlr, unvme_event_cb cb, void *arg);
/* 1 while the device is out of its slot (between REMOVED and a successful ARRIVED). */
UNVME_API int unvme_ctrlr_is_removed(const struct unvme_ctrlr *ctrlr);
/* Keeps an Asynchronous Event Request outstanding on the admin queue (sent again after each
 * event, and after a reset or re-attach). Events are delivered by unvme_ctrlr_process_events.
 * -EOPNOTSUPP on a transport without an admin queue of its own (kernel-kept devices, files). */
UNVME_API int unvme_ctrlr_aer_enable(struct unvme_ctrlr *ctrlr);
/* Reaps completed Asynchronous Event Requests and calls the listeners (UNVME_EVENT_AER) on
 * this thread. Returns the number of events delivered (events reaped before a removal are
 * still delivered after it), or -ENODEV while the device is removed and nothing is left.
 * Call it periodically (a monitor polls every few milliseconds). */
UNVME_API int unvme_ctrlr_process_events(struct unvme_ctrlr *ctrlr);

/* Emulated devices: pulling a card out of its slot and putting one back are the emulator's
 * test hooks, declared in unvme/emu.h. */

/* ---- device processes (docs/multi-process.md) ----
 * A device that outlives processes (an emulated device with a name or files; any shareable
 * device when asked) is run by a device process of its own: every process that opens it is
 * a client with its own queues, and no client's exit takes the device away. The library
 * starts one on the first open (`unvme serve --detach`); `unvme serve` runs one by hand. */
struct unvme_serve_opts {
	size_t size;                /* UNVME_OPTS_INIT: sizeof this struct (0: version 1) */
	uint32_t idle_ms;              /* end after this long with no client (0: only when told) */
	const volatile int *stop;      /* end once *stop is non-zero (set by a signal handler) */
	void (*ready)(void *arg, int pid); /* called once the device serves */
	void *arg;
	bool log_to_run_dir;           /* stderr to the device's log beside its socket (a daemon) */
};
/* Runs the device process of devid in this process until it ends (idle, told, *stop): 0, or
 * a negative errno with a message (-EALREADY: another process runs the device already;
 * -EOPNOTSUPP: a device that cannot be shared). The device is closed cleanly at the end. */
UNVME_API int unvme_serve(const char *devid, const struct unvme_serve_opts *opts);
/* Tells the device process of devid to end and waits (at most timeout_ms, 0: 60 s) until it
 * closed the device: 0, -ESRCH (no process runs it), -EOPNOTSUPP (an application runs it as
 * its primary: it ends with that application), -ETIMEDOUT. */
UNVME_API int unvme_serve_stop(const char *devid, uint32_t timeout_ms);
struct unvme_serve_status {
	int pid;                       /* of the process that runs the device */
	uint32_t clients;              /* processes connected to it, the asking one not counted */
	uint32_t idle_ms;              /* its idle period (0: it ends only when told) */
	bool device_process;           /* a device process (else an application, the primary) */
};
/* Who runs devid now: 0, or -ESRCH when no process serves it. */
UNVME_API int unvme_serve_status(const char *devid, struct unvme_serve_status *st);

/* ---- I/O queue pairs (one thread each, no locks) ---- */

struct unvme_qpair_opts {
	size_t size;                /* UNVME_OPTS_INIT: sizeof this struct (0: version 1) */
	uint32_t depth;      /* entries in the SQ and CQ (0: controller default); at most CAP.MQES+1.
	                        One slot stays empty, so depth-1 commands can be outstanding. */
	uint32_t timeout_ms; /* per-command timeout (0: controller default; UINT32_MAX: none) */
	/* Split ownership: one thread submits (unvme_qpair_submit) while another polls
	 * (unvme_qpair_poll), with no lock between them; callbacks run on the polling thread.
	 * This is the completion-thread model: the submitting core builds commands, the
	 * completing core rings the SQ doorbell for what was submitted (at each poll) and reaps.
	 * The submitter may also call unvme_qpair_ring, for the lowest latency when the poller
	 * polls rarely; either side's ring covers all that was submitted before it. The _sync
	 * helpers are refused on such a queue. When the queue is lost (fenced after a timeout,
	 * or the controller reset) the poller's polls complete what is outstanding with
	 * ABORTED_SQ_DELETION and answer -EIO, submissions answer -EIO, until the owner stops
	 * both sides and calls unvme_qpair_recover. */
	bool split;
};

/* A command's completion, on the thread that polled it. Argument order: the arg given with the
 * command first, then its completion entry (an event listener, unvme_event_cb, takes its arg
 * last; the ABI keeps both orders). */
typedef void (*unvme_cmd_cb)(void *arg, const struct nvme_cqe *cpl);

UNVME_API int unvme_qpair_create(struct unvme_ctrlr *ctrlr, const struct unvme_qpair_opts *opts,
				 struct unvme_qpair **out);
/* Deletes the queues on the device; outstanding commands complete with ABORTED_SQ_DELETION. */
UNVME_API void unvme_qpair_destroy(struct unvme_qpair *qp);
UNVME_API uint16_t unvme_qpair_id(const struct unvme_qpair *qp);
UNVME_API uint32_t unvme_qpair_outstanding(const struct unvme_qpair *qp);

/* Queues a raw command. buf/len describe the data (DMA memory, or NULL/0); the driver fills in
 * CID and, when len > 0, PRP1/PRP2 (building a PRP list when needed); with no data the
 * command's PRP fields go to the device as given (Create I/O SQ/CQ use them). The doorbell is rung by the next
 * unvme_qpair_poll() or unvme_qpair_ring(), so a burst of submissions costs one doorbell write.
 * Returns -EAGAIN when the queue is full (or a controller reset is under way), -EINVAL for a
 * buffer that is not DMA memory or a length over unvme_ctrlr_max_xfer(), -EIO when the
 * controller has failed or a split queue was lost. cb is called from unvme_qpair_poll() on
 * the owning thread, and may submit and poll. */
UNVME_API int unvme_qpair_submit(struct unvme_qpair *qp, const struct nvme_sqe *cmd, void *buf,
				 size_t len, unvme_cmd_cb cb, void *arg);
/* Makes queued submissions visible to the device (SQ tail doorbell). */
UNVME_API void unvme_qpair_ring(struct unvme_qpair *qp);
/* A lost queue (fenced after a timeout, or after a controller reset): an unshared queue pair
 * rebuilds itself in its next submit or poll; a split one answers -EIO until its owner, with
 * both its submitter and its poller stopped, calls this: the queues are created again on the
 * device, then whatever is still outstanding completes with ABORTED_SQ_DELETION (callbacks
 * run here). 0 (also for a queue that had not failed), -EAGAIN while a reset is still under
 * way, -EIO when the controller stays failed (unvme_ctrlr_reset). */
UNVME_API int unvme_qpair_recover(struct unvme_qpair *qp);
/* Rings pending submissions, then reaps up to max completions (0: no limit), calling their
 * callbacks; checks timeouts (every 10 ms) and recovers a lost queue. Returns the number
 * reaped or a negative errno (-EIO: failed; -EDEADLK: called from callbacks nested 8 deep).
 * From a completion callback of the same queue pair it reaps what completed after the entry
 * being called back (timeouts and recovery are left to the outermost poll). */
UNVME_API int unvme_qpair_poll(struct unvme_qpair *qp, uint32_t max);
/* Submits and waits. Returns status per the convention above; cpl (may be NULL) gets the entry.
 * The wait polls flat out for 1 ms, then yields, then from 10 ms on sleeps between polls
 * (growing sleeps, at most an eighth of the time waited): a command that never completes
 * costs little CPU until the timeout recovers it. Works from a completion callback. */
UNVME_API int unvme_qpair_cmd_sync(struct unvme_qpair *qp, const struct nvme_sqe *cmd, void *buf,
				   size_t len, struct nvme_cqe *cpl);

/* ---- block I/O on NVM namespaces ----
 * Asynchronous forms queue one command; the synchronous (_sync) forms submit and poll until
 * the command completes and return its status. buf is DMA memory of nlb * lba size bytes. */
UNVME_API int unvme_read(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf, uint64_t slba,
			 uint32_t nlb, unvme_cmd_cb cb, void *arg);
UNVME_API int unvme_write(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf, uint64_t slba,
			  uint32_t nlb, unvme_cmd_cb cb, void *arg);
UNVME_API int unvme_flush(struct unvme_ns *ns, struct unvme_qpair *qp, unvme_cmd_cb cb, void *arg);
UNVME_API int unvme_write_zeroes(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				 uint32_t nlb, unvme_cmd_cb cb, void *arg);
/* Dataset Management with the deallocate attribute over one range. */
UNVME_API int unvme_deallocate(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
			       uint32_t nlb, unvme_cmd_cb cb, void *arg);
UNVME_API int unvme_compare(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
			    uint64_t slba, uint32_t nlb, unvme_cmd_cb cb, void *arg);

UNVME_API int unvme_read_sync(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf, uint64_t slba,
			      uint32_t nlb);
UNVME_API int unvme_write_sync(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
			       uint64_t slba, uint32_t nlb);
UNVME_API int unvme_flush_sync(struct unvme_ns *ns, struct unvme_qpair *qp);
UNVME_API int unvme_write_zeroes_sync(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				      uint32_t nlb);
UNVME_API int unvme_deallocate_sync(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				    uint32_t nlb);
UNVME_API int unvme_compare_sync(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
				 uint64_t slba, uint32_t nlb);

/* ---- zoned namespaces (ZNS Command Set, CSI 02h) ----
 * A zoned namespace also takes the block I/O calls above, under the zone rules: writes go to
 * a zone's write pointer, reads stay inside one zone. Zone statuses (NVME_SC_ZONE_*, SCT 1)
 * come back as positive statuses like any other. Zone Append is the way to write a zone at
 * queue depth > 1: the device picks the LBA and returns it in the completion. */

struct unvme_zns_info {
	uint64_t zone_size;   /* blocks per zone (ZSZE of the LBA format in use) */
	uint64_t nr_zones;
	uint32_t max_open;    /* open zone limit, 0 = none */
	uint32_t max_active;  /* active zone limit, 0 = none */
	uint32_t zasl_bytes;  /* largest Zone Append (ZASL, else the transfer limit) */
};
/* Fills *out from the namespace's ZNS Identify data (read when the namespace was found).
 * -EINVAL for a namespace that is not zoned. */
UNVME_API int unvme_zns_info(const struct unvme_ns *ns, struct unvme_zns_info *out);

/* One zone, decoded from its descriptor. wp is UINT64_MAX where the device reports no valid
 * write pointer (offline zones). */
struct unvme_zone {
	uint64_t zslba;
	uint64_t zcap;        /* writable blocks */
	uint64_t wp;
	uint8_t state;        /* enum nvme_zone_state */
	uint8_t type;         /* NVME_ZONE_TYPE_SEQ_WRITE_REQ */
	uint8_t attrs;        /* NVME_ZA_* */
};
/* "empty", "implicitly-open", "explicitly-open", "closed", "read-only", "full", "offline". */
UNVME_API const char *unvme_zone_state_str(uint8_t state);

/* Zone Management Receive (Report Zones) into buf of len bytes (DMA memory, a multiple of 4,
 * at least 64): the zones from the one holding slba on whose state matches opt
 * (enum nvme_zone_report_opt); partial: the header counts only the descriptors returned. */
UNVME_API int unvme_zone_mgmt_recv(struct unvme_ns *ns, struct unvme_qpair *qp, void *buf,
				   uint32_t len, uint64_t slba, uint8_t opt, bool partial,
				   unvme_cmd_cb cb, void *arg);
/* Report Zones, synchronous and decoded: up to *nr zones into zones[]; *nr gets how many were
 * returned, *total (may be NULL) how many zones from slba on match opt. */
UNVME_API int unvme_zone_report(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t slba,
				uint8_t opt, struct unvme_zone *zones, uint32_t *nr, uint64_t *total);
/* Zone Management Send: zsa (enum nvme_zone_send_action) on the zone starting at zslba, or
 * with all on every zone the action applies to (zslba is then ignored). */
UNVME_API int unvme_zone_mgmt_send(struct unvme_ns *ns, struct unvme_qpair *qp, uint64_t zslba,
				   uint8_t zsa, bool all, unvme_cmd_cb cb, void *arg);
UNVME_API int unvme_zone_mgmt_send_sync(struct unvme_ns *ns, struct unvme_qpair *qp,
					uint64_t zslba, uint8_t zsa, bool all);
/* Zone Append of nlb blocks from buf to the zone starting at zslba; the completion's
 * unvme_cpl_lba() is the LBA where the data landed. fua: durable on completion. */
UNVME_API int unvme_zone_append(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
				uint64_t zslba, uint32_t nlb, bool fua, unvme_cmd_cb cb, void *arg);
/* Synchronous Zone Append; *lba (may be NULL) gets where the data landed. */
UNVME_API int unvme_zone_append_sync(struct unvme_ns *ns, struct unvme_qpair *qp, const void *buf,
				     uint64_t zslba, uint32_t nlb, uint64_t *lba);
/* The LBA a successful Zone Append completion reports (DW1:DW0). */
static inline uint64_t unvme_cpl_lba(const struct nvme_cqe *cpl)
{
	return (uint64_t)cpl->dw1 << 32 | cpl->dw0;
}

/* ---- device ids ---- */
/* Resolves an alias to a device address (URI or BDF) into out. Returns 0, or -ENOENT with a
 * message naming where it looked. */
UNVME_API int unvme_devid_resolve(const char *devid, char *out, size_t outlen);
/* Lists the names known from the environment, the devices file and the built-ins: calls fn
 * once per (name, address). */
UNVME_API int unvme_devid_list(void (*fn)(void *arg, const char *name, const char *address),
			       void *arg);
/* Records name as an alias of address in the devices file ($UNVME_CONFIG, else the file in
 * use, else ~/.config/unvme/devices.json), replacing an alias of that name. `unvme connect
 * --alias` uses it. 0 or a negative errno with a message. */
UNVME_API int unvme_devid_save(const char *name, const char *address);
/* Removes an alias from the devices file; -ENOENT if it was not there. */
UNVME_API int unvme_devid_forget(const char *name);

#ifdef __cplusplus
}
#endif
#endif
