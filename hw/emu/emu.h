/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the emulated controller: the contract between the controller core (registers,
 * queues, admin commands, PRPs, engine: the .c files of hw/emu) and its namespaces (hw/emu/ns).
 */
#ifndef UNVME_EMU_H
#define UNVME_EMU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"

struct emu_ctrl;
struct emu_ns;

#define EMU_MAX_NS          32
#define EMU_PAGE_SIZE       4096u          /* CAP.MPSMIN = CAP.MPSMAX = 0: 4 KiB pages */
#define EMU_MDTS_BYTES      (2u << 20)     /* largest transfer: 2 MiB (KV values up to 2 MiB) */
#define EMU_XFER_MAX_SEGS   (EMU_MDTS_BYTES / EMU_PAGE_SIZE + 1)

/* ---- device description (parsed from the emu:// URI) ---- */

enum emu_ns_kind {
	EMU_NS_MEM,   /* data in anonymous memory, lost when the device is destroyed */
	EMU_NS_FILE,  /* data in a file; survives the process; Flush makes it durable */
	EMU_NS_NULL,  /* moves no data: reads leave the buffer untouched, writes are dropped */
	EMU_NS_KV,    /* key-value namespace (reserved for the KV command set) */
	EMU_NS_ZNS,   /* zoned namespace (ZNS command set): memory, or a file when a path is given */
	EMU_NS_EXT,   /* blocks in media the device's creator provides (emu_device_create_media) */
};
struct emu_media;

/* Zone geometry and limits of a zoned namespace (ns=zns,...: see emu_params.c). */
struct emu_zns_params {
	uint64_t zone_bytes;   /* zone size */
	uint64_t cap_bytes;    /* zone capacity: writable bytes of each zone (<= zone size) */
	uint32_t max_open;     /* open resources, 1's based; 0 = no limit */
	uint32_t max_active;   /* active resources, 1's based; 0 = no limit */
	uint32_t zasl_bytes;   /* the controller's Zone Append Size Limit (0: MDTS), copied here */
};

struct emu_ns_params {
	enum emu_ns_kind kind;
	uint64_t size_bytes;       /* 0 with EMU_NS_FILE: take the existing file's size */
	uint32_t lba_size;         /* 512 or 4096 */
	char     path[PATH_MAX];   /* EMU_NS_FILE (and file-backed KV and ZNS) */
	struct emu_zns_params zns; /* EMU_NS_ZNS */
	bool     ext;              /* EMU_NS_EXT, or EMU_NS_KV with an external engine (kvext) */
	const struct emu_media *media; /* for ext: set by emu_device_create_media */
	uint8_t  nguid[16];        /* filled by the controller: unique per device and namespace */
	uint8_t  eui64[8];
};

enum emu_mode {
	EMU_MODE_INLINE,  /* the SQ is processed inside the doorbell write, on the host's thread */
	EMU_MODE_THREAD,  /* an engine thread polls doorbells like hardware */
};

struct emu_latency_model {
	uint64_t read_ns;    /* per read command */
	uint64_t write_ns;   /* per write command */
	uint32_t units;      /* parallel internal units (0 = unlimited) */
	uint64_t bw_bytes_per_s; /* bandwidth cap (0 = none) */
};

struct emu_params {
	char     name[64];           /* for messages; from the URI's host part */
	char     serial[21];
	char     model[41];
	char     firmware[9];        /* factory revision in slot 1 */
	enum emu_mode mode;
	int      engine_cpu;         /* CPU to pin the engine thread to, -1 = none */
	struct emu_latency_model lat;
	uint32_t max_queues;         /* I/O queue pairs the controller can grant */
	uint32_t mqes;               /* max queue entries (1's based) */
	char     state_path[PATH_MAX]; /* non-volatile controller state; "" = none (volatile) */
	uint32_t nr_ns;
	struct emu_ns_params ns[EMU_MAX_NS];
	uint32_t engine;             /* thread mode: index of the shared engine thread */
	uint32_t dstrd;              /* CAP.DSTRD: doorbell stride 4 << dstrd bytes */
	uint32_t zasl_bytes;         /* Zone Append Size Limit (0: MDTS) */
};

/* Parses an emu:// URI; on failure returns -EINVAL and names the bad part in err. */
int emu_params_parse(const char *uri, struct emu_params *p, char *err, size_t errlen);

/* ---- host memory access through the IOMMU (controller core) ---- */

struct emu_sg {
	uint8_t *addr;
	uint32_t len;
};

struct emu_xfer {
	uint32_t nseg;
	uint32_t len;
	struct emu_sg seg[EMU_XFER_MAX_SEGS];
};

/*
 * Resolves the PRP1/PRP2 data pointer of cmd for a transfer of len bytes into host memory
 * segments, applying every PRP rule (offsets, page crossings, PRP lists and their chaining).
 * Returns 0 or a status word (NVME_CQE_STATUS form): PRP Offset Invalid, Data Transfer Error
 * for an address outside the IOMMU mappings, Invalid Field for SGLs (PSDT != 0).
 */
uint16_t emu_xfer_map(struct emu_ctrl *c, const struct nvme_sqe *cmd, uint32_t len,
		      struct emu_xfer *x);
/* Copies len bytes between a flat buffer and the transfer's segments. */
void emu_xfer_to_host(const struct emu_xfer *x, const void *src, uint32_t len);
void emu_xfer_from_host(const struct emu_xfer *x, void *dst, uint32_t len);

/* ---- namespaces (hw/emu/ns) ---- */

/* Counters of one submission queue; the SMART log sums them over all queues. */
struct emu_io_stats {
	uint64_t read_cmds;
	uint64_t write_cmds;
	uint64_t bytes_read;
	uint64_t bytes_written;
};

/* What the controller hands a namespace with each I/O command. */
struct emu_iommu;
struct emu_iommu_tlb;
struct emu_io_ctx {
	struct emu_ctrl *ctrl;       /* for emu_xfer_map */
	struct emu_iommu *iommu;     /* the controller's IOMMU: one-page transfers are mapped
				      * inline (nvm_fast.h); NULL: always through emu_xfer_map */
	struct emu_iommu_tlb *tlb;   /* the fetch loop's last region (emu_iommu.h), for
				      * emu_nvm_rw_inline */
	struct emu_io_stats *stats;  /* counters of the submitting queue */
	uint32_t dw0;                /* out: completion DW0 */
	uint32_t dw1;                /* out: completion DW1 (Zone Append: LBA bits 63:32) */
	uint64_t err_lba;            /* out: the LBA to report in the error log, if any */
	/* out: the command changed a store that promises durability at completion (a KV
	 * namespace with a file or a host engine behind it) without making it durable yet; the
	 * controller makes the namespace durable (emu_ns_sync) once for a whole batch of such
	 * commands and only then posts their completions (group commit, emu_io.c) */
	struct emu_ns *commit;
};

int emu_ns_create(const struct emu_ns_params *p, uint32_t nsid, struct emu_ns **out, char *err,
		  size_t errlen);
void emu_ns_destroy(struct emu_ns *ns);

uint8_t  emu_ns_csi(const struct emu_ns *ns);
uint32_t emu_ns_lba_size(const struct emu_ns *ns);
uint64_t emu_ns_nlbas(const struct emu_ns *ns);

/* Identify Namespace (CNS 00h) for this namespace. */
void emu_ns_identify(const struct emu_ns *ns, struct nvme_id_ns *out);
/* I/O command set specific Identify Namespace (CNS 05h): a status if csi is not the namespace's. */
uint16_t emu_ns_identify_csi(const struct emu_ns *ns, uint8_t csi, void *out4096);
/* Namespace identification descriptors (CNS 03h) */
void emu_ns_ids(const struct emu_ns *ns, uint8_t nguid[16], uint8_t eui64[8]);

/* Format NVM on this namespace: lbaf index into the Identify formats, ses per the spec. */
uint16_t emu_ns_format(struct emu_ns *ns, uint8_t lbaf, uint8_t ses);
/* Volatile write cache on or off (Set Features 06h); off makes every write durable. */
void emu_ns_set_write_cache(struct emu_ns *ns, bool enabled);
/* Makes all written data durable (controller shutdown). Returns 0 or -errno. */
int emu_ns_sync(struct emu_ns *ns);
/* fsync of the directory holding path: makes a file's creation or rename durable. 0 or -errno. */
int emu_sync_parent_dir(const char *path);

/* Controller reset: the namespace drops its volatile state (a KV namespace's iterators). */
void emu_ns_reset(struct emu_ns *ns);
/* Controller enable: all_sets when CC.CSS selects the I/O command set profile (110b), so a
 * zoned namespace takes Zone Management and Zone Append; with CC.CSS = NVM (000b) it takes
 * only the NVM commands (still under the zone rules). */
void emu_ns_set_command_sets(struct emu_ns *ns, bool all_sets);
/* Zoned namespaces: the controller makes the zone holding slba read only (fault injection
 * for worn media) and lists it in the Changed Zone List; Invalid Field on other namespaces. */
uint16_t emu_ns_zone_read_only(struct emu_ns *ns, uint64_t slba);
/* The Changed Zone List log page (BFh) of this namespace; clear empties it (RAE = 0). */
uint16_t emu_ns_changed_zones(struct emu_ns *ns, struct nvme_changed_zone_log *out, bool clear);
/* I/O Command Set specific Identify Controller for ZNS (CNS 06h, CSI 02h). */
void emu_zns_identify_ctrl(uint32_t zasl_bytes, struct nvme_id_ctrl_zns *out);

/* A KV namespace's vendor log page (C0h, CAh, D0h: unvme/spec/kv.h) into out[size];
 * Invalid Log Page for other namespaces or pages. */
uint16_t emu_ns_kv_log(struct emu_ns *ns, uint8_t lid, void *out, uint32_t size);

/*
 * Executes one I/O command addressed to this namespace (the controller has already checked
 * the NSID). Returns 0 or a status word (NVME_CQE_STATUS form, with DNR where a retry cannot
 * help). Safe to call from several threads at once for different queues.
 */
uint16_t emu_ns_execute(struct emu_ns *ns, const struct nvme_sqe *cmd, struct emu_io_ctx *io);

#endif
