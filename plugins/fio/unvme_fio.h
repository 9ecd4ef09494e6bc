/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The uNVMe fio ioengine: pieces shared by its files.
 *
 *   engine.c   the ioengine ops: setup, init, queue / commit / getevents / event, cleanup,
 *              DMA memory hooks; the only file that touches fio's thread and io_u structures
 *   options.c  the engine options (json_path, ks) and the job checks (thread=1, bs, ...)
 *   devices.c  devices shared by the jobs of one fio run: opened once, reference counted;
 *              filename parsing; jobs to cores (core_mask)
 *   config.c   the SDK configuration file (json_path): validated by the KV SDK's own loader
 *   kv.c       the KV commands (Samsung vendor protocol) and the key of an offset
 *   zones.c    zonemode=zbd on zoned namespaces: zone model, report zones, reset, open limit
 *
 * devices.c, config.c and kv.c do not include fio's headers.
 */
#ifndef UNVME_FIO_H
#define UNVME_FIO_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <unvme/unvme.h>

#define UFIO_MAX_CORES 1024

enum ufio_kind { UFIO_BLOCK, UFIO_KV };

/* One device of the configuration (or opened with defaults), shared by every job using it. */
struct ufio_dev {
	char *name;            /* as the job named it (after fio's unescaping) */
	char *addr;            /* resolved address: emu URI or BDF */
	struct unvme_ctrlr *ctrlr;
	struct unvme_ns *ns;
	enum ufio_kind kind;
	uint32_t lba_size;      /* block: LBA size; KV: 512 (the sector size it reports) */
	uint64_t capacity;      /* bytes */
	uint32_t max_xfer;      /* largest command in bytes */
	uint32_t max_value;     /* KV: largest value (2 MiB or max_xfer) */
	uint32_t queue_depth;   /* the configuration's queue_depth */
	uint16_t cores[UFIO_MAX_CORES]; /* of core_mask, increasing */
	unsigned ncores;
	unsigned users;         /* jobs that were given a core of this device (ever) */
	unsigned refs;          /* jobs holding it now */
	bool warned_share;
	uint64_t core_mask;     /* as configured (0: every CPU the process may use) */
};

/* The configuration of a run: from json_path, or defaults when there is none. */
struct ufio_config {
	char *path;             /* NULL: defaults */
	int ndev;
	char *dev_id[64];       /* whole ids, as written in the file */
	uint64_t core_mask[64];
	uint32_t queue_depth[64];
	bool lba_mode;          /* ssd_type "lba" */
};

/* config.c: loads and checks path; on failure returns -1 with a one-line reason in err. */
int ufio_config_load(const char *path, struct ufio_config *cfg, char *err, size_t errlen);
void ufio_config_free(struct ufio_config *cfg);

/* devices.c. All of them take the registry's lock; err receives one line on failure. */
/* Turns the original's dotted PCI address (0000.02.00.0) into 0000:02:00.0; others unchanged. */
void ufio_name_normalise(const char *in, char *out, size_t outlen);
/* Finds or opens the device a job names. cfg_path NULL: device ids open with defaults. */
struct ufio_dev *ufio_dev_get(const char *json_path, const char *name, char *err, size_t errlen);
/* Gives a job a core of dev (round robin over core_mask). *shared is set when the job has to
 * share the core with an earlier job (numjobs over the number of queues of core_mask). */
int ufio_dev_assign_core(struct ufio_dev *dev, bool *shared, unsigned *slot);
void ufio_dev_put(struct ufio_dev *dev);

/* kv.c */
/* Key of an offset: ks bytes, zero, with the offset big-endian in the last min(ks, 8). */
void ufio_kv_key(uint8_t *key, uint32_t ks, uint64_t offset);
/* Largest offset whose key is unique with ks bytes (UINT64_MAX for ks >= 8). */
uint64_t ufio_kv_key_limit(uint32_t ks);
/* The vendor commands. key_dma: DMA copy of the key when ks > 16 (else ignored). */
void ufio_kv_store_cmd(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks, const void *key_dma,
		       uint32_t len);
void ufio_kv_retrieve_cmd(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks,
			  const void *key_dma, uint32_t len);
void ufio_kv_delete_cmd(struct nvme_sqe *cmd, const uint8_t *key, uint32_t ks, const void *key_dma);

/* Names of the vendor statuses (SCT 1), which unvme_status_str names as NVM ones; else NULL. */
const char *ufio_kv_status_str(int status);

#endif
