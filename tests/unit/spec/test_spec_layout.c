/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire layout of every NVMe structure, checked at run time against the byte offsets the
 * specifications give (NVMe Base 2.0, NVM Command Set 1.0). The headers assert a few of these
 * at compile time; this table covers every field, so a misplaced member anywhere is caught.
 */
#include <stddef.h>

#include <unvme/spec.h>

#include "tests/unit/test_util.h"

struct layout_row {
	const char *what;
	size_t actual;
	size_t expected;
};

#define OFF(type, field, expected) { #type "." #field, offsetof(struct type, field), expected }
#define SIZE(type, expected)       { "sizeof " #type, sizeof(struct type), expected }

static void check_rows(const struct layout_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].actual != rows[i].expected)
			fprintf(stderr, "  %s: at %zu, spec says %zu\n", rows[i].what, rows[i].actual,
				rows[i].expected);
		CHECK_EQ(rows[i].actual, rows[i].expected);
	}
}
#define CHECK_ROWS(rows) check_rows(rows, sizeof(rows) / sizeof(rows[0]))

static void test_sqe_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_sqe, 64),
		OFF(nvme_sqe, opc, 0),    OFF(nvme_sqe, flags, 1),  OFF(nvme_sqe, cid, 2),
		OFF(nvme_sqe, nsid, 4),   OFF(nvme_sqe, cdw2, 8),   OFF(nvme_sqe, cdw3, 12),
		OFF(nvme_sqe, mptr, 16),  OFF(nvme_sqe, prp1, 24),  OFF(nvme_sqe, prp2, 32),
		OFF(nvme_sqe, cdw10, 40), OFF(nvme_sqe, cdw11, 44), OFF(nvme_sqe, cdw12, 48),
		OFF(nvme_sqe, cdw13, 52), OFF(nvme_sqe, cdw14, 56), OFF(nvme_sqe, cdw15, 60),
	};
	CHECK_ROWS(rows);
}

static void test_cqe_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_cqe, 16),
		OFF(nvme_cqe, dw0, 0),  OFF(nvme_cqe, dw1, 4),  OFF(nvme_cqe, sqhd, 8),
		OFF(nvme_cqe, sqid, 10), OFF(nvme_cqe, cid, 12), OFF(nvme_cqe, status, 14),
	};
	CHECK_ROWS(rows);
}

static void test_dsm_range_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_dsm_range, 16),
		OFF(nvme_dsm_range, cattr, 0), OFF(nvme_dsm_range, nlb, 4), OFF(nvme_dsm_range, slba, 8),
	};
	CHECK_ROWS(rows);
}

static void test_psd_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_psd, 32),
		OFF(nvme_psd, mp, 0),     OFF(nvme_psd, flags, 3), OFF(nvme_psd, enlat, 4),
		OFF(nvme_psd, exlat, 8),  OFF(nvme_psd, rrt, 12),  OFF(nvme_psd, rrl, 13),
		OFF(nvme_psd, rwt, 14),   OFF(nvme_psd, rwl, 15),  OFF(nvme_psd, idlp, 16),
		OFF(nvme_psd, ips, 18),   OFF(nvme_psd, actp, 20), OFF(nvme_psd, apws, 22),
	};
	CHECK_ROWS(rows);
}

static void test_lbaf_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_lbaf, 4),
		OFF(nvme_lbaf, ms, 0), OFF(nvme_lbaf, lbads, 2), OFF(nvme_lbaf, rp, 3),
	};
	CHECK_ROWS(rows);
}

static void test_id_ctrl_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_id_ctrl, 4096),
		OFF(nvme_id_ctrl, vid, 0),         OFF(nvme_id_ctrl, ssvid, 2),
		OFF(nvme_id_ctrl, sn, 4),          OFF(nvme_id_ctrl, mn, 24),
		OFF(nvme_id_ctrl, fr, 64),         OFF(nvme_id_ctrl, rab, 72),
		OFF(nvme_id_ctrl, ieee, 73),       OFF(nvme_id_ctrl, cmic, 76),
		OFF(nvme_id_ctrl, mdts, 77),       OFF(nvme_id_ctrl, cntlid, 78),
		OFF(nvme_id_ctrl, ver, 80),        OFF(nvme_id_ctrl, rtd3r, 84),
		OFF(nvme_id_ctrl, rtd3e, 88),      OFF(nvme_id_ctrl, oaes, 92),
		OFF(nvme_id_ctrl, ctratt, 96),     OFF(nvme_id_ctrl, rrls, 100),
		OFF(nvme_id_ctrl, cntrltype, 111), OFF(nvme_id_ctrl, fguid, 112),
		OFF(nvme_id_ctrl, crdt1, 128),     OFF(nvme_id_ctrl, crdt2, 130),
		OFF(nvme_id_ctrl, crdt3, 132),     OFF(nvme_id_ctrl, nvmmi, 240),
		OFF(nvme_id_ctrl, oacs, 256),      OFF(nvme_id_ctrl, acl, 258),
		OFF(nvme_id_ctrl, aerl, 259),      OFF(nvme_id_ctrl, frmw, 260),
		OFF(nvme_id_ctrl, lpa, 261),       OFF(nvme_id_ctrl, elpe, 262),
		OFF(nvme_id_ctrl, npss, 263),      OFF(nvme_id_ctrl, avscc, 264),
		OFF(nvme_id_ctrl, apsta, 265),     OFF(nvme_id_ctrl, wctemp, 266),
		OFF(nvme_id_ctrl, cctemp, 268),    OFF(nvme_id_ctrl, mtfa, 270),
		OFF(nvme_id_ctrl, hmpre, 272),     OFF(nvme_id_ctrl, hmmin, 276),
		OFF(nvme_id_ctrl, tnvmcap, 280),   OFF(nvme_id_ctrl, unvmcap, 296),
		OFF(nvme_id_ctrl, rpmbs, 312),     OFF(nvme_id_ctrl, edstt, 316),
		OFF(nvme_id_ctrl, dsto, 318),      OFF(nvme_id_ctrl, fwug, 319),
		OFF(nvme_id_ctrl, kas, 320),       OFF(nvme_id_ctrl, hctma, 322),
		OFF(nvme_id_ctrl, mntmt, 324),     OFF(nvme_id_ctrl, mxtmt, 326),
		OFF(nvme_id_ctrl, sanicap, 328),   OFF(nvme_id_ctrl, hmminds, 332),
		OFF(nvme_id_ctrl, hmmaxd, 336),    OFF(nvme_id_ctrl, nsetidmax, 338),
		OFF(nvme_id_ctrl, endgidmax, 340), OFF(nvme_id_ctrl, anatt, 342),
		OFF(nvme_id_ctrl, anacap, 343),    OFF(nvme_id_ctrl, anagrpmax, 344),
		OFF(nvme_id_ctrl, nanagrpid, 348), OFF(nvme_id_ctrl, pels, 352),
		OFF(nvme_id_ctrl, domainid, 356),  OFF(nvme_id_ctrl, megcap, 368),
		OFF(nvme_id_ctrl, sqes, 512),      OFF(nvme_id_ctrl, cqes, 513),
		OFF(nvme_id_ctrl, maxcmd, 514),    OFF(nvme_id_ctrl, nn, 516),
		OFF(nvme_id_ctrl, oncs, 520),      OFF(nvme_id_ctrl, fuses, 522),
		OFF(nvme_id_ctrl, fna, 524),       OFF(nvme_id_ctrl, vwc, 525),
		OFF(nvme_id_ctrl, awun, 526),      OFF(nvme_id_ctrl, awupf, 528),
		OFF(nvme_id_ctrl, icsvscc, 530),   OFF(nvme_id_ctrl, nwpc, 531),
		OFF(nvme_id_ctrl, acwu, 532),      OFF(nvme_id_ctrl, cdfs, 534),
		OFF(nvme_id_ctrl, sgls, 536),      OFF(nvme_id_ctrl, mnan, 540),
		OFF(nvme_id_ctrl, maxdna, 544),    OFF(nvme_id_ctrl, maxcna, 560),
		OFF(nvme_id_ctrl, subnqn, 768),    OFF(nvme_id_ctrl, nvmeof, 1792),
		OFF(nvme_id_ctrl, psd, 2048),      OFF(nvme_id_ctrl, psd[31], 3040),
		OFF(nvme_id_ctrl, vs, 3072),
	};
	CHECK_ROWS(rows);
}

static void test_id_ns_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_id_ns, 4096),
		OFF(nvme_id_ns, nsze, 0),       OFF(nvme_id_ns, ncap, 8),      OFF(nvme_id_ns, nuse, 16),
		OFF(nvme_id_ns, nsfeat, 24),    OFF(nvme_id_ns, nlbaf, 25),    OFF(nvme_id_ns, flbas, 26),
		OFF(nvme_id_ns, mc, 27),        OFF(nvme_id_ns, dpc, 28),      OFF(nvme_id_ns, dps, 29),
		OFF(nvme_id_ns, nmic, 30),      OFF(nvme_id_ns, rescap, 31),   OFF(nvme_id_ns, fpi, 32),
		OFF(nvme_id_ns, dlfeat, 33),    OFF(nvme_id_ns, nawun, 34),    OFF(nvme_id_ns, nawupf, 36),
		OFF(nvme_id_ns, nacwu, 38),     OFF(nvme_id_ns, nabsn, 40),    OFF(nvme_id_ns, nabo, 42),
		OFF(nvme_id_ns, nabspf, 44),    OFF(nvme_id_ns, noiob, 46),    OFF(nvme_id_ns, nvmcap, 48),
		OFF(nvme_id_ns, npwg, 64),      OFF(nvme_id_ns, npwa, 66),     OFF(nvme_id_ns, npdg, 68),
		OFF(nvme_id_ns, npda, 70),      OFF(nvme_id_ns, nows, 72),     OFF(nvme_id_ns, mssrl, 74),
		OFF(nvme_id_ns, mcl, 76),       OFF(nvme_id_ns, msrc, 80),     OFF(nvme_id_ns, anagrpid, 92),
		OFF(nvme_id_ns, nsattr, 99),    OFF(nvme_id_ns, nvmsetid, 100), OFF(nvme_id_ns, endgid, 102),
		OFF(nvme_id_ns, nguid, 104),    OFF(nvme_id_ns, eui64, 120),   OFF(nvme_id_ns, lbaf, 128),
		OFF(nvme_id_ns, lbaf[63], 380), OFF(nvme_id_ns, vs, 384),
	};
	CHECK_ROWS(rows);
}

static void test_csi_specific_identify_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_id_ns_nvm, 4096),
		OFF(nvme_id_ns_nvm, lbstm, 0), OFF(nvme_id_ns_nvm, pic, 8), OFF(nvme_id_ns_nvm, elbaf, 12),
		OFF(nvme_id_ns_nvm, elbaf[63], 264),
		SIZE(nvme_id_ctrl_nvm, 4096),
		OFF(nvme_id_ctrl_nvm, vsl, 0),   OFF(nvme_id_ctrl_nvm, wzsl, 1), OFF(nvme_id_ctrl_nvm, wusl, 2),
		OFF(nvme_id_ctrl_nvm, dmrl, 3),  OFF(nvme_id_ctrl_nvm, dmrsl, 4), OFF(nvme_id_ctrl_nvm, dmsl, 8),
		SIZE(nvme_ns_id_desc, 4),
		OFF(nvme_ns_id_desc, nidt, 0), OFF(nvme_ns_id_desc, nidl, 1),
	};
	CHECK_ROWS(rows);
}

static void test_smart_log_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_smart_log, 512),
		SIZE(nvme_u128, 16),
		OFF(nvme_smart_log, critical_warning, 0),
		OFF(nvme_smart_log, temperature, 1),
		OFF(nvme_smart_log, avail_spare, 3),
		OFF(nvme_smart_log, spare_thresh, 4),
		OFF(nvme_smart_log, percent_used, 5),
		OFF(nvme_smart_log, endgrp_crit_warning, 6),
		OFF(nvme_smart_log, data_units_read, 32),
		OFF(nvme_smart_log, data_units_written, 48),
		OFF(nvme_smart_log, host_reads, 64),
		OFF(nvme_smart_log, host_writes, 80),
		OFF(nvme_smart_log, ctrl_busy_time, 96),
		OFF(nvme_smart_log, power_cycles, 112),
		OFF(nvme_smart_log, power_on_hours, 128),
		OFF(nvme_smart_log, unsafe_shutdowns, 144),
		OFF(nvme_smart_log, media_errors, 160),
		OFF(nvme_smart_log, num_err_log_entries, 176),
		OFF(nvme_smart_log, warning_temp_time, 192),
		OFF(nvme_smart_log, crit_comp_time, 196),
		OFF(nvme_smart_log, temp_sensor, 200),
		OFF(nvme_smart_log, temp_sensor[7], 214),
		OFF(nvme_smart_log, thm_temp1_trans_count, 216),
		OFF(nvme_smart_log, thm_temp2_trans_count, 220),
		OFF(nvme_smart_log, thm_temp1_total_time, 224),
		OFF(nvme_smart_log, thm_temp2_total_time, 228),
	};
	CHECK_ROWS(rows);
}

static void test_error_log_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_error_log, 64),
		OFF(nvme_error_log, error_count, 0), OFF(nvme_error_log, sqid, 8),
		OFF(nvme_error_log, cid, 10),        OFF(nvme_error_log, status, 12),
		OFF(nvme_error_log, param_loc, 14),  OFF(nvme_error_log, lba, 16),
		OFF(nvme_error_log, nsid, 24),       OFF(nvme_error_log, vs, 28),
		OFF(nvme_error_log, trtype, 29),     OFF(nvme_error_log, csi, 32),
		OFF(nvme_error_log, trtype_spec, 40),
	};
	CHECK_ROWS(rows);
}

static void test_fw_slot_and_effects_layout(void)
{
	static const struct layout_row rows[] = {
		SIZE(nvme_fw_slot_log, 512),
		OFF(nvme_fw_slot_log, afi, 0), OFF(nvme_fw_slot_log, frs, 8), OFF(nvme_fw_slot_log, frs[6], 56),
		SIZE(nvme_cmd_effects_log, 4096),
		OFF(nvme_cmd_effects_log, acs, 0), OFF(nvme_cmd_effects_log, iocs, 1024),
	};
	CHECK_ROWS(rows);
}

TEST_MAIN(TEST(test_sqe_layout), TEST(test_cqe_layout), TEST(test_dsm_range_layout), TEST(test_psd_layout),
	  TEST(test_lbaf_layout), TEST(test_id_ctrl_layout), TEST(test_id_ns_layout),
	  TEST(test_csi_specific_identify_layout), TEST(test_smart_log_layout), TEST(test_error_log_layout),
	  TEST(test_fw_slot_and_effects_layout))
