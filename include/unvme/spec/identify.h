/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Identify data structures (NVMe Base 2.0 section 5.17.2; NVM Command Set 1.0 section 4.1.5).
 * Multi-byte fields are little endian on the wire; this project runs on little-endian hosts
 * only (checked at build time), so fields are plain integers.
 */
#ifndef UNVME_SPEC_IDENTIFY_H
#define UNVME_SPEC_IDENTIFY_H

#include <stdint.h>
#include "cmd.h"

/* Power State Descriptor, 32 bytes */
struct nvme_psd {
	uint16_t mp;        /* maximum power, centiwatts (or 0.0001 W if mxps) */
	uint8_t  rsvd2;
	uint8_t  flags;     /* bit 0 MXPS, bit 1 NOPS */
	uint32_t enlat;     /* entry latency, us */
	uint32_t exlat;     /* exit latency, us */
	uint8_t  rrt, rrl, rwt, rwl;
	uint16_t idlp;
	uint8_t  ips;
	uint8_t  rsvd19;
	uint16_t actp;
	uint8_t  apws;
	uint8_t  rsvd23[9];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_psd) == 32, "power state descriptor is 32 bytes");

/* A limit the device reports as 2^n units of a page (MDTS, ZASL, the NVM set's size limits;
 * n is a byte, so up to 2^255): page << n in bytes, UINT64_MAX when that does not fit in 64
 * bits (no transfer comes near, so it is no limit). Never shifts by 64 or more. */
static inline uint64_t nvme_pow2_pages(uint64_t page, uint8_t n)
{
	unsigned lz = page ? (unsigned)__builtin_clzll(page) : 64u;
	return n <= lz && page ? page << n : UINT64_MAX;
}

/* Identify Controller data structure (CNS 01h), 4096 bytes */
struct nvme_id_ctrl {
	uint16_t vid;
	uint16_t ssvid;
	char     sn[20];
	char     mn[40];
	char     fr[8];
	uint8_t  rab;
	uint8_t  ieee[3];
	uint8_t  cmic;
	uint8_t  mdts;      /* max data transfer, 2^n units of CAP.MPSMIN; 0 = no limit */
	uint16_t cntlid;
	uint32_t ver;
	uint32_t rtd3r;
	uint32_t rtd3e;
	uint32_t oaes;
	uint32_t ctratt;
	uint16_t rrls;
	uint8_t  rsvd102[9];
	uint8_t  cntrltype; /* 1 I/O controller */
	uint8_t  fguid[16];
	uint16_t crdt1, crdt2, crdt3;
	uint8_t  rsvd134[106];
	uint8_t  nvmmi[16];
	/* admin command set attributes, byte 256 */
	uint16_t oacs;      /* bit 1 format, bit 2 fw download/commit, bit 3 ns mgmt */
	uint8_t  acl;       /* abort command limit, 0's based */
	uint8_t  aerl;
	uint8_t  frmw;      /* bit 0 slot 1 read-only, bits 3:1 number of slots, bit 4 activate w/o reset */
	uint8_t  lpa;       /* bit 1 command effects log, bit 2 extended data, bit 4 persistent event */
	uint8_t  elpe;      /* error log page entries, 0's based */
	uint8_t  npss;
	uint8_t  avscc;
	uint8_t  apsta;
	uint16_t wctemp;    /* kelvin */
	uint16_t cctemp;
	uint16_t mtfa;
	uint32_t hmpre;
	uint32_t hmmin;
	uint8_t  tnvmcap[16];
	uint8_t  unvmcap[16];
	uint32_t rpmbs;
	uint16_t edstt;
	uint8_t  dsto;
	uint8_t  fwug;      /* firmware update granularity, 4 KiB units; 0 = none given, ff = none */
	uint16_t kas;
	uint16_t hctma;
	uint16_t mntmt;
	uint16_t mxtmt;
	uint32_t sanicap;
	uint32_t hmminds;
	uint16_t hmmaxd;
	uint16_t nsetidmax;
	uint16_t endgidmax;
	uint8_t  anatt;
	uint8_t  anacap;
	uint32_t anagrpmax;
	uint32_t nanagrpid;
	uint32_t pels;
	uint16_t domainid;
	uint8_t  rsvd358[10];
	uint8_t  megcap[16];
	uint8_t  rsvd384[128];
	/* NVM command set attributes, byte 512 */
	uint8_t  sqes;      /* bits 3:0 required, 7:4 maximum (log2) */
	uint8_t  cqes;
	uint16_t maxcmd;
	uint32_t nn;        /* number of namespaces */
	uint16_t oncs;      /* bit 0 compare, 1 write uncorrectable, 2 DSM, 3 write zeroes, 4 save/select features */
	uint16_t fuses;
	uint8_t  fna;       /* bit 0 format applies to all namespaces, bit 1 secure erase to all, bit 2 crypto erase */
	uint8_t  vwc;       /* bit 0 volatile write cache present */
	uint16_t awun;
	uint16_t awupf;
	uint8_t  icsvscc;
	uint8_t  nwpc;
	uint16_t acwu;
	uint16_t cdfs;
	uint32_t sgls;
	uint32_t mnan;
	uint8_t  maxdna[16];
	uint32_t maxcna;
	uint8_t  rsvd564[204];
	char     subnqn[256];
	uint8_t  rsvd1024[768];
	uint8_t  nvmeof[256];
	struct nvme_psd psd[32];
	uint8_t  vs[1024];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ctrl) == 4096, "Identify Controller is 4096 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, mn) == 24, "MN at 24");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, fr) == 64, "FR at 64");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, mdts) == 77, "MDTS at 77");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, cntrltype) == 111, "CNTRLTYPE at 111");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, oacs) == 256, "OACS at 256");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, tnvmcap) == 280, "TNVMCAP at 280");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, pels) == 352, "PELS at 352");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, sqes) == 512, "SQES at 512");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, nn) == 516, "NN at 516");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, vwc) == 525, "VWC at 525");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, sgls) == 536, "SGLS at 536");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, subnqn) == 768, "SUBNQN at 768");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, psd) == 2048, "PSD0 at 2048");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ctrl, vs) == 3072, "vendor specific at 3072");

#define NVME_CTRL_OACS_FORMAT    (1u << 1)
#define NVME_CTRL_OACS_FW        (1u << 2)
#define NVME_CTRL_OACS_NS_MGMT   (1u << 3)
#define NVME_CTRL_ONCS_COMPARE   (1u << 0)
#define NVME_CTRL_ONCS_WRITE_UNC (1u << 1)
#define NVME_CTRL_ONCS_DSM       (1u << 2)
#define NVME_CTRL_ONCS_WZ        (1u << 3)
#define NVME_CTRL_ONCS_FEAT_SAVE (1u << 4)
#define NVME_CTRL_FRMW_SLOT1_RO  (1u << 0)
#define NVME_CTRL_FRMW_NSLOTS(f) (((f) >> 1) & 0x7)
#define NVME_CTRL_FRMW_NO_RESET  (1u << 4)
#define NVME_CTRL_LPA_CMD_EFFECTS (1u << 1)
#define NVME_CTRL_LPA_EXT_DATA   (1u << 2)
#define NVME_CTRL_FNA_FORMAT_ALL (1u << 0)
#define NVME_CTRL_FNA_SES_ALL    (1u << 1)
#define NVME_CTRL_FNA_CRYPTO     (1u << 2)
#define NVME_CTRL_VWC_PRESENT    (1u << 0)

/* LBA Format, 4 bytes */
struct nvme_lbaf {
	uint16_t ms;     /* metadata size */
	uint8_t  lbads;  /* LBA data size, log2 */
	uint8_t  rp;     /* bits 1:0 relative performance */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_lbaf) == 4, "LBA format is 4 bytes");

/* Identify Namespace data structure for the NVM command set (CNS 00h), 4096 bytes */
struct nvme_id_ns {
	uint64_t nsze;   /* namespace size, logical blocks */
	uint64_t ncap;   /* namespace capacity */
	uint64_t nuse;   /* namespace utilization */
	uint8_t  nsfeat; /* bit 0 thin provisioning, bit 2 DAE (deallocated/unwritten error) */
	uint8_t  nlbaf;  /* number of LBA formats, 0's based */
	uint8_t  flbas;  /* bits 3:0 format index (low), bit 4 metadata at end, bits 6:5 index (high) */
	uint8_t  mc;
	uint8_t  dpc;
	uint8_t  dps;
	uint8_t  nmic;
	uint8_t  rescap;
	uint8_t  fpi;
	uint8_t  dlfeat; /* bits 2:0 = 001b: deallocated blocks read as zeroes; bit 3 WZ deallocate */
	uint16_t nawun;
	uint16_t nawupf;
	uint16_t nacwu;
	uint16_t nabsn;
	uint16_t nabo;
	uint16_t nabspf;
	uint16_t noiob;
	uint8_t  nvmcap[16];
	uint16_t npwg;
	uint16_t npwa;
	uint16_t npdg;
	uint16_t npda;
	uint16_t nows;
	uint16_t mssrl;
	uint32_t mcl;
	uint8_t  msrc;
	uint8_t  rsvd81[11];
	uint32_t anagrpid;
	uint8_t  rsvd96[3];
	uint8_t  nsattr;
	uint16_t nvmsetid;
	uint16_t endgid;
	uint8_t  nguid[16];
	uint8_t  eui64[8];
	struct nvme_lbaf lbaf[64];
	uint8_t  vs[3712];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ns) == 4096, "Identify Namespace is 4096 bytes");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nsfeat) == 24, "NSFEAT at 24");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, dlfeat) == 33, "DLFEAT at 33");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nvmcap) == 48, "NVMCAP at 48");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, anagrpid) == 92, "ANAGRPID at 92");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, nguid) == 104, "NGUID at 104");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, lbaf) == 128, "LBAF0 at 128");
NVME_STATIC_ASSERT(offsetof(struct nvme_id_ns, vs) == 384, "vendor specific at 384");

#define NVME_NS_NSFEAT_THIN   (1u << 0)
#define NVME_NS_NSFEAT_DAE    (1u << 2)
#define NVME_NS_DLFEAT_READ_ZEROES 0x1u
#define NVME_NS_DLFEAT_WZ_DEAC     (1u << 3)
/* The LBA format index in use (FLBAS bits 3:0 and 6:5). */
static inline unsigned nvme_ns_flbas_index(const struct nvme_id_ns *ns)
{
	return (ns->flbas & 0xfu) | (((unsigned)ns->flbas >> 5 & 0x3u) << 4);
}
/* LBA Data Size (LBADS) is a power of two the device reports: below 9 (512 bytes) is not
 * supported (NVM Command Set 1.0 figure "LBA Format Data Structure"), and the host takes at
 * most 2^NVME_LBADS_MAX (a block of 1 GiB is beyond any transfer it makes). A value outside
 * 9..NVME_LBADS_MAX never reaches a shift. */
#define NVME_LBADS_MIN 9u
#define NVME_LBADS_MAX 30u
static inline int nvme_lbads_valid(uint8_t lbads)
{
	return lbads >= NVME_LBADS_MIN && lbads <= NVME_LBADS_MAX;
}
/* The size of a block in the format in use, or 0 when the device reports a format index
 * beyond its NLBAF or an LBADS outside 9..NVME_LBADS_MAX: such a namespace has no usable
 * block size. */
static inline uint32_t nvme_ns_lba_size(const struct nvme_id_ns *ns)
{
	unsigned f = nvme_ns_flbas_index(ns);
	if (f > ns->nlbaf || !nvme_lbads_valid(ns->lbaf[f].lbads))
		return 0;
	return 1u << ns->lbaf[f].lbads;
}

/* I/O Command Set specific Identify Namespace for the NVM set (CNS 05h, CSI 00h) */
struct nvme_id_ns_nvm {
	uint64_t lbstm;
	uint8_t  pic;
	uint8_t  rsvd9[3];
	uint32_t elbaf[64];
	uint8_t  rsvd268[3828];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ns_nvm) == 4096, "NVM-specific Identify Namespace is 4096 bytes");

/* I/O Command Set specific Identify Controller for the NVM set (CNS 06h, CSI 00h) */
struct nvme_id_ctrl_nvm {
	uint8_t  vsl;    /* verify size limit */
	uint8_t  wzsl;   /* write zeroes size limit */
	uint8_t  wusl;
	uint8_t  dmrl;   /* DSM ranges limit */
	uint32_t dmrsl;  /* DSM range size limit */
	uint64_t dmsl;   /* DSM size limit */
	uint8_t  rsvd16[4080];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ctrl_nvm) == 4096, "NVM-specific Identify Controller is 4096 bytes");

/* Namespace Identification Descriptor (CNS 03h): a list of these in 4096 bytes */
struct nvme_ns_id_desc {
	uint8_t nidt;  /* 1 EUI64 (8), 2 NGUID (16), 3 UUID (16), 4 CSI (1) */
	uint8_t nidl;
	uint8_t rsvd[2];
	/* followed by nidl bytes */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_ns_id_desc) == 4, "NS id descriptor header is 4 bytes");
enum nvme_nidt {
	NVME_NIDT_EUI64 = 1,
	NVME_NIDT_NGUID = 2,
	NVME_NIDT_UUID  = 3,
	NVME_NIDT_CSI   = 4,
};

/* Active Namespace ID list (CNS 02h): up to 1024 NSIDs in increasing order, 0-terminated */
#define NVME_NS_LIST_MAX 1024

#endif
