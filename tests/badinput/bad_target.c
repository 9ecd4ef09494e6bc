/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad-input matrix of the NVMe/TCP target on the wire (docs/nvme-tcp.md "Security"): one
 * command per case whose data descriptor disagrees with the command, whose opcode the target
 * does not know, or that comes before its time, sent by a plain socket client to a target in
 * this process (127.0.0.1, a port the system picks). The answer is the command's NVMe status
 * (SCT << 8 | SC, named by unvme_status_str); every refusal leaves the connection usable, which
 * the next case on it shows.
 *
 * The target exports NQN_A (a 16 MiB namespace, 512-byte blocks) to HOST_A and NQN_B to
 * HOST_K, who has a DH-HMAC-CHAP key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "unvme/spec/fabrics.h"
#include "unvme/spec/tcp.h"
#include "lib/target/target.h"
#include "matrix.h"

#define NQN_A "nqn.2024-01.io.unvme.bad:a"
#define NQN_B "nqn.2024-01.io.unvme.bad:b"
#define HOST_A "nqn.2014-08.io.unvme.bad:host-a"
#define HOST_K "nqn.2014-08.io.unvme.bad:host-k"
#define KEY_K "DHHC-1:00:8SRZA8spsXPVxML7hS6sKfMtvKin3lmjGJ6bw45FRTaNSGcY:"

static struct unvme_target *target;
static uint16_t port;
static char msg[200];

struct conn {
	int fd;
	uint16_t cntlid;
};
static struct conn admin_a = {-1, 0}, io_a = {-1, 0};

static bool xfer(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;
	while (len) {
		struct pollfd pfd = {fd, out ? POLLOUT : POLLIN, 0};
		if (poll(&pfd, 1, 10000) != 1)
			return false;
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct nvme_tcp_icreq req = {.hdr = {.type = NVME_TCP_ICREQ, .hlen = 128, .plen = 128}};
	struct nvme_tcp_icresp rsp;
	if (!xfer(fd, &req, sizeof(req), true) || !xfer(fd, &rsp, sizeof(rsp), false) ||
	    rsp.hdr.type != NVME_TCP_ICRESP) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends a command with icd bytes of in-capsule data; returns its status, reading (and
 * dropping) any C2HData; -EIO when the connection failed. */
static long long cmd(int fd, const struct nvme_sqe *sqe, const void *icd, uint32_t icd_len, uint32_t *dw0)
{
	static uint8_t pdu[72 + 16384];
	struct nvme_tcp_cmd c = {.sqe = *sqe};
	c.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_CAPSULE_CMD, .hlen = 72,
				      .pdo = (uint8_t)(icd_len ? 72 : 0), .plen = 72 + icd_len};
	memcpy(pdu, &c, sizeof(c));
	if (icd_len)
		memcpy(pdu + 72, icd, icd_len);
	if (!xfer(fd, pdu, 72 + icd_len, true))
		return -EIO;
	for (;;) {
		struct nvme_tcp_hdr h;
		if (!xfer(fd, &h, sizeof(h), false) || h.plen < 8 || h.plen > sizeof(pdu))
			return -EIO;
		memcpy(pdu, &h, sizeof(h));
		if (!xfer(fd, pdu + 8, h.plen - 8, false))
			return -EIO;
		if (h.type == NVME_TCP_CAPSULE_RESP) {
			struct nvme_tcp_rsp r;
			memcpy(&r, pdu, sizeof(r));
			if (dw0)
				*dw0 = r.cqe.dw0;
			return NVME_STATUS_FROM_CQE(r.cqe.status);
		}
		if (h.type != NVME_TCP_C2H_DATA)
			return -EIO; /* an R2T or a TermReq: no case here asks for one */
	}
}

static struct nvme_sqe sgl_cmd(uint8_t opc, uint32_t nsid, uint8_t type, uint32_t len)
{
	struct nvme_sqe s = {.opc = opc, .nsid = nsid, .flags = NVME_CMD_FLAGS_PSDT_SGL};
	struct nvme_sgl_desc d = {.len = len, .type = type};
	memcpy(&s.prp1, &d, sizeof(d));
	return s;
}

static long long connect_to(int fd, const char *nqn, const char *host, uint16_t qid, uint16_t cntlid,
			    uint32_t *dw0)
{
	struct nvme_sqe s = sgl_cmd(NVME_FABRICS_OPC, 0, NVME_SGL_INCAPSULE, 1024);
	struct nvmf_connect_cmd *cc = (void *)&s;
	cc->fctype = NVMF_FCTYPE_CONNECT;
	cc->qid = qid;
	cc->sqsize = 31;
	struct nvmf_connect_data d = {.cntlid = cntlid};
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", nqn);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", host);
	return cmd(fd, &s, &d, sizeof(d), dw0);
}

static long long enable(int fd)
{
	struct nvme_sqe s = sgl_cmd(NVME_FABRICS_OPC, 0, NVME_SGL_TRANSPORT, 0);
	struct nvmf_property_cmd *p = (void *)&s;
	p->fctype = NVMF_FCTYPE_PROPERTY_SET;
	p->ofst = NVME_REG_CC;
	p->value = 0x460001;
	return cmd(fd, &s, NULL, 0, NULL);
}

/* HOST_A's admin queue on NQN_A and one I/O queue, made once and kept. */
static int admin(void)
{
	if (admin_a.fd >= 0)
		return admin_a.fd;
	uint32_t dw0 = 0;
	int fd = dial();
	if (fd < 0 || connect_to(fd, NQN_A, HOST_A, 0, NVMF_CNTLID_DYNAMIC, &dw0) || enable(fd)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	admin_a.cntlid = (uint16_t)dw0;
	return admin_a.fd = fd;
}

static int io(void)
{
	if (io_a.fd >= 0 || admin() < 0)
		return io_a.fd;
	int fd = dial();
	if (fd < 0 || connect_to(fd, NQN_A, HOST_A, 1, admin_a.cntlid, NULL)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return io_a.fd = fd;
}

/* The answer in words: the fabrics command statuses (NVMe Base 2.0 section 6), which
 * unvme_status_str leaves to the transport, by their names. */
static void name(long long st)
{
	const char *f = st == NVME_STATUS(NVME_SCT_CMD, NVMF_SC_INVALID_HOST)    ? "Connect Invalid Host"
			: st == NVME_STATUS(NVME_SCT_CMD, NVMF_SC_CONNECT_INVALID) ? "Connect Invalid Parameters"
			: st == NVME_STATUS(NVME_SCT_CMD, NVMF_SC_AUTH_REQUIRED)   ? "Authentication Required"
										   : NULL;
	if (st < 0)
		snprintf(msg, sizeof(msg), "%s", strerror((int)-st));
	else if (f)
		snprintf(msg, sizeof(msg), "%s", f);
	else
		snprintf(msg, sizeof(msg), "%s", unvme_status_str((int)st, 0));
}

static long long on(int fd, struct nvme_sqe s, const void *icd, uint32_t icd_len)
{
	if (fd < 0)
		return -ENOTCONN;
	long long st = cmd(fd, &s, icd, icd_len, NULL);
	name(st);
	return st;
}

static uint8_t data[8192];

static struct nvme_sqe rw(uint8_t opc, uint32_t nlb, uint8_t type, uint32_t len)
{
	struct nvme_sqe s = sgl_cmd(opc, 1, type, len);
	s.cdw12 = nlb - 1;
	return s;
}

static long long read_long_sgl(void) { return on(io(), rw(NVME_CMD_READ, 1, NVME_SGL_TRANSPORT, 65536), NULL, 0); }
static long long write_short_capsule(void) { return on(io(), rw(NVME_CMD_WRITE, 8, NVME_SGL_INCAPSULE, 512), data, 512); }
static long long write_capsule_short_of_sgl(void) { return on(io(), rw(NVME_CMD_WRITE, 8, NVME_SGL_INCAPSULE, 4096), data, 512); }
static long long read_past_two_pages(void) { return on(io(), rw(NVME_CMD_READ, 64, NVME_SGL_TRANSPORT, 8192), NULL, 0); }
static long long write_past_two_pages(void) { return on(io(), rw(NVME_CMD_WRITE, 64, NVME_SGL_INCAPSULE, 8192), data, 8192); }
static long long read_above_mdts(void) { return on(io(), rw(NVME_CMD_READ, 8192, NVME_SGL_TRANSPORT, 4u << 20), NULL, 0); }
static long long compare_long_sgl(void) { return on(io(), rw(NVME_CMD_COMPARE, 1, NVME_SGL_INCAPSULE, 1024), data, 1024); }
static long long zeroes_with_data(void) { return on(io(), rw(NVME_CMD_WRITE_ZEROES, 1, NVME_SGL_INCAPSULE, 512), data, 512); }

static long long dsm_long(void)
{
	struct nvme_sqe s = sgl_cmd(NVME_CMD_DSM, 1, NVME_SGL_INCAPSULE, 32); /* NR 0: 16 bytes */
	return on(io(), s, data, 32);
}

static long long identify_8k(void)
{
	struct nvme_sqe s = sgl_cmd(NVME_ADM_IDENTIFY, 0, NVME_SGL_TRANSPORT, 8192);
	s.cdw10 = 1;
	return on(admin(), s, NULL, 0);
}

static long long log_numd_mismatch(void)
{
	struct nvme_sqe s = sgl_cmd(NVME_ADM_GET_LOG_PAGE, 0, NVME_SGL_TRANSPORT, 4096);
	s.cdw10 = 15u << 16 | NVME_LOG_ERROR; /* 64 bytes asked */
	return on(admin(), s, NULL, 0);
}

static long long hostid_without_exhid(void)
{
	struct nvme_sqe s = sgl_cmd(NVME_ADM_GET_FEATURES, 0, NVME_SGL_TRANSPORT, 8);
	s.cdw10 = 0x81;
	return on(admin(), s, NULL, 0);
}

static long long admin_unknown_opcode(void) { return on(admin(), sgl_cmd(0x80, 0, NVME_SGL_TRANSPORT, 4096), NULL, 0); }
static long long io_unknown_opcode(void) { return on(io(), sgl_cmd(0x85, 1, NVME_SGL_INCAPSULE, 4096), data, 4096); }
static long long copy_cmd(void) { return on(io(), sgl_cmd(NVME_CMD_COPY, 1, NVME_SGL_INCAPSULE, 32), data, 32); }
static long long zone_append_on_block(void) { return on(io(), rw(NVME_CMD_ZONE_APPEND, 1, NVME_SGL_INCAPSULE, 512), data, 512); }
static long long kv_vendor_without_kv(void) { return on(io(), sgl_cmd(0x81, 0, NVME_SGL_INCAPSULE, 16), data, 16); }
static long long nsid_not_exported(void) { struct nvme_sqe s = rw(NVME_CMD_READ, 1, NVME_SGL_TRANSPORT, 512); s.nsid = 9; return on(io(), s, NULL, 0); }

static long long sgl_address_type(void)
{
	return on(io(), rw(NVME_CMD_READ, 1, 0x00 /* Data Block, address */, 512), NULL, 0);
}

static long long prp_pointer(void)
{
	struct nvme_sqe s = rw(NVME_CMD_READ, 1, NVME_SGL_TRANSPORT, 512);
	s.flags = 0; /* PSDT 0: PRPs */
	s.prp1 = 0x1000;
	return on(io(), s, NULL, 0);
}

static long long incapsule_read(void) { return on(io(), rw(NVME_CMD_READ, 1, NVME_SGL_INCAPSULE, 512), data, 512); }

static long long capsule_data_not_described(void)
{
	struct nvme_sqe s = sgl_cmd(NVME_ADM_KEEP_ALIVE, 0, NVME_SGL_TRANSPORT, 0);
	return on(admin(), s, data, 64);
}

static long long auth_recv_16k(void)
{
	struct nvme_sqe s = sgl_cmd(NVME_FABRICS_OPC, 0, NVME_SGL_TRANSPORT, 16384);
	struct nvmf_auth_cmd *a = (void *)&s;
	a->fctype = NVMF_FCTYPE_AUTH_RECV;
	a->secp = 0xe9;
	a->spsp0 = a->spsp1 = 1;
	a->len = 16384;
	return on(admin(), s, NULL, 0);
}

/* On a fresh connection, before any Connect. */
static long long before_connect(void)
{
	int fd = dial();
	struct nvme_sqe s = sgl_cmd(NVME_ADM_IDENTIFY, 0, NVME_SGL_TRANSPORT, 4096);
	s.cdw10 = 1;
	long long st = on(fd, s, NULL, 0);
	if (fd >= 0)
		close(fd);
	return st;
}

static long long connect_case(const char *nqn, const char *host)
{
	int fd = dial();
	if (fd < 0)
		return -ENOTCONN;
	long long st = connect_to(fd, nqn, host, 0, NVMF_CNTLID_DYNAMIC, NULL);
	name(st);
	close(fd);
	return st;
}

static long long connect_unknown(void) { return connect_case("nqn.2024-01.io.unvme.bad:none", HOST_A); }
static long long connect_forbidden(void) { return connect_case(NQN_B, HOST_A); }

/* Discovery as the keyed host, without authenticating. */
static long long discovery_unauthenticated(void)
{
	int fd = dial();
	if (fd < 0 || connect_to(fd, NVMF_DISCOVERY_NQN, HOST_K, 0, NVMF_CNTLID_DYNAMIC, NULL) || enable(fd))
		return -ENOTCONN;
	struct nvme_sqe s = sgl_cmd(NVME_ADM_GET_LOG_PAGE, 0, NVME_SGL_TRANSPORT, 4096);
	s.cdw10 = 1023u << 16 | NVME_LOG_DISCOVERY;
	long long st = on(fd, s, NULL, 0);
	close(fd);
	return st;
}

#define DSGL NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID)
#define FIELD NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)
#define OPCODE NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE)

static const struct mcase cases[] = {
	MCASE("Read of 1 block, 64 KiB SGL", "Read NLB 1 (512 B), transport SGL 65536", DSGL, "Data SGL Length Invalid", read_long_sgl),
	MCASE("Write of 8 blocks, 512 B in the capsule", "Write NLB 8, in-capsule SGL 512 + 512 B", DSGL, "Data SGL Length Invalid", write_short_capsule),
	MCASE("in-capsule data short of the SGL", "Write NLB 8, in-capsule SGL 4096 + 512 B", DSGL, "Data SGL Length Invalid", write_capsule_short_of_sgl),
	MCASE("Read past two pages, SGL of two", "Read NLB 64 (32 KiB), SGL 8192", DSGL, "Data SGL Length Invalid", read_past_two_pages),
	MCASE("Write past two pages (a planted PRP list)", "Write NLB 64, 8 KiB in the capsule", DSGL, "Data SGL Length Invalid", write_past_two_pages),
	MCASE("Read above MDTS", "Read NLB 8192 (4 MiB), SGL 4 MiB", FIELD, "Invalid Field", read_above_mdts),
	MCASE("Compare with more data than its block", "Compare NLB 1, 1024 B in the capsule", DSGL, "Data SGL Length Invalid", compare_long_sgl),
	MCASE("Write Zeroes with data", "Write Zeroes, 512 B in the capsule", DSGL, "Data SGL Length Invalid", zeroes_with_data),
	MCASE("DSM with more than its ranges", "DSM NR 0 (16 B), 32 B in the capsule", DSGL, "Data SGL Length Invalid", dsm_long),
	MCASE("Identify with an 8 KiB SGL", "Identify CNS 1, SGL 8192", DSGL, "Data SGL Length Invalid", identify_8k),
	MCASE("Get Log Page NUMD against the SGL", "Get Log Page NUMD 16 (64 B), SGL 4096", DSGL, "Data SGL Length Invalid", log_numd_mismatch),
	MCASE("Host Identifier without EXHID", "Get Features FID 81h, CDW11 0, SGL 8", FIELD, "Invalid Field", hostid_without_exhid),
	MCASE("unknown admin opcode with data", "opcode 80h, SGL 4096", OPCODE, "Invalid Command Opcode", admin_unknown_opcode),
	MCASE("unknown I/O opcode with data", "opcode 85h, 4 KiB in the capsule", OPCODE, "Invalid Command Opcode", io_unknown_opcode),
	MCASE("Copy (not served)", "Copy, 32 B in the capsule", OPCODE, "Invalid Command Opcode", copy_cmd),
	MCASE("Zone Append on a block namespace", "Zone Append NLB 1, 512 B", OPCODE, "Invalid Command Opcode", zone_append_on_block),
	MCASE("KV vendor store without a KV namespace", "opcode 81h, 16 B in the capsule", OPCODE, "Invalid Command Opcode", kv_vendor_without_kv),
	MCASE("namespace not exported", "Read NSID 9", NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT), "Invalid Namespace", nsid_not_exported),
	MCASE("SGL Data Block with an address", "Read, SGL type 00h", NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID), "SGL Descriptor Type Invalid", sgl_address_type),
	MCASE("PRP data pointer", "Read, PSDT 0, PRP1 1000h", FIELD, "Invalid Field", prp_pointer),
	MCASE("in-capsule data for a read", "Read NLB 1, in-capsule SGL 512", NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_OFFSET_INVALID), "SGL Offset Invalid", incapsule_read),
	MCASE("capsule data a command does not describe", "Keep Alive, SGL 0, 64 B in the capsule", DSGL, "Data SGL Length Invalid", capsule_data_not_described),
	MCASE("Authentication Receive of 16 KiB", "Auth Receive AL 16384", FIELD, "Invalid Field", auth_recv_16k),
	MCASE("Identify before Connect", "Identify on a new connection", NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CMD_SEQ_ERROR), "Command Sequence Error", before_connect),
	MCASE("Connect to an unknown subsystem", "Connect SUBNQN nqn...:none", NVME_STATUS(NVME_SCT_CMD, NVMF_SC_INVALID_HOST), "Connect Invalid Host", connect_unknown),
	MCASE("Connect to a forbidden subsystem (same answer)", "Connect SUBNQN of another host's subsystem", NVME_STATUS(NVME_SCT_CMD, NVMF_SC_INVALID_HOST), "Connect Invalid Host", connect_forbidden),
	MCASE("discovery log by a keyed host's NQN, unauthenticated", "Connect to discovery as HOST_K, Get Log Page 70h", NVME_STATUS(NVME_SCT_CMD, NVMF_SC_AUTH_REQUIRED), "Authentication Required", discovery_unauthenticated),
};

static const char *message(void) { return msg; }

static const char *result_name(long long rc)
{
	static char buf[64];
	if (rc < 0)
		snprintf(buf, sizeof(buf), "%s", rc == -EIO ? "-EIO" : rc == -ENOTCONN ? "-ENOTCONN" : "error");
	else
		snprintf(buf, sizeof(buf), "SCT %llxh SC %02llXh", rc >> 8, rc & 0xff);
	return buf;
}

static void before(void)
{
	msg[0] = 0;
}

int main(int argc, char **argv)
{
	setenv("UNVME_QUIET", "1", 1);
	char err[400];
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	int a = tgt_config_add_subsys(cfg, NQN_A, err, sizeof(err));
	int b = tgt_config_add_subsys(cfg, NQN_B, err, sizeof(err));
	if (tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err)) || a < 0 || b < 0 ||
	    tgt_config_add_ns(cfg, a, "emu://badtgt-a?ns=mem:16M:512", 0, 0, err, sizeof(err)) ||
	    tgt_config_add_ns(cfg, b, "emu://badtgt-b?ns=mem:1M:512", 0, 0, err, sizeof(err)) ||
	    tgt_config_add_host(cfg, a, HOST_A, NULL, NULL, NULL, NULL, err, sizeof(err)) ||
	    tgt_config_add_host(cfg, b, HOST_K, KEY_K, NULL, NULL, NULL, err, sizeof(err)) ||
	    unvme_target_start(cfg, &target, err, sizeof(err))) {
		fprintf(stderr, "target: %s\n", err);
		return 2;
	}
	/* refusals are logged on stderr: keep the table readable */
	fflush(stderr);
	FILE *devnull = freopen("/dev/null", "w", stderr);
	(void)devnull;
	port = unvme_target_port(target);
	memset(data, 0x5a, sizeof(data));
	struct matrix m = {"NVMe/TCP target", message, result_name, before, true};
	int r = matrix_run(&m, cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	if (admin_a.fd >= 0)
		close(admin_a.fd);
	if (io_a.fd >= 0)
		close(io_a.fd);
	unvme_target_stop(target);
	return r;
}
