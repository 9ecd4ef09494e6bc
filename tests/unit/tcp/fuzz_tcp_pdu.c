/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the NVMe/TCP PDU parsers, both ends:
 *   - first byte even: the bytes are what a host sends to the target. They go through a
 *     socket pair into a target connection (ICReq, headers, capsules, in-capsule and H2C
 *     data, Connect, admin and I/O commands to an emulated memory namespace). With bit 1 of
 *     the first byte set, a valid ICReq, admin Connect and CC.EN = 1 come first, so the
 *     fuzzer starts past connection setup.
 *   - first byte odd: the bytes are what a controller sends to the host, received by a host
 *     queue with a read command outstanding (C2HData, R2T, responses, TermReqs).
 * Nothing may crash, hang or leak; tcp_pdu_check must also agree with itself on every header.
 * The test suite runs it for a bounded time (meson test tcp_fuzz, with -close_fd_mask=2: the
 * target's refusal log stays quiet, crash reports still show); run it longer by hand:
 *   build/tests/unit/tcp/fuzz_tcp_pdu -max_total_time=600 -close_fd_mask=2
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "lib/transport/tcp/tcp_ctrlr.h"
#include "lib/transport/tcp/tcp_queue.h"
#include "lib/target/tgt.h"
#include "connect_pdu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct unvme_target *target;

static void start_target(void)
{
	char err[256];
	setenv("UNVME_QUIET", "1", 1);
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	int si = tgt_config_add_subsys(cfg, "nqn.fuzz", err, sizeof(err));
	tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err));
	tgt_config_add_ns(cfg, si, "emu://fuzz?ns=mem:4M", 0, 0, err, sizeof(err));
	tgt_config_allow_any(cfg, si);
	if (unvme_target_start(cfg, &target, err, sizeof(err))) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
}

/* ICReq, admin Connect to nqn.fuzz, Property Set CC.EN = 1. */
static size_t session_prefix(uint8_t *out)
{
	size_t at = 0;
	struct nvme_tcp_icreq req = {0};
	req.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_ICREQ, .hlen = 128, .plen = 128};
	memcpy(out + at, &req, sizeof(req));
	at += sizeof(req);
	connect_pdu(out + at, "nqn.fuzz", "nqn.fuzz-host");
	at += CONNECT_PDU_LEN;
	struct nvme_tcp_cmd p = {0};
	p.hdr = (struct nvme_tcp_hdr){.type = NVME_TCP_CAPSULE_CMD, .hlen = 72, .plen = 72};
	struct nvmf_property_cmd *pc = (void *)&p.sqe;
	pc->opc = NVME_FABRICS_OPC;
	pc->flags = NVME_CMD_FLAGS_PSDT_SGL;
	pc->cid = 2;
	pc->fctype = NVMF_FCTYPE_PROPERTY_SET;
	pc->ofst = NVME_REG_CC;
	pc->value = 0x460001;
	memcpy(out + at, &p, sizeof(p));
	return at + sizeof(p);
}

static void feed_target(const uint8_t *data, size_t size, bool prefix)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		return;
	struct tgt_conn *c = tgt_conn_new(target, sv[0]);
	if (!c) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	static uint8_t pre[2048];
	if (prefix)
		(void)!write(sv[1], pre, session_prefix(pre));
	(void)!write(sv[1], data, size);
	shutdown(sv[1], SHUT_WR);
	/* until the connection ends or stops making progress; drain what it sends back */
	char sink[65536];
	for (int idle = 0; !c->closing && idle < 4;) {
		idle = tgt_conn_service(c) ? 0 : idle + 1;
		while (read(sv[1], sink, sizeof(sink)) > 0)
			;
	}
	for (int i = 0; i < 8 && tcp_txq_count(&c->tx); i++) {
		tgt_conn_service(c);
		while (read(sv[1], sink, sizeof(sink)) > 0)
			;
	}
	tgt_conn_free(c);
	close(sv[1]);
}

static void feed_host(const uint8_t *data, size_t size)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		return;
	static struct tcp_ctrlr tc; /* only its address matters to a non-admin queue */
	struct tcp_queue q;
	if (tcp_queue_init(&q, &tc, 1, 0)) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	q.conn.fd = sv[0];
	q.conn.cpda = q.conn.hpda = 4;
	q.conn.maxh2cdata = 4096;
	q.conn.hdgst = data[0] & 2;
	q.conn.ddgst = data[0] & 4;
	static uint8_t buf[65536];
	/* a read (or write) of 64 KiB outstanding under the synchronous command id */
	q.sync_active = true;
	q.sync.buf = buf;
	q.sync.len = sizeof(buf);
	q.sync.incapsule = data[0] & 8;
	(void)!write(sv[1], data + 1, size - 1);
	shutdown(sv[1], SHUT_WR);
	for (int i = 0; i < 64 && !atomic_load(&q.dead); i++) {
		tcp_rx_pump(&q);
		tcp_tx_flush(&q);
		char sink[4096];
		while (read(sv[1], sink, sizeof(sink)) > 0)
			;
	}
	tcp_queue_fini(&q);
	close(sv[1]);
}

/* Every header the checker passes must be self-consistent. */
static void check_header(const uint8_t *data, size_t size)
{
	if (size < 9)
		return;
	struct nvme_tcp_hdr h; /* aligned, as the receive paths keep headers */
	memcpy(&h, data + 1, sizeof(h));
	struct tcp_pdu_info info;
	struct tcp_pdu_rules r = {.controller = data[0] & 1, .hdgst = data[0] & 2, .ddgst = data[0] & 4,
				  .pda = 4};
	if (tcp_pdu_check(&h, &r, &info) == TCP_PDU_OK) {
		if (info.hdr_bytes > info.plen || info.data_len > info.plen || info.hdr_bytes > 256)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!target)
		start_target();
	check_header(data, size);
	if (data[0] & 1)
		feed_host(data, size);
	else
		feed_target(data + 1, size - 1, data[0] & 2);
	return 0;
}
