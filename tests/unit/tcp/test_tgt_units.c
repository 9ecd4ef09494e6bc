/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The target's trust-boundary pieces on their own: the transfer length each command moves and
 * the check of the transport's descriptor against it (tgt_xfer.c), the connection's buffers
 * (ownership, zeroing, memory limits: tgt_buf.c), the connection limits (tgt_limits.c) and the
 * limit keys of the configuration (tgt_config.c). A target runs in the process for its
 * subsystems (no host connects to it); the connections here are built by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unvme/spec/features.h"
#include "unvme/spec/kv.h"
#include "unvme/spec/zns.h"
#include "lib/target/tgt.h"
#include "test_util.h"

#define DSGL NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LEN_INVALID)
#define FIELD NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD)
#define OPCODE NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE)

static struct unvme_target *t;

/* A: a 4 KiB-block namespace (1), a KV namespace (2), a zoned one (3); B: a 512-byte one. */
static void start(void)
{
	if (t)
		return;
	char err[300];
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err));
	int a = tgt_config_add_subsys(cfg, "nqn.unit:a", err, sizeof(err));
	int b = tgt_config_add_subsys(cfg, "nqn.unit:b", err, sizeof(err));
	tgt_config_add_ns(cfg, a, "emu://tu-a?ns=mem:8M:4096&ns=kv:1M&ns=zns:32M:4096", 0, 0, err, sizeof(err));
	tgt_config_add_ns(cfg, b, "emu://tu-b?ns=mem:1M:512", 0, 0, err, sizeof(err));
	tgt_config_allow_any(cfg, a);
	tgt_config_allow_any(cfg, b);
	tgt_config_set_limit(cfg, "max_connection_memory_mb", 4, err, sizeof(err));
	tgt_config_set_limit(cfg, "max_memory_mb", 8, err, sizeof(err));
	tgt_config_set_limit(cfg, "max_connections", 3, err, sizeof(err));
	tgt_config_set_limit(cfg, "max_connections_per_host", 2, err, sizeof(err));
	if (unvme_target_start(cfg, &t, err, sizeof(err))) {
		fprintf(stderr, "target: %s\n", err);
		exit(1);
	}
}

static int plan_on(int subsys, uint16_t qid, const struct nvme_sqe *sqe, struct tgt_xfer *x)
{
	struct tgt_conn c = {.t = t, .qid = qid, .ss = subsys < 0 ? &t->disc : &t->subs[subsys]};
	return tgt_xfer_plan(&c, sqe, x);
}

static struct nvme_sqe io(uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw12)
{
	return (struct nvme_sqe){.opc = opc, .nsid = nsid, .cdw10 = cdw10, .cdw11 = cdw11, .cdw12 = cdw12};
}

static void test_nvm_and_zns_lengths(void)
{
	start();
	struct tgt_xfer x;
	struct nvme_sqe s = io(NVME_CMD_READ, 1, 0, 0, 7);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 8 * 4096);
	CHECK(!x.to_ctrl && x.fills);
	s = io(NVME_CMD_WRITE, 1, 0, 0, 0);
	CHECK_EQ(plan_on(1, 1, &s, &x), 0); /* B: 512-byte blocks */
	CHECK_EQ(x.len, 512);
	CHECK(x.to_ctrl && !x.fills);
	s = io(NVME_CMD_COMPARE, 1, 0, 0, 1);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 8192);
	CHECK(x.to_ctrl);
	s = io(NVME_CMD_DSM, 1, 3, 0, 0); /* NR 3: four ranges */
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 64);
	for (uint8_t opc = 0; opc < 0x10; opc++) {
		if (opc != NVME_CMD_FLUSH && opc != NVME_CMD_WRITE_ZEROES && opc != NVME_CMD_VERIFY &&
		    opc != NVME_CMD_WRITE_UNCOR)
			continue;
		s = io(opc, 1, 0, 0, 100);
		CHECK_EQ(plan_on(0, 1, &s, &x), 0);
		CHECK_EQ(x.len, 0);
	}
	/* 2 MiB is MDTS: 512 blocks of 4 KiB pass, 513 do not */
	s = io(NVME_CMD_READ, 1, 0, 0, 511);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	s = io(NVME_CMD_READ, 1, 0, 0, 512);
	CHECK_EQ(plan_on(0, 1, &s, &x), FIELD);
	s = io(NVME_CMD_COPY, 1, 0, 0, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), OPCODE);
	s = io(0x85, 1, 0, 0, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), OPCODE);
	s = io(NVME_CMD_READ, 9, 0, 0, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	/* ZNS only on the zoned namespace */
	s = io(NVME_CMD_ZONE_APPEND, 1, 0, 0, 3);
	CHECK_EQ(plan_on(0, 1, &s, &x), OPCODE);
	s = io(NVME_CMD_ZONE_APPEND, 3, 0, 0, 3);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 4 * 4096);
	CHECK(x.to_ctrl);
	s = io(NVME_CMD_ZONE_MGMT_RECV, 3, 0, 0, 1023); /* NUMD 0's based */
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 4096);
	CHECK(!x.fills);
	s = io(NVME_CMD_ZONE_MGMT_SEND, 3, 0, 0, 0);
	s.cdw13 = NVME_ZSA_RESET;
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 0);
	s.cdw13 = NVME_ZSA_SET_ZDE;
	CHECK_EQ(plan_on(0, 1, &s, &x), FIELD);
}

static void test_kv_lengths(void)
{
	start();
	struct tgt_xfer x;
	struct nvme_sqe s = io(NVME_KVV_STORE, 0, 5, 7, 0); /* 5 dwords */
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 20);
	CHECK(x.to_ctrl);
	s = io(NVME_KVV_RETRIEVE, 1, 1024, 7, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 4096);
	CHECK(!x.to_ctrl && !x.fills);
	s = io(NVME_KVV_ITER_READ, 0, NVME_KVV_ITER_BUF / 4, 1, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, NVME_KVV_ITER_BUF);
	s = io(NVME_KVV_DELETE, 0, 99, 7, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 0);
	s = io(NVME_KVV_STORE, 0, 4, 7, 0);
	CHECK_EQ(plan_on(1, 1, &s, &x), OPCODE); /* B has no KV namespace */
	s = io(NVME_KV_STORE, 2, 100, 8, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 100);
	CHECK(x.to_ctrl);
	s = io(NVME_KV_LIST, 2, 4096, 0, 0);
	CHECK_EQ(plan_on(0, 1, &s, &x), 0);
	CHECK_EQ(x.len, 4096);
	s = io(NVME_CMD_COMPARE, 2, 0, 0, 0); /* not a KV command set opcode */
	CHECK_EQ(plan_on(0, 1, &s, &x), OPCODE);
	s = io(NVME_KVV_RETRIEVE, 1, (4u << 20) / 4, 7, 0); /* above MDTS */
	CHECK_EQ(plan_on(0, 1, &s, &x), FIELD);
}

static void test_admin_and_fabrics_lengths(void)
{
	start();
	struct tgt_xfer x;
	struct nvme_sqe s = io(NVME_ADM_IDENTIFY, 0, 1, 0, 0);
	CHECK_EQ(plan_on(0, 0, &s, &x), 0);
	CHECK_EQ(x.len, 4096);
	s = io(NVME_ADM_GET_LOG_PAGE, 0, 15u << 16 | 2, 0, 0);
	CHECK_EQ(plan_on(0, 0, &s, &x), 0);
	CHECK_EQ(x.len, 64);
	s = io(NVME_ADM_GET_LOG_PAGE, 0, 0xffffu << 16 | 2, 4, 0); /* NUMDU: 1.25 MiB */
	CHECK_EQ(plan_on(0, 0, &s, &x), FIELD);
	s = io(NVME_ADM_GET_FEATURES, 0, NVME_FEAT_HOST_ID, 1, 0);
	CHECK_EQ(plan_on(0, 0, &s, &x), 0);
	CHECK_EQ(x.len, 16);
	s.cdw11 = 0; /* 64-bit host ids are not kept */
	CHECK_EQ(plan_on(0, 0, &s, &x), FIELD);
	s = io(NVME_ADM_SET_FEATURES, 0, NVME_FEAT_TIMESTAMP, 0, 0);
	CHECK_EQ(plan_on(0, 0, &s, &x), FIELD);
	s = io(NVME_ADM_SET_FEATURES, 0, NVME_FEAT_KATO, 5000, 0);
	CHECK_EQ(plan_on(-1, 0, &s, &x), 0); /* discovery knows KATO */
	s = io(NVME_ADM_SET_FEATURES, 0, NVME_FEAT_NUM_QUEUES, 0, 0);
	CHECK_EQ(plan_on(-1, 0, &s, &x), FIELD); /* ... not Number of Queues */
	s = io(NVME_ADM_ABORT, 0, 0, 0, 0);
	CHECK_EQ(plan_on(-1, 0, &s, &x), OPCODE);
	s = io(NVME_ADM_FORMAT_NVM, 0, 0, 0, 0);
	CHECK_EQ(plan_on(0, 0, &s, &x), OPCODE);
	struct nvme_sqe f = {.opc = NVME_FABRICS_OPC};
	((struct nvmf_cmd *)&f)->fctype = NVMF_FCTYPE_CONNECT;
	CHECK_EQ(plan_on(0, 0, &f, &x), 0);
	CHECK_EQ(x.len, 1024);
	CHECK(x.to_ctrl);
	((struct nvmf_cmd *)&f)->fctype = NVMF_FCTYPE_AUTH_SEND;
	f.cdw11 = 80;
	CHECK_EQ(plan_on(0, 0, &f, &x), 0);
	CHECK_EQ(x.len, 80);
	((struct nvmf_cmd *)&f)->fctype = NVMF_FCTYPE_AUTH_RECV;
	f.cdw11 = 8193;
	CHECK_EQ(plan_on(0, 0, &f, &x), FIELD);
	((struct nvmf_cmd *)&f)->fctype = 0x7e;
	CHECK_EQ(plan_on(0, 0, &f, &x), OPCODE);
}

static struct nvme_sqe with_sgl(struct nvme_sqe s, uint8_t type, uint32_t len)
{
	struct nvme_sgl_desc d = {.len = len, .type = type};
	s.flags = NVME_CMD_FLAGS_PSDT_SGL;
	memcpy(&s.prp1, &d, sizeof(d));
	return s;
}

static void test_sgl_against_the_command(void)
{
	struct tgt_xfer rd = {.len = 4096}, wr = {.len = 4096, .to_ctrl = true}, none = {0};
	uint32_t off;
	struct nvme_sqe s = with_sgl(io(NVME_CMD_READ, 1, 0, 0, 0), NVME_SGL_TRANSPORT, 4096);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &rd, 0, &off), 0);
	s = with_sgl(s, NVME_SGL_TRANSPORT, 65536);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &rd, 0, &off), DSGL);
	s = with_sgl(s, NVME_SGL_TRANSPORT, 4096);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &rd, 64, &off), DSGL); /* capsule data nobody describes */
	s = with_sgl(s, NVME_SGL_INCAPSULE, 4096);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &rd, 4096, &off), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_OFFSET_INVALID));
	CHECK_EQ(tgt_xfer_check_sgl(&s, &wr, 4096, &off), 0);
	CHECK_EQ(off, 0);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &wr, 512, &off), DSGL); /* short in-capsule data */
	s = with_sgl(s, NVME_SGL_INCAPSULE, 512);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &wr, 512, &off), DSGL); /* short SGL */
	s = with_sgl(s, 0x00, 4096);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &wr, 0, &off), NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_SGL_DESC_TYPE_INVALID));
	s = with_sgl(s, NVME_SGL_TRANSPORT, 4096);
	s.flags = 0; /* PRPs */
	CHECK_EQ(tgt_xfer_check_sgl(&s, &wr, 0, &off), FIELD);
	s = with_sgl(io(NVME_CMD_FLUSH, 1, 0, 0, 0), NVME_SGL_TRANSPORT, 0);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &none, 0, &off), 0);
	s = with_sgl(s, NVME_SGL_INCAPSULE, 0);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &none, 0, &off), 0);
	/* a vendor KV key of 20 bytes in the capsule: after the value (at a dword), or alone */
	struct tgt_xfer v = {.len = 10, .to_ctrl = true};
	s = with_sgl(io(NVME_KVV_STORE, 0, 3, 19, 0), NVME_SGL_INCAPSULE, 10);
	struct nvme_sgl_desc key = {.addr = 12, .len = 20, .type = NVME_SGL_INCAPSULE};
	memcpy(&s.cdw12, &key, sizeof(key));
	CHECK_EQ(tgt_xfer_check_sgl(&s, &v, 32, &off), 0);
	CHECK_EQ(tgt_xfer_check_sgl(&s, &v, 40, &off), FIELD);
	key.addr = 10; /* not at the dword after the value */
	memcpy(&s.cdw12, &key, sizeof(key));
	CHECK_EQ(tgt_xfer_check_sgl(&s, &v, 30, &off), FIELD);
	s = with_sgl(io(NVME_KVV_RETRIEVE, 0, 3, 19, 0), NVME_SGL_TRANSPORT, 12);
	key.addr = 0;
	memcpy(&s.cdw12, &key, sizeof(key));
	struct tgt_xfer r = {.len = 12};
	CHECK_EQ(tgt_xfer_check_sgl(&s, &r, 20, &off), 0);
	CHECK_EQ(off, 12); /* the key goes after the value's room */
	key.len = 19;
	memcpy(&s.cdw12, &key, sizeof(key));
	CHECK_EQ(tgt_xfer_check_sgl(&s, &r, 20, &off), FIELD);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Buffers: a connection's own, zeroed when they come from elsewhere, within both limits. */
static void test_buffers(void)
{
	start();
	static struct tgt_poller p;
	p.t = t;
	p.pool.limit = 8u << 20;
	p.pressure_seen = atomic_load(&t->mem_pressure);
	struct tgt_conn a = {.t = t, .p = &p, .peer = "a"}, b = {.t = t, .p = &p, .peer = "b"},
			c = {.t = t, .p = &p, .peer = "c"};
	const uint32_t M = 1u << 20;
	uint64_t mem0 = atomic_load(&t->mem);
	void *x[4], *y, *bb[2], *cc[3];
	uint32_t cap;
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(tgt_buf_get(&a, M, &x[i], &cap), 0);
		CHECK_EQ(cap, M);
		CHECK(all_zero(x[i], cap));
		memset(x[i], 0xa5, cap); /* host A's data */
	}
	/* 4 MiB is a's limit: a fifth buffer waits */
	CHECK_EQ(tgt_buf_get(&a, 4096, &y, &cap), -EAGAIN);
	CHECK_EQ(a.bufs.owned, 4 * M);
	/* one back: a's next command of that size gets it, its own, as a left it */
	tgt_buf_put(&a, x[3], M);
	CHECK_EQ(tgt_buf_get(&a, M, &y, &cap), 0);
	CHECK(y == x[3] && ((uint8_t *)y)[100] == 0xa5);
	/* one of another size: a gives a free one back (to the pool, zeroed) to make room */
	tgt_buf_put(&a, y, M);
	CHECK_EQ(tgt_buf_get(&a, 8192, &y, &cap), 0);
	CHECK(all_zero(y, cap));
	CHECK_EQ(a.bufs.owned, 3 * M + 8192);
	tgt_buf_put(&a, y, cap);
	/* b's first buffer is that one: zeroed, none of a's data */
	CHECK_EQ(tgt_buf_get(&b, M, &bb[0], &cap), 0);
	CHECK(bb[0] == x[3] && all_zero(bb[0], cap));
	CHECK_EQ(tgt_buf_get(&b, M, &bb[1], &cap), 0);
	CHECK_EQ(tgt_buf_get(&c, M, &cc[0], &cap), 0);
	CHECK_EQ(tgt_buf_get(&c, M, &cc[1], &cap), 0);
	/* the total (8 MiB) is reached: c waits, within its own limit, and asks for memory */
	uint32_t pressure = atomic_load(&t->mem_pressure);
	CHECK_EQ(tgt_buf_get(&c, M, &cc[2], &cap), -EAGAIN);
	CHECK(atomic_load(&t->mem_pressure) != pressure);
	CHECK(atomic_load(&t->mem) - mem0 <= 8 * M + 8192);
	/* a ends: its buffers go to the pool zeroed, and c's next one is one of them */
	for (int i = 0; i < 3; i++)
		tgt_buf_put(&a, x[i], M);
	p.pressure_seen = atomic_load(&t->mem_pressure);
	tgt_bufs_release(&a);
	CHECK_EQ(a.bufs.owned, 0);
	CHECK_EQ(p.pool.bytes, 3 * M + 8192);
	CHECK_EQ(tgt_buf_get(&c, M, &cc[2], &cap), 0);
	CHECK(all_zero(cc[2], cap));
	for (int i = 0; i < 2; i++)
		tgt_buf_put(&b, bb[i], M);
	for (int i = 0; i < 3; i++)
		tgt_buf_put(&c, cc[i], M);
	tgt_bufs_release(&b);
	tgt_bufs_release(&c);
	tgt_bufpool_free(t, &p.pool);
	CHECK_EQ(atomic_load(&t->mem), mem0);
}

static void test_connection_limits(void)
{
	start();
	struct tgt_addr h1 = {{2, 10, 0, 0, 1}}, h2 = {{2, 10, 0, 0, 2}};
	uint32_t n0 = atomic_load(&t->nconns);
	CHECK(tgt_conn_admit(t, &h1, "h1"));
	CHECK(tgt_conn_admit(t, &h1, "h1"));
	CHECK(!tgt_conn_admit(t, &h1, "h1")); /* 2 per host */
	CHECK(tgt_conn_admit(t, &h2, "h2"));
	CHECK(!tgt_conn_admit(t, &h2, "h2")); /* 3 in all */
	CHECK_EQ(atomic_load(&t->nconns), n0 + 3);
	tgt_conn_retire(t, &h1);
	CHECK(tgt_conn_admit(t, &h2, "h2"));
	tgt_conn_retire(t, &h1);
	tgt_conn_retire(t, &h2);
	tgt_conn_retire(t, &h2);
	CHECK_EQ(atomic_load(&t->nconns), n0);
	CHECK_EQ(t->nhosts, 0);
	/* a limit hit is logged once a minute: the next within it is counted, not logged */
	CHECK(atomic_load(&t->lim_host_conns.last_ms) != 0);
	CHECK_EQ(atomic_load(&t->lim_host_conns.hits), 0);
	CHECK(tgt_conn_admit(t, &h1, "h1"));
	CHECK(tgt_conn_admit(t, &h1, "h1"));
	CHECK(!tgt_conn_admit(t, &h1, "h1"));
	CHECK_EQ(atomic_load(&t->lim_host_conns.hits), 1);
	tgt_conn_retire(t, &h1);
	tgt_conn_retire(t, &h1);
}

static void test_limit_keys(void)
{
	char err[200];
	struct tgt_config *cfg = tgt_config_new();
	CHECK_EQ(cfg->lim.max_conns, TGT_DEF_MAX_CONNS);
	CHECK_EQ(cfg->lim.memory, (uint64_t)TGT_DEF_MEMORY_MB << 20);
	CHECK_EQ(tgt_config_set_limit(cfg, "max_queue_depth", 64, err, sizeof(err)), 0);
	CHECK_EQ(cfg->lim.queue_depth, 64);
	CHECK_EQ(tgt_config_set_limit(cfg, "max_queue_depth", 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "\"max_queue_depth\" must be 2..1024"));
	CHECK_EQ(tgt_config_set_limit(cfg, "max_memory_mb", 64, err, sizeof(err)), 0);
	CHECK_EQ(cfg->lim.memory, 64ull << 20);
	CHECK_EQ(tgt_config_set_limit(cfg, "max_connection_memory_mb", 3, err, sizeof(err)), -EINVAL);
	CHECK_EQ(tgt_config_set_limit(cfg, "max_connection_memory_mb", 128, err, sizeof(err)), 0);
	CHECK_EQ(tgt_config_check(cfg, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "is above"));
	CHECK_EQ(tgt_config_set_limit(cfg, "max_conections", 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown limit"));
	tgt_config_free(cfg);
	/* in the JSON file */
	char path[] = "/tmp/unvme-tgt-units-XXXXXX";
	int fd = mkstemp(path);
	const char *j = "{ \"max_connections\": 7, \"icreq_timeout_ms\": 250, \"subsystems\": [] }";
	CHECK((size_t)write(fd, j, strlen(j)) == strlen(j));
	close(fd);
	CHECK_EQ(tgt_config_load(path, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg->lim.max_conns, 7);
	CHECK_EQ(cfg->lim.icreq_timeout_ms, 250);
	tgt_config_free(cfg);
	fd = open(path, O_WRONLY | O_TRUNC);
	j = "{ \"max_connections\": 0, \"subsystems\": [] }";
	CHECK((size_t)write(fd, j, strlen(j)) == strlen(j));
	close(fd);
	CHECK_EQ(tgt_config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "\"max_connections\" must be 1.."));
	unlink(path);
}

static void test_teardown(void)
{
	unvme_target_stop(t);
	t = NULL;
}

TEST_MAIN(TEST(test_nvm_and_zns_lengths), TEST(test_kv_lengths), TEST(test_admin_and_fabrics_lengths),
	  TEST(test_sgl_against_the_command), TEST(test_buffers), TEST(test_connection_limits),
	  TEST(test_limit_keys), TEST(test_teardown))
