/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key-value wire formats: the standard NVMe Key Value Command Set 1.0 (CSI 01h) and the
 * Samsung KV SSD vendor protocol that the uNVMe 2.0 SDK speaks (opcodes 80h..B3h, statuses
 * with SCT 1 and the SDK's kv_result codes, vendor log pages C0h, CAh, D0h).
 */
#ifndef UNVME_SPEC_KV_H
#define UNVME_SPEC_KV_H

#include <stdint.h>

#include "cmd.h"
#include "status.h"

/* ---- NVMe Key Value Command Set 1.0 ---- */

enum nvme_kv_opcode {
	NVME_KV_FLUSH    = 0x00,
	NVME_KV_STORE    = 0x01,
	NVME_KV_RETRIEVE = 0x02,
	NVME_KV_LIST     = 0x06,
	NVME_KV_DELETE   = 0x10,
	NVME_KV_EXIST    = 0x14,
};

#define NVME_KV_MAX_KEY      16u         /* keys are 1..16 bytes: CDW2-3 and CDW14-15 */
#define NVME_KV_STORE_MUST_EXIST     (1u << 0)  /* CDW11 option bit 0 */
#define NVME_KV_STORE_MUST_NOT_EXIST (1u << 1)  /* CDW11 option bit 1 */

/* Status codes of the KV command set (SCT 0, generic); 85h..89h are in status.h. */
enum nvme_kv_status {
	NVME_SC_KV_CAPACITY_EXCEEDED = 0x81,
	NVME_SC_KV_NS_NOT_READY      = 0x82,
	NVME_SC_KV_RESV_CONFLICT     = 0x83,
	NVME_SC_KV_FORMAT_IN_PROGRESS = 0x84,
};

/* KV Format data structure: 16 bytes, one per format in Identify Namespace. */
struct nvme_kv_format {
	uint16_t mkl;      /* maximum key length in bytes */
	uint8_t  rsvd2;
	uint8_t  rp;       /* bits 1:0 relative performance, 0 = best */
	uint32_t mvl;      /* maximum value length in bytes */
	uint32_t mnk;      /* maximum number of keys, 0 = no limit reported */
	uint8_t  rsvd12[4];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_kv_format) == 16, "KV format is 16 bytes");

/* I/O Command Set specific Identify Namespace for the KV set (CNS 05h, CSI 01h). Sizes are
 * in bytes: a KV namespace has no logical blocks. */
struct nvme_id_ns_kv {
	uint64_t nsze;        /* bytes 0..7: namespace size (bytes) */
	uint8_t  rsvd8[8];
	uint64_t nuse;        /* bytes 16..23: bytes in use */
	uint8_t  nsfeat;      /* byte 24 */
	uint8_t  nkvf;        /* byte 25: number of KV formats, 0's based */
	uint8_t  nmic;        /* byte 26 */
	uint8_t  rescap;      /* byte 27 */
	uint8_t  fpi;         /* byte 28 */
	uint8_t  kvfc;        /* byte 29: KV format capabilities */
	uint8_t  rsvd30[2];
	uint32_t novg;        /* bytes 32..35: optimal value granularity (bytes) */
	uint32_t anagrpid;    /* bytes 36..39 */
	uint8_t  rsvd40[3];
	uint8_t  nsattr;      /* byte 43 */
	uint16_t nvmsetid;    /* bytes 44..45 */
	uint16_t endgid;      /* bytes 46..47 */
	uint8_t  nguid[16];   /* bytes 48..63 */
	uint8_t  eui64[8];    /* bytes 64..71 */
	struct nvme_kv_format kvf[16]; /* bytes 72..327 */
	uint8_t  rsvd328[3512];
	uint8_t  vs[256];     /* bytes 3840..4095 */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ns_kv) == 4096, "KV Identify Namespace is 4096 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_kv, nuse) == 16, "NUSE at byte 16");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_kv, novg) == 32, "NOVG at byte 32");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_kv, nguid) == 48, "NGUID at byte 48");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns_kv, kvf) == 72, "KV formats at byte 72");

/* ---- Samsung KV SSD vendor protocol (what the uNVMe 2.0 SDK sends) ---- */

enum nvme_kvv_opcode {
	NVME_KVV_STORE       = 0x81,
	NVME_KVV_APPEND      = 0x83, /* not supported: Invalid Command Opcode */
	NVME_KVV_RETRIEVE    = 0x90,
	NVME_KVV_DELETE      = 0xa1,
	NVME_KVV_ITER_REQ    = 0xb1, /* open / close */
	NVME_KVV_ITER_READ   = 0xb2,
	NVME_KVV_EXIST       = 0xb3,
};

/*
 * Field layout:
 *  NSID        keyspace id 0 or 1 (0 for iterate read and close)
 *  CDW4-5      value offset in bytes (the MPTR field), a multiple of NVME_KVV_OFFSET_ALIGN
 *  CDW6-9      value PRP1/PRP2
 *  CDW10       value (or buffer) length in dwords
 *  CDW11       7:0 key length - 1, 15:8 option, 17:16 pad bytes in the last value dword
 *  CDW12-15    the key when it is at most 16 bytes, else PRP1 (CDW12-13) / PRP2 (CDW14-15)
 */
#define NVME_KVV_MIN_KEY        4u
#define NVME_KVV_MAX_KEY        255u
#define NVME_KVV_INLINE_KEY     16u
#define NVME_KVV_MAX_VALUE      (2u << 20)
#define NVME_KVV_OFFSET_ALIGN   512u
#define NVME_KVV_NR_KEYSPACES   2u
#define NVME_KVV_ITER_BUF       (32u * 1024)  /* iterate read buffer, exactly */
#define NVME_KVV_MAX_ITERATORS  16u

#define NVME_KVV_CDW11(klen, opt, pad)                                               \
	(((uint32_t)((klen) - 1u) & 0xffu) | ((uint32_t)(opt) & 0xffu) << 8 |          \
	 ((uint32_t)(pad) & 3u) << 16)

#define NVME_KVV_STORE_IDEMPOTENT 0x02u  /* store option: fail with 80h if the key exists */

/* Iterate request options (CDW11 15:8). */
#define NVME_KVV_ITER_OPEN_KEY        0x05u  /* 0x01 | 2 << KV_KEY_ITERATE */
#define NVME_KVV_ITER_OPEN_KEY_DELETE 0x11u  /* 0x01 | 2 << KV_KEY_ITERATE_WITH_DELETE */
/* Key with value (KV_KEY_ITERATE_WITH_RETRIEVE, which the original's non-general firmware
 * served): each read returns one pair, the key at byte 0 of the buffer and the value from
 * byte NVME_KVV_ITER_VALUE_OFFSET, completion DW0 = key length << 24 | value bytes. */
#define NVME_KVV_ITER_OPEN_KEY_VALUE  0x09u  /* 0x01 | 2 << KV_KEY_ITERATE_WITH_RETRIEVE */
#define NVME_KVV_ITER_VALUE_OFFSET    512u
#define NVME_KVV_ITER_CLOSE           0x02u

/* Vendor statuses: SCT 1 (command specific), SC = the SDK's kv_result code. */
enum nvme_kvv_status {
	NVME_KVV_SC_INVALID_VALUE_SIZE     = 0x01,
	NVME_KVV_SC_INVALID_VALUE_OFFSET   = 0x02,
	NVME_KVV_SC_INVALID_KEY_SIZE       = 0x03,
	NVME_KVV_SC_INVALID_OPTION         = 0x04,
	NVME_KVV_SC_INVALID_KEYSPACE       = 0x05,
	NVME_KVV_SC_MISALIGNED_VALUE_SIZE  = 0x08,
	NVME_KVV_SC_MISALIGNED_VALUE_OFFSET = 0x09,
	NVME_KVV_SC_MISALIGNED_KEY_SIZE    = 0x0a,
	NVME_KVV_SC_KEY_NOT_EXIST          = 0x10,
	NVME_KVV_SC_UNRECOVERED            = 0x11,
	NVME_KVV_SC_CAPACITY_EXCEEDED      = 0x12,
	NVME_KVV_SC_IDEMPOTENT_STORE_FAIL  = 0x80,
	NVME_KVV_SC_MAX_VALUE_SIZE         = 0x81,
	NVME_KVV_SC_ITER_FAIL              = 0x90,
	NVME_KVV_SC_ITER_NO_HANDLE         = 0x91,
	NVME_KVV_SC_ITER_ALREADY_OPEN      = 0x92,
	NVME_KVV_SC_ITER_EOF               = 0x93,
	NVME_KVV_SC_ITER_REQUEST_FAIL      = 0x94,
	NVME_KVV_SC_ITER_TCG_LOCKED        = 0x95,
	NVME_KVV_SC_ITER_ERROR             = 0x96,
};

/* Vendor log pages (Get Log Page, any NSID; only on a controller with a KV namespace). */
enum nvme_kvv_log {
	NVME_KVV_LOG_CAPACITY = 0xc0,
	NVME_KVV_LOG_WAF      = 0xca,
	NVME_KVV_LOG_ITER     = 0xd0,
};

/* Log C0h: capacity and utilization of the first KV namespace (512 bytes). */
struct nvme_kvv_log_capacity {
	uint64_t capacity;      /* bytes */
	uint64_t used;          /* bytes, live keys and values with their record overhead */
	uint64_t nr_keys;       /* both keyspaces */
	uint32_t utilization;   /* used / capacity in 1/100 percent, 0..10000 */
	uint32_t rsvd28;
	uint64_t nr_keys_ks[2]; /* per keyspace */
	/* Emulator extension (reserved, zero, on other devices): what the recovery of a
	 * file-backed namespace's log found when it was opened, damaged spans skipped and their
	 * bytes (copied to "<log>.damaged"). */
	uint64_t damaged_spans;
	uint64_t damaged_bytes;
	uint8_t  rsvd64[448];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_kvv_log_capacity) == 512, "log C0h is 512 bytes");

/* Log CAh: write amplification (512 bytes); WAF at byte 256 as the original placed it. */
struct nvme_kvv_log_waf {
	uint64_t host_bytes;    /* key + value bytes the host stored */
	uint64_t media_bytes;   /* bytes written to the medium, compaction included */
	uint64_t compactions;   /* compaction passes */
	uint8_t  rsvd24[232];
	uint32_t waf;           /* byte 256: media / host x 10 (10 = 1.0; 10 when nothing stored) */
	uint8_t  rsvd260[252];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_kvv_log_waf) == 512, "log CAh is 512 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_kvv_log_waf, waf) == 256, "WAF at byte 256");

/* Log D0h: one 16-byte entry per iterator handle, 16 handles (256 bytes). The prefix and
 * bitmask are the values the application passed (kv_iterate_open), not the big-endian
 * CDW12/CDW13 images. */
struct nvme_kvv_iter_info {
	uint8_t  handle;        /* 1..16 */
	uint8_t  status;        /* 1 open, 0 closed */
	uint8_t  type;          /* 1 key only, 3 key with delete */
	uint8_t  keyspace;
	uint32_t prefix;
	uint32_t bitmask;
	uint8_t  is_eof;
	uint8_t  rsvd[3];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_kvv_iter_info) == 16, "iterator info entry is 16 bytes");

static inline int nvme_kvv_opcode(uint8_t opc)
{
	return opc == NVME_KVV_STORE || opc == NVME_KVV_APPEND || opc == NVME_KVV_RETRIEVE ||
	       opc == NVME_KVV_DELETE || opc == NVME_KVV_ITER_REQ || opc == NVME_KVV_ITER_READ ||
	       opc == NVME_KVV_EXIST;
}

#endif
