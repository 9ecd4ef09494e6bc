/* SPDX-License-Identifier: BSD-3-Clause */
/* Identify printers: controller, namespace, NVM-specific forms, namespace list, descriptors. */
#include <unvme/print.h>

#include "print_capture.h"
#include "tests/unit/test_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Every named field of the Identify Controller structure (blobs that are shown only when
 * non-zero, nvmeof and vs, are checked separately). */
static const char *const id_ctrl_fields[] = {
	"vid", "ssvid", "sn", "mn", "fr", "rab", "ieee", "cmic", "mdts", "cntlid", "ver", "rtd3r",
	"rtd3e", "oaes", "ctratt", "rrls", "cntrltype", "fguid", "crdt1", "crdt2", "crdt3", "nvmmi",
	"oacs", "acl", "aerl", "frmw", "lpa", "elpe", "npss", "avscc", "apsta", "wctemp", "cctemp",
	"mtfa", "hmpre", "hmmin", "tnvmcap", "unvmcap", "rpmbs", "edstt", "dsto", "fwug", "kas",
	"hctma", "mntmt", "mxtmt", "sanicap", "hmminds", "hmmaxd", "nsetidmax", "endgidmax", "anatt",
	"anacap", "anagrpmax", "nanagrpid", "pels", "domainid", "megcap", "sqes", "cqes", "maxcmd", "nn",
	"oncs", "fuses", "fna", "vwc", "awun", "awupf", "icsvscc", "nwpc", "acwu", "cdfs", "sgls",
	"mnan", "maxdna", "maxcna", "subnqn",
};

static const char *const id_ns_fields[] = {
	"nsze", "ncap", "nuse", "nsfeat", "nlbaf", "flbas", "mc", "dpc", "dps", "nmic", "rescap",
	"fpi", "dlfeat", "nawun", "nawupf", "nacwu", "nabsn", "nabo", "nabspf", "noiob", "nvmcap",
	"npwg", "npwa", "npdg", "npda", "nows", "mssrl", "mcl", "msrc", "anagrpid", "nsattr",
	"nvmsetid", "endgid", "nguid", "eui64",
};

static void pad_copy(char *dst, size_t width, const char *s)
{
	memset(dst, ' ', width);
	memcpy(dst, s, strlen(s));
}

static void fill_id_ctrl(struct nvme_id_ctrl *c)
{
	memset(c, 0, sizeof(*c));
	c->vid = 0x1b36;
	c->ssvid = 0x1af4;
	pad_copy(c->sn, sizeof(c->sn), "SN123");
	pad_copy(c->mn, sizeof(c->mn), "uNVMe emulated ctrl");
	pad_copy(c->fr, sizeof(c->fr), "1.0");
	c->ieee[0] = 0x00; /* OUI 525400h, least significant byte first */
	c->ieee[1] = 0x54;
	c->ieee[2] = 0x52;
	c->mdts = 5;
	c->cntlid = 0x41;
	c->ver = NVME_VS(2, 0, 0);
	c->oacs = NVME_CTRL_OACS_FORMAT | NVME_CTRL_OACS_FW;
	c->frmw = NVME_CTRL_FRMW_SLOT1_RO | (3u << 1);
	c->wctemp = 343;
	c->cctemp = 353;
	c->tnvmcap[3] = 0x40; /* 2^30 */
	c->unvmcap[8] = 0x01; /* 2^64: does not fit a JSON integer of 64 bits */
	c->sqes = 0x66;
	c->cqes = 0x44;
	c->nn = 4;
	c->oncs = NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WZ;
	c->vwc = NVME_CTRL_VWC_PRESENT;
	snprintf(c->subnqn, sizeof(c->subnqn), "nqn.2024-01.io.unvme:emu");
	c->npss = 1;
	c->psd[0].mp = 2500; /* 25 W in centiwatts */
	c->psd[0].enlat = 16;
	c->psd[0].exlat = 4;
	c->psd[1].mp = 10;
	c->psd[1].flags = 0x2; /* non-operational */
	c->psd[2].mp = 999;    /* beyond NPSS: must not be shown */
}

static void test_id_ctrl_text(void)
{
	static struct nvme_id_ctrl c;
	struct capture cap;
	fill_id_ctrl(&c);
	unvme_print_id_ctrl(capture_begin(&cap), &c, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "vid       : 0x1b36"));
	CHECK(has_line(t, "sn        : SN123")); /* trailing padding trimmed */
	CHECK(has_line(t, "mn        : uNVMe emulated ctrl"));
	CHECK(has_line(t, "fr        : 1.0"));
	CHECK(has_line(t, "ieee      : 525400"));
	CHECK(has_line(t, "cntlid    : 65"));
	CHECK(has_line(t, "ver       : 0x20000 (2.0.0)"));
	CHECK(has_line(t, "oacs      : 0x6 (Format NVM, Firmware Download/Commit)"));
	CHECK(has_line_starting(t, "frmw      : 0x7 (3 slots, slot 1 read-only"));
	CHECK(has_line(t, "wctemp    : 343 K (70 C)"));
	CHECK(has_line(t, "tnvmcap   : 1073741824 (1.07 GB)"));
	CHECK(has_line_starting(t, "unvmcap   : 18446744073709551616 "));
	CHECK(has_line_starting(t, "sqes      : 0x66"));
	CHECK(has_line_starting(t, "cqes      : 0x44"));
	CHECK(has_line(t, "nn        : 4"));
	CHECK(has_line(t, "oncs      : 0xd (Compare, Dataset Management, Write Zeroes)"));
	CHECK(has_line(t, "vwc       : 0x1 (volatile write cache present)"));
	CHECK(has_line(t, "subnqn    : nqn.2024-01.io.unvme:emu"));
	CHECK(has_line_starting(t, "ps      0 : mp:25.00W operational enlat:16 exlat:4"));
	CHECK(has_line_starting(t, "ps      1 : mp:0.10W non-operational"));
	CHECK(!has_line_starting(t, "ps      2"));
	CHECK(!has_line_starting(t, "vs[]")); /* all-zero vendor area left out */
	for (size_t i = 0; i < N(id_ctrl_fields); i++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "%-9s : ", id_ctrl_fields[i]);
		if (!has_line_starting(t, prefix))
			fprintf(stderr, "  missing text field %s\n", id_ctrl_fields[i]);
		CHECK(has_line_starting(t, prefix));
	}
	capture_free(&cap);
}

static void test_id_ctrl_json(void)
{
	static struct nvme_id_ctrl c;
	struct capture cap;
	fill_id_ctrl(&c);
	c.vs[100] = 0xab; /* a filled vendor area is shown */
	unvme_print_id_ctrl(capture_begin(&cap), &c, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "vid"), 0x1b36);
	CHECK_STREQ(jstr(j, "sn"), "SN123");
	CHECK_STREQ(jstr(j, "mn"), "uNVMe emulated ctrl");
	CHECK_STREQ(jstr(j, "fr"), "1.0");
	CHECK_EQ(jint(j, "ieee"), 0x525400);
	CHECK_EQ(jint(j, "ver"), 0x20000);
	CHECK_EQ(jint(j, "sqes"), 0x66);
	CHECK_EQ(jint(j, "tnvmcap"), 1ll << 30);
	CHECK_STREQ(jstr(j, "unvmcap"), "18446744073709551616");
	CHECK_STREQ(jstr(j, "subnqn"), "nqn.2024-01.io.unvme:emu");
	json_object *psd = jget(j, "psd");
	CHECK_EQ(jlen(psd), 2); /* NPSS is 0's based */
	CHECK_EQ(jint(jidx(psd, 0), "mp"), 2500);
	CHECK_EQ(jint(jidx(psd, 0), "enlat"), 16);
	CHECK_EQ(jint(jidx(psd, 1), "nops"), 1);
	const char *vs = jstr(j, "vs");
	CHECK(vs && strlen(vs) == 2048 && strncmp(vs + 200, "ab", 2) == 0);
	CHECK(jget(j, "nvmeof") == NULL);
	for (size_t i = 0; i < N(id_ctrl_fields); i++) {
		if (!jget(j, id_ctrl_fields[i]))
			fprintf(stderr, "  missing JSON field %s\n", id_ctrl_fields[i]);
		CHECK(jget(j, id_ctrl_fields[i]) != NULL);
	}
	json_object_put(j);
	capture_free(&cap);
}

static void test_id_ctrl_strings_are_sanitised(void)
{
	static struct nvme_id_ctrl c;
	struct capture cap;
	fill_id_ctrl(&c);
	/* A full-width field with no terminator, a control byte and a non-ASCII byte. */
	memset(c.sn, 'S', sizeof(c.sn));
	c.mn[2] = '\n';
	c.mn[3] = (char)0xe9;
	unvme_print_id_ctrl(capture_begin(&cap), &c, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_STREQ(jstr(j, "sn"), "SSSSSSSSSSSSSSSSSSSS");
	CHECK_STREQ(jstr(j, "mn"), "uN..e emulated ctrl");
	json_object_put(j);
	capture_free(&cap);
}

static void fill_id_ns(struct nvme_id_ns *n)
{
	memset(n, 0, sizeof(*n));
	n->nsze = 0x100000;
	n->ncap = 0x100000;
	n->nuse = 0x1000;
	n->nlbaf = 1;
	n->lbaf[0].lbads = 9;
	n->lbaf[1].ms = 8;
	n->lbaf[1].lbads = 12;
	n->lbaf[1].rp = 2;
	n->dlfeat = NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC;
	n->nvmcap[1] = 0x02; /* 512 */
	for (unsigned i = 0; i < 16; i++)
		n->nguid[i] = (uint8_t)(0x10 + i);
	n->eui64[0] = 0x00;
	n->eui64[1] = 0x25;
	n->eui64[7] = 0x99;
}

static void test_id_ns_text(void)
{
	static struct nvme_id_ns n;
	struct capture cap;
	fill_id_ns(&n);
	unvme_print_id_ns(capture_begin(&cap), &n, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "nsze     : 0x100000 (1048576 blocks, 536.87 MB)"));
	CHECK(has_line(t, "nuse     : 0x1000 (4096 blocks, 2.10 MB)"));
	CHECK(has_line(t, "nlbaf    : 1 (2 formats)"));
	CHECK(has_line_starting(t, "dlfeat   : 0x9 (deallocated blocks read as zeroes, write zeroes deallocates"));
	CHECK(has_line(t, "nvmcap   : 512 (512 B)"));
	CHECK(has_line(t, "nguid    : 101112131415161718191a1b1c1d1e1f"));
	CHECK(has_line(t, "eui64    : 0025000000000099"));
	CHECK(has_line(t, "lbaf  0 : ms:0   lbads:9  rp:0 (in use)"));
	CHECK(has_line(t, "lbaf  1 : ms:8   lbads:12 rp:2"));
	CHECK(!has_line_starting(t, "lbaf  2"));
	for (size_t i = 0; i < N(id_ns_fields); i++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "%-8s : ", id_ns_fields[i]);
		if (!has_line_starting(t, prefix))
			fprintf(stderr, "  missing text field %s\n", id_ns_fields[i]);
		CHECK(has_line_starting(t, prefix));
	}
	capture_free(&cap);
}

static void test_id_ns_format_index_uses_high_flbas_bits(void)
{
	static struct nvme_id_ns n;
	struct capture cap;
	fill_id_ns(&n);
	n.nlbaf = 16;
	n.lbaf[16].lbads = 12;
	n.flbas = 1u << 5; /* format 16: low nibble 0, bits 6:5 = 1 */
	unvme_print_id_ns(capture_begin(&cap), &n, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "lbaf 16 : ms:0   lbads:12 rp:0 (in use)"));
	CHECK(has_line(t, "lbaf  0 : ms:0   lbads:9  rp:0"));
	/* Sizes follow the format in use: 4 KiB blocks. */
	CHECK(has_line(t, "nsze     : 0x100000 (1048576 blocks, 4.29 GB)"));
	capture_free(&cap);
}

static void test_id_ns_json(void)
{
	static struct nvme_id_ns n;
	struct capture cap;
	fill_id_ns(&n);
	n.flbas = 1;
	unvme_print_id_ns(capture_begin(&cap), &n, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "nsze"), 0x100000);
	CHECK_EQ(jint(j, "nuse"), 0x1000);
	CHECK_EQ(jint(j, "flbas"), 1);
	CHECK_EQ(jint(j, "nvmcap"), 512);
	CHECK_STREQ(jstr(j, "eui64"), "0025000000000099");
	json_object *lbaf = jget(j, "lbaf");
	CHECK_EQ(jlen(lbaf), 2);
	CHECK_EQ(jint(jidx(lbaf, 0), "lbads"), 9);
	CHECK_EQ(jint(jidx(lbaf, 1), "ms"), 8);
	CHECK_EQ(jint(jidx(lbaf, 1), "lbads"), 12);
	CHECK_EQ(jint(jidx(lbaf, 1), "rp"), 2);
	for (size_t i = 0; i < N(id_ns_fields); i++) {
		if (!jget(j, id_ns_fields[i]))
			fprintf(stderr, "  missing JSON field %s\n", id_ns_fields[i]);
		CHECK(jget(j, id_ns_fields[i]) != NULL);
	}
	json_object_put(j);
	capture_free(&cap);
}

static void test_id_ns_nvm(void)
{
	static struct nvme_id_ns_nvm n;
	struct capture cap;
	n.lbstm = 0xff00;
	n.pic = 0x1;
	n.elbaf[0] = 1u << 7; /* 32b Guard */
	n.elbaf[2] = 5;       /* storage tag size 5 */
	unvme_print_id_ns_nvm(capture_begin(&cap), &n, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "lbstm    : 0xff00"));
	CHECK(has_line(t, "elbaf  0 : sts:0  pif:1 (32b Guard)"));
	CHECK(has_line(t, "elbaf  2 : sts:5  pif:0 (16b Guard)"));
	CHECK(!has_line_starting(t, "elbaf  3"));
	capture_free(&cap);

	unvme_print_id_ns_nvm(capture_begin(&cap), &n, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "lbstm"), 0xff00);
	CHECK_EQ(jint(j, "pic"), 1);
	CHECK_EQ(jlen(jget(j, "elbaf")), 3);
	CHECK_EQ(jint(jidx(jget(j, "elbaf"), 0), "pif"), 1);
	CHECK_EQ(jint(jidx(jget(j, "elbaf"), 2), "sts"), 5);
	json_object_put(j);
	capture_free(&cap);
}

static void test_id_ctrl_nvm(void)
{
	static struct nvme_id_ctrl_nvm c;
	struct capture cap;
	c.vsl = 7;
	c.dmrl = 255;
	c.dmrsl = 65536;
	c.dmsl = 1ull << 33;
	unvme_print_id_ctrl_nvm(capture_begin(&cap), &c, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "vsl   : 7 (512 KiB with 4 KiB pages)"));
	CHECK(has_line(t, "wzsl  : 0 (no limit)"));
	CHECK(has_line(t, "dmrl  : 255"));
	CHECK(has_line(t, "dmrsl : 65536 blocks"));
	CHECK(has_line(t, "dmsl  : 8589934592 blocks"));
	capture_free(&cap);

	unvme_print_id_ctrl_nvm(capture_begin(&cap), &c, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jint(j, "vsl"), 7);
	CHECK_EQ(jint(j, "wzsl"), 0);
	CHECK_EQ(jint(j, "wusl"), 0);
	CHECK_EQ(jint(j, "dmrl"), 255);
	CHECK_EQ(jint(j, "dmrsl"), 65536);
	CHECK_EQ(jint(j, "dmsl"), 1ll << 33);
	json_object_put(j);
	capture_free(&cap);
}

static void test_ns_list_stops_at_zero(void)
{
	static uint32_t list[NVME_NS_LIST_MAX];
	struct capture cap;
	memset(list, 0, sizeof(list));
	list[0] = 1;
	list[1] = 2;
	list[2] = 7;
	list[4] = 9; /* after the terminator: not part of the list */
	unvme_print_ns_list(capture_begin(&cap), list, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "[   0]:0x1"));
	CHECK(has_line(t, "[   2]:0x7"));
	CHECK(strstr(t, "0x9") == NULL);
	capture_free(&cap);

	unvme_print_ns_list(capture_begin(&cap), list, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *ids = jget(j, "nsid_list");
	CHECK_EQ(jlen(ids), 3);
	CHECK_EQ(json_object_get_int64(jget(jidx(ids, 2), "nsid")), 7);
	json_object_put(j);
	capture_free(&cap);
}

static void test_ns_list_full_has_no_terminator(void)
{
	static uint32_t list[NVME_NS_LIST_MAX];
	struct capture cap;
	for (unsigned i = 0; i < NVME_NS_LIST_MAX; i++)
		list[i] = i + 1;
	unvme_print_ns_list(capture_begin(&cap), list, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	CHECK_EQ(jlen(jget(j, "nsid_list")), NVME_NS_LIST_MAX);
	json_object_put(j);
	capture_free(&cap);
}

/* Appends one descriptor to a descriptor list; returns the next offset. */
static size_t add_desc(uint8_t *buf, size_t off, uint8_t nidt, uint8_t nidl, uint8_t first)
{
	buf[off] = nidt;
	buf[off + 1] = nidl;
	for (unsigned i = 0; i < nidl; i++)
		buf[off + 4 + i] = (uint8_t)(first + i);
	return off + 4 + nidl;
}

static void test_ns_desc_list(void)
{
	static uint8_t buf[4096];
	struct capture cap;
	memset(buf, 0, sizeof(buf));
	size_t off = add_desc(buf, 0, NVME_NIDT_EUI64, 8, 0x10);
	off = add_desc(buf, off, NVME_NIDT_NGUID, 16, 0x20);
	off = add_desc(buf, off, NVME_NIDT_UUID, 16, 0x30);
	buf[off] = NVME_NIDT_CSI;
	buf[off + 1] = 1;
	buf[off + 4] = NVME_CSI_ZNS;

	unvme_print_ns_desc_list(capture_begin(&cap), buf, UNVME_FMT_TEXT);
	const char *t = capture_end(&cap);
	CHECK(has_line(t, "eui64 : 1011121314151617"));
	CHECK(has_line(t, "nguid : 202122232425262728292a2b2c2d2e2f"));
	CHECK(has_line(t, "uuid  : 30313233-3435-3637-3839-3a3b3c3d3e3f"));
	CHECK(has_line(t, "csi   : 2 (Zoned Namespace)"));
	capture_free(&cap);

	unvme_print_ns_desc_list(capture_begin(&cap), buf, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *d = jget(j, "descriptors");
	CHECK_EQ(jlen(d), 4);
	CHECK_EQ(jint(jidx(d, 0), "nidt"), NVME_NIDT_EUI64);
	CHECK_EQ(jint(jidx(d, 0), "nidl"), 8);
	CHECK_STREQ(jstr(jidx(d, 0), "eui64"), "1011121314151617");
	CHECK_STREQ(jstr(jidx(d, 2), "uuid"), "30313233-3435-3637-3839-3a3b3c3d3e3f");
	CHECK_EQ(jint(jidx(d, 3), "csi"), NVME_CSI_ZNS);
	json_object_put(j);
	capture_free(&cap);
}

static void test_ns_desc_list_stops_at_overrun(void)
{
	static uint8_t buf[4096];
	struct capture cap;
	memset(buf, 0, sizeof(buf));
	add_desc(buf, 0, NVME_NIDT_EUI64, 8, 0x10);
	/* A descriptor claiming more bytes than the list has left must not be read. */
	buf[4088] = NVME_NIDT_NGUID;
	buf[4089] = 16;
	size_t off = 12;
	while (off + 4 + 4 <= 4088) /* filler descriptors of an unknown type up to 4088 */
		off = add_desc(buf, off, 0x7f, (uint8_t)(4088 - off - 4 > 200 ? 200 : 4088 - off - 4), 0);
	REQUIRE(off == 4088);
	unvme_print_ns_desc_list(capture_begin(&cap), buf, UNVME_FMT_JSON);
	capture_end(&cap);
	json_object *j = capture_json(&cap);
	REQUIRE(j != NULL);
	json_object *d = jget(j, "descriptors");
	size_t n = jlen(d);
	REQUIRE(n >= 2 && n != (size_t)-1);
	CHECK(jget(jidx(d, n - 1), "nguid") == NULL);
	CHECK(jget(jidx(d, 1), "nid") != NULL); /* unknown types keep their raw bytes */
	json_object_put(j);
	capture_free(&cap);
}

TEST_MAIN(TEST(test_id_ctrl_text), TEST(test_id_ctrl_json), TEST(test_id_ctrl_strings_are_sanitised),
	  TEST(test_id_ns_text), TEST(test_id_ns_format_index_uses_high_flbas_bits), TEST(test_id_ns_json),
	  TEST(test_id_ns_nvm), TEST(test_id_ctrl_nvm), TEST(test_ns_list_stops_at_zero),
	  TEST(test_ns_list_full_has_no_terminator), TEST(test_ns_desc_list), TEST(test_ns_desc_list_stops_at_overrun))
