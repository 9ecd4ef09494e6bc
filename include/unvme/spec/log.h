/* SPDX-License-Identifier: BSD-3-Clause */
/* Log pages (NVMe Base 2.0 section 5.16.1). */
#ifndef UNVME_SPEC_LOG_H
#define UNVME_SPEC_LOG_H

#include <stdint.h>
#include "cmd.h"

enum nvme_log_id {
	NVME_LOG_ERROR         = 0x01,
	NVME_LOG_SMART         = 0x02,
	NVME_LOG_FW_SLOT       = 0x03,
	NVME_LOG_CHANGED_NS    = 0x04,
	NVME_LOG_CMD_EFFECTS   = 0x05,
	NVME_LOG_DEV_SELF_TEST = 0x06,
	/* vendor specific range: 0xc0..0xff */
	NVME_LOG_SANITIZE      = 0x81,
	NVME_LOG_VENDOR_FIRST  = 0xc0,
};

/* Changed Namespace List log (04h): the NSIDs whose Identify Namespace data changed since the
 * log was last read, zero-terminated; more than fit: the first entry is FFFFFFFFh. */
#define NVME_CHANGED_NS_MAX 1024u
struct nvme_changed_ns_log {
	uint32_t nsid[NVME_CHANGED_NS_MAX];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_changed_ns_log) == 4096, "Changed Namespace List is 4 KiB");

/* Namespace Attribute Changed notice (Asynchronous Event type 2, information 00h, log 04h):
 * enabled by Asynchronous Event Configuration bit 8, announced by Identify OAES bit 8. */
#define NVME_AEN_INFO_NS_ATTR 0x00u
#define NVME_AEC_NS_ATTR      (1u << 8)
#define NVME_OAES_NS_ATTR     (1u << 8)

/* Error Information log entry, 64 bytes */
struct nvme_error_log {
	uint64_t error_count;  /* unique, increasing; 0 = entry is empty */
	uint16_t sqid;
	uint16_t cid;
	uint16_t status;       /* bit 0 phase tag, bits 15:1 status field, as in the CQE */
	uint16_t param_loc;    /* bits 7:0 byte, bits 10:8 bit in the command of the error */
	uint64_t lba;
	uint32_t nsid;
	uint8_t  vs;
	uint8_t  trtype;
	uint8_t  rsvd30[2];
	uint64_t csi;          /* command specific information */
	uint16_t trtype_spec;
	uint8_t  rsvd42[22];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_error_log) == 64, "error log entry is 64 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, lba) == 16, "LBA at 16");
NVME_STATIC_ASSERT(offsetof(struct nvme_error_log, csi) == 32, "command specific info at 32");

/* SMART / Health Information, 512 bytes. 128-bit counters are two little-endian u64 halves. */
struct nvme_u128 {
	uint64_t lo;
	uint64_t hi;
};

struct nvme_smart_log {
	uint8_t  critical_warning;
	uint16_t temperature;          /* kelvin, unaligned on the wire */
	uint8_t  avail_spare;
	uint8_t  spare_thresh;
	uint8_t  percent_used;
	uint8_t  endgrp_crit_warning;
	uint8_t  rsvd7[25];
	struct nvme_u128 data_units_read;      /* thousands of 512-byte units, rounded up */
	struct nvme_u128 data_units_written;
	struct nvme_u128 host_reads;           /* read commands completed */
	struct nvme_u128 host_writes;          /* write commands completed */
	struct nvme_u128 ctrl_busy_time;       /* minutes */
	struct nvme_u128 power_cycles;
	struct nvme_u128 power_on_hours;
	struct nvme_u128 unsafe_shutdowns;
	struct nvme_u128 media_errors;
	struct nvme_u128 num_err_log_entries;
	uint32_t warning_temp_time;
	uint32_t crit_comp_time;
	uint16_t temp_sensor[8];
	uint32_t thm_temp1_trans_count;
	uint32_t thm_temp2_trans_count;
	uint32_t thm_temp1_total_time;
	uint32_t thm_temp2_total_time;
	uint8_t  rsvd232[280];
} __attribute__((packed));
NVME_STATIC_ASSERT(sizeof(struct nvme_smart_log) == 512, "SMART log is 512 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, data_units_read) == 32, "data units read at 32");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, host_reads) == 64, "host reads at 64");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, num_err_log_entries) == 176, "error entries at 176");
NVME_STATIC_ASSERT(offsetof(struct nvme_smart_log, temp_sensor) == 200, "temperature sensors at 200");

#define NVME_SMART_CW_SPARE     (1u << 0)
#define NVME_SMART_CW_TEMP      (1u << 1)
#define NVME_SMART_CW_RELIABLE  (1u << 2)
#define NVME_SMART_CW_READONLY  (1u << 3)
#define NVME_SMART_CW_VOLATILE  (1u << 4)

/* Firmware Slot Information, 512 bytes */
struct nvme_fw_slot_log {
	uint8_t  afi;        /* bits 2:0 active slot, bits 6:4 slot activated at next reset */
	uint8_t  rsvd1[7];
	char     frs[7][8];  /* revision in slots 1..7, ASCII, space padded; zero = empty */
	uint8_t  rsvd64[448];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_fw_slot_log) == 512, "firmware slot log is 512 bytes");
#define NVME_FW_AFI_ACTIVE(afi) ((afi) & 0x7u)
#define NVME_FW_AFI_NEXT(afi)   (((afi) >> 4) & 0x7u)

/* Commands Supported and Effects, 4096 bytes */
struct nvme_cmd_effects_log {
	uint32_t acs[256];  /* admin commands, bit 0 CSUPP */
	uint32_t iocs[256]; /* I/O commands */
	uint8_t  rsvd2048[2048];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_cmd_effects_log) == 4096, "command effects log is 4096 bytes");
/* Device Self-test log (06h), 564 bytes: the operation in progress and the last 20 results */
struct nvme_self_test_result {
	uint8_t  dsts;      /* bits 3:0 result (Fh: entry not used), bits 7:4 self-test code */
	uint8_t  seg;       /* segment number that failed */
	uint8_t  vdi;       /* valid diagnostic information: 0 NSID, 1 FLBA, 2 SCT, 3 SC */
	uint8_t  rsvd3;
	uint64_t poh;       /* power on hours */
	uint32_t nsid;
	uint64_t flba;
	uint8_t  sct;
	uint8_t  sc;
	uint8_t  vs[2];
} __attribute__((packed));
NVME_STATIC_ASSERT(sizeof(struct nvme_self_test_result) == 28, "self-test result is 28 bytes");
struct nvme_self_test_log {
	uint8_t  current_operation; /* bits 3:0: 0 none, 1 short, 2 extended, Eh vendor */
	uint8_t  completion;        /* bits 6:0 percent done */
	uint8_t  rsvd2[2];
	struct nvme_self_test_result result[20];
} __attribute__((packed));
NVME_STATIC_ASSERT(sizeof(struct nvme_self_test_log) == 564, "self-test log is 564 bytes");

/* Sanitize Status log (81h), 512 bytes */
struct nvme_sanitize_log {
	uint16_t sprog;   /* progress, numerator of n/65536 */
	uint16_t sstat;   /* bits 2:0 status of the most recent sanitize */
	uint32_t scdw10;  /* CDW10 of that Sanitize command */
	uint32_t eto;     /* estimated time for overwrite, s (FFFFFFFFh: not reported) */
	uint32_t etbe;    /* ... for block erase */
	uint32_t etce;    /* ... for crypto erase */
	uint32_t etond;   /* the same with no-deallocate */
	uint32_t etbend;
	uint32_t etcend;
	uint8_t  rsvd32[480];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_sanitize_log) == 512, "sanitize log is 512 bytes");

#define NVME_CMD_EFFECTS_CSUPP (1u << 0)
#define NVME_CMD_EFFECTS_LBCC  (1u << 1)
#define NVME_CMD_EFFECTS_NCC   (1u << 2)
#define NVME_CMD_EFFECTS_NIC   (1u << 3)
#define NVME_CMD_EFFECTS_CCC   (1u << 4)

#endif
