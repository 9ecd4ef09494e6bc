/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Printers for every NVMe structure the library can hold, as text (nvme-cli style, one
 * "field : value" per line) or as JSON (one object, field names in lower case as in the spec).
 * JSON output is produced with json-c and is always a single valid document.
 */
#ifndef UNVME_PRINT_H
#define UNVME_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "spec.h"
#include "unvme.h"

#ifdef __cplusplus
extern "C" {
#endif

enum unvme_fmt {
	UNVME_FMT_TEXT = 0,
	UNVME_FMT_JSON = 1,
};

UNVME_API void unvme_print_id_ctrl(FILE *f, const struct nvme_id_ctrl *id, enum unvme_fmt fmt);
UNVME_API void unvme_print_id_ns(FILE *f, const struct nvme_id_ns *id, enum unvme_fmt fmt);
UNVME_API void unvme_print_id_ns_nvm(FILE *f, const struct nvme_id_ns_nvm *id, enum unvme_fmt fmt);
UNVME_API void unvme_print_id_ctrl_nvm(FILE *f, const struct nvme_id_ctrl_nvm *id, enum unvme_fmt fmt);
/* Zoned Namespace Command Set: ZNS Identify Controller (CNS 06h) and Namespace (CNS 05h; ns,
 * the namespace's Identify Namespace, may be NULL: it says how many formats there are and which
 * is in use), Report Zones data (len bytes as returned) and the Changed Zone List log (BFh). */
UNVME_API void unvme_print_id_ctrl_zns(FILE *f, const struct nvme_id_ctrl_zns *id, enum unvme_fmt fmt);
UNVME_API void unvme_print_id_ns_zns(FILE *f, const struct nvme_id_ns_zns *id,
				     const struct nvme_id_ns *ns, enum unvme_fmt fmt);
UNVME_API void unvme_print_zone_report(FILE *f, const void *buf, size_t len, enum unvme_fmt fmt);
UNVME_API void unvme_print_changed_zones(FILE *f, const struct nvme_changed_zone_log *log,
					 enum unvme_fmt fmt);
/* list: the 1024-entry Active Namespace ID list (zero-terminated) */
UNVME_API void unvme_print_ns_list(FILE *f, const uint32_t *list, enum unvme_fmt fmt);
/* buf: the 4096-byte Namespace Identification Descriptor list */
UNVME_API void unvme_print_ns_desc_list(FILE *f, const void *buf, enum unvme_fmt fmt);
UNVME_API void unvme_print_smart_log(FILE *f, const struct nvme_smart_log *log, enum unvme_fmt fmt);
/* Prints the n entries; empty entries (error_count 0) are skipped. */
UNVME_API void unvme_print_error_log(FILE *f, const struct nvme_error_log *log, unsigned n,
				     enum unvme_fmt fmt);
UNVME_API void unvme_print_fw_slot_log(FILE *f, const struct nvme_fw_slot_log *log, enum unvme_fmt fmt);
UNVME_API void unvme_print_cmd_effects_log(FILE *f, const struct nvme_cmd_effects_log *log,
					   enum unvme_fmt fmt);
UNVME_API void unvme_print_regs(FILE *f, const struct nvme_regs_snapshot *regs, enum unvme_fmt fmt);
UNVME_API void unvme_print_sqe(FILE *f, const struct nvme_sqe *sqe, enum unvme_fmt fmt);
UNVME_API void unvme_print_cqe(FILE *f, const struct nvme_cqe *cqe, enum unvme_fmt fmt);
/* Any status in the library's (SCT << 8) | SC form, with its name and type. */
UNVME_API void unvme_print_status(FILE *f, int status, uint8_t csi, enum unvme_fmt fmt);
/* Raw bytes: a hex dump as text, {"length":n,"data":"<hex>"} as JSON. */
UNVME_API void unvme_print_hex(FILE *f, const void *buf, size_t len, enum unvme_fmt fmt);

#ifdef __cplusplus
}
#endif
#endif
