/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the server of a shared controller (lib/driver/mp/mp_server.c,
 * mp_requests.c), fed what a buggy or hostile client could send. The process opens an
 * emulated device as its primary (UNVME_MP=primary) and so serves it; each input is a session
 * on a new connection: a sequence of messages, each {u16 length (bit 15: send the fuzzer's
 * memfd with it), bytes}, sent as one packet, its answer read before the next (descriptors
 * that come with it, the doorbell window and the notice socket, are closed). Afterwards the
 * connection is closed.
 *
 * Oracle: every answer is a whole reply whose rc is 0, an NVMe status or a negative errno
 * with a message; once the session is over the server has released everything of it (no
 * client connected, every queue id free again: a queue pair can be created and destroyed)
 * and still answers admin commands. A card the session pulled out (MP_UNPLUG) is put back
 * first. Vendor fault injection (admin opcode C1h), STOP and PLUG with a card URI are kept
 * out: making the device swallow commands is its purpose, a primary refuses STOP anyway, and
 * a card URI names files to create.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/driver/ctrlr.h"
#include "lib/driver/mp/mp.h"
#include "unvme/emu.h"
#include "unvme/unvme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define DEVICE "emu://fuzzmp?ns=mem:16M:512"

static struct unvme_ctrlr *ctrlr;
static struct mp_where where;
static int memfd = -1;
static char run_dir[128];

static void cleanup(void)
{
	unvme_ctrlr_close(ctrlr);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run_dir);
	if (system(cmd) != 0)
		(void)0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("UNVME_QUIET", "1", 1);
	snprintf(run_dir, sizeof(run_dir), "/dev/shm/unvme-fuzz-mp-%d", (int)getpid());
	setenv("UNVME_RUN_DIR", run_dir, 1);
	setenv("UNVME_ADMIN_TIMEOUT_MS", "2000", 1);
	setenv("UNVME_MP", "primary", 1); /* the server in this process, not a device process */
	if (unvme_ctrlr_open(DEVICE, NULL, &ctrlr) != 0 || !ctrlr->mp) {
		fprintf(stderr, "fuzz_mp: cannot open %s as its primary: %s\n", DEVICE, unvme_errmsg());
		abort();
	}
	if (mp_where(ctrlr->address, &where) != 0)
		abort();
	/* a sealed memfd as the secondary's DMA memory would be, and one page past its end */
	memfd = memfd_create("fuzz-mp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, 4 << 20) != 0 ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
		abort();
	atexit(cleanup);
	return 0;
}

static int connect_primary(void)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&where.sock, sizeof(where.sock)) != 0)
		abort();
	return s;
}

static void released(void)
{
	/* the server drops the session on its thread: wait for it (bounded) */
	for (int i = 0; i < 5000 && mp_server_sessions(ctrlr); i++)
		usleep(1000);
	if (mp_server_sessions(ctrlr))
		abort();
	if (unvme_ctrlr_is_removed(ctrlr) && unvme_emu_plug(DEVICE, NULL) != 0)
		abort(); /* the card the session pulled out goes back in */
	for (uint32_t q = 1; q <= ctrlr->max_io_queues; q++)
		if (ctrlr->qid_used[q])
			abort(); /* a queue id the session took was not given back */
	struct unvme_qpair *qp;
	if (unvme_qpair_create(ctrlr, NULL, &qp) != 0)
		abort();
	unvme_qpair_destroy(qp);
	struct nvme_id_ctrl id;
	if (unvme_identify(ctrlr, NVME_CNS_CTRL, 0, 0, &id) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int s = connect_primary();
	size_t at = 0;
	for (int msgs = 0; at + 2 <= size && msgs < 32; msgs++) {
		uint16_t hdr = (uint16_t)(data[at] | data[at + 1] << 8);
		at += 2;
		size_t len = hdr & 0x7fffu;
		if (len > sizeof(struct mp_req) + 16)
			len = sizeof(struct mp_req) + 16;
		if (len > size - at)
			len = size - at;
		_Alignas(struct mp_req) uint8_t msg[sizeof(struct mp_req) + 16] = {0};
		memcpy(msg, data + at, len);
		at += len;
		struct mp_req *rq = (struct mp_req *)msg;
		if (len >= offsetof(struct mp_req, admin) + 1 && rq->op == MP_ADMIN && rq->admin.sqe.opc == 0xc1)
			continue;
		if (len >= sizeof(uint32_t) && rq->op == MP_STOP)
			continue;
		/* a card URI names files the server would create (the fuzzer's own user, but not
		 * what it is here to test): the same card only */
		if (len >= offsetof(struct mp_req, card.uri) && rq->op == MP_PLUG && rq->card.len)
			continue;
		if (len == 0)
			len = 1; /* an empty packet reads as end of stream */
		int with = memfd;
		if (mp_send(s, msg, len, &with, (hdr & 0x8000u) ? 1 : 0) != 0)
			break;
		struct mp_rep rep;
		int fds[MP_MAX_FDS];
		ssize_t n = mp_recv(s, &rep, sizeof(rep), fds, MP_MAX_FDS, 20000);
		for (unsigned k = 0; k < MP_MAX_FDS; k++)
			if (fds[k] >= 0)
				close(fds[k]);
		if (n == 0 || n == -ECONNRESET)
			break; /* the server ended the session (a malformed request) */
		if (n != (ssize_t)sizeof(rep))
			abort(); /* a torn or missing answer */
		if (rep.rc < 0 && !memchr(rep.msg, 0, sizeof(rep.msg)))
			abort();
	}
	close(s);
	released();
	return 0;
}
