/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client's channel to the process that runs its device (lib/driver/mp/mp_channel.c), over a
 * socket pair whose other end is a server that lies: every reply is filed with its request
 * only after it is checked (replies to requests never sent or answered already, descriptors
 * where none belong, a message without its end, a reply cut short), a kept request is taken
 * once by its owner and a newer one supersedes an older one of the same owner, one taken too
 * late is abandoned, and a synchronous call files the replies of others that come first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/driver/mp/mp.h"
#include "lib/driver/mp/mp_channel.h"
#include "unvme/unvme.h"
#include "test_util.h"

struct chan_seen {
	int calls;
	uint16_t status;
};

static void chan_cb(void *arg, const struct nvme_cqe *cpl)
{
	struct chan_seen *s = arg;
	s->calls++;
	s->status = cpl->status;
}

/* The request the client sent (its id), read at the server's end. */
static uint32_t chan_request(int srv, uint32_t op)
{
	struct mp_req rq;
	memset(&rq, 0, sizeof(rq));
	ssize_t n = mp_recv(srv, &rq, sizeof(rq), NULL, 0, 5000);
	CHECK_EQ(n, (ssize_t)mp_req_len(op, 0));
	CHECK_EQ(rq.op, op);
	CHECK(rq.id != 0);
	return rq.id;
}

static void chan_reply(int srv, uint32_t id, int32_t rc, int fd)
{
	struct mp_rep rep;
	memset(&rep, 0, sizeof(rep));
	rep.id = id;
	rep.rc = rc;
	CHECK_EQ(mp_send(srv, &rep, sizeof(rep), &fd, fd >= 0 ? 1 : 0), 0);
}

#define INTERNAL_DNR (NVME_CQE_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) | 0x8000u)

static void test_client_checks_every_reply(void)
{
	int sv[2];
	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	struct mp_chan *ch = calloc(1, sizeof(*ch));
	REQUIRE(ch != NULL);
	mp_chan_init(ch, sv[0], "chan-test");
	struct mp_req rq = { .op = MP_ADMIN };
	rq.admin.sqe.opc = NVME_ADM_DELETE_SQ;
	struct chan_seen a = {0}, b = {0}, f = {0};
	/* a reply naming a request never sent, then one answering it twice: dropped */
	REQUIRE(mp_chan_send(ch, &rq, false, chan_cb, &a, 0) == 0);
	uint32_t id = chan_request(sv[1], MP_ADMIN);
	chan_reply(sv[1], id + 100, 0, -1);
	mp_chan_reap(ch);
	CHECK_EQ(a.calls, 0);
	CHECK_EQ(ch->strays, 1);
	chan_reply(sv[1], id, NVME_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID), -1);
	chan_reply(sv[1], id, 0, -1);
	mp_chan_reap(ch);
	CHECK_EQ(a.calls, 1); /* once, with the first answer */
	CHECK_EQ(a.status, NVME_CQE_STATUS(NVME_SCT_CMD, NVME_SC_INVALID_QID));
	CHECK_EQ(ch->strays, 2);
	/* a descriptor with the reply of a request that takes none: refused, closed */
	REQUIRE(mp_chan_send(ch, &rq, false, chan_cb, &b, 0) == 0);
	id = chan_request(sv[1], MP_ADMIN);
	int extra = dup(sv[1]);
	chan_reply(sv[1], id, 0, extra);
	close(extra);
	mp_chan_reap(ch);
	CHECK_EQ(b.calls, 1);
	CHECK_EQ(b.status, INTERNAL_DNR);
	/* a message without its end, from a server that could not do it */
	b.calls = 0;
	REQUIRE(mp_chan_send(ch, &rq, false, chan_cb, &b, 0) == 0);
	id = chan_request(sv[1], MP_ADMIN);
	struct mp_rep bad;
	memset(&bad, 'A', sizeof(bad));
	bad.id = id;
	bad.rc = -EIO;
	CHECK_EQ(mp_send(sv[1], &bad, sizeof(bad), NULL, 0), 0);
	mp_chan_reap(ch);
	CHECK_EQ(b.calls, 1);
	CHECK_EQ(b.status, INTERNAL_DNR);
	/* a kept request: out until its reply, then taken once; an owner forgotten before its
	 * reply came hears nothing */
	struct mp_req qc = { .op = MP_QUEUE_CREATE };
	REQUIRE(mp_chan_send(ch, &qc, true, NULL, &a, 7) == 0);
	REQUIRE(mp_chan_send(ch, &rq, false, chan_cb, &f, 0) == 0);
	uint32_t qid = chan_request(sv[1], MP_QUEUE_CREATE), fid = chan_request(sv[1], MP_ADMIN);
	struct mp_rep rep;
	uint32_t tag = 0;
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), -EINPROGRESS);
	mp_chan_forget(ch, &f, &f + 1);
	struct mp_rep made;
	memset(&made, 0, sizeof(made));
	made.id = qid;
	made.queue.qid = 3;
	made.queue.epoch = 9;
	CHECK_EQ(mp_send(sv[1], &made, sizeof(made), NULL, 0), 0);
	chan_reply(sv[1], fid, 0, -1);
	mp_chan_reap(ch);
	CHECK_EQ(f.calls, 0);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), 0);
	CHECK(rep.queue.qid == 3 && rep.queue.epoch == 9 && tag == 7);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), -ENOENT);
	/* one taken too late is abandoned: its reply, when it comes, is dropped quietly */
	REQUIRE(mp_chan_send(ch, &qc, true, NULL, &a, 0) == 0);
	qid = chan_request(sv[1], MP_QUEUE_CREATE);
	test_sleep_ms(20);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 5), -ETIMEDOUT);
	chan_reply(sv[1], qid, 0, -1);
	mp_chan_reap(ch);
	CHECK_EQ(ch->strays, 2);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), -ENOENT);
	/* a second kept request of the same owner supersedes the first (a queue created again
	 * after it was lost once more, across a card's removal): the first's reply, answered
	 * already or still to come, is never what the owner takes */
	REQUIRE(mp_chan_send(ch, &qc, true, NULL, &a, 1) == 0);
	uint32_t old_id = chan_request(sv[1], MP_QUEUE_CREATE);
	chan_reply(sv[1], old_id, -ENODEV, -1);
	mp_chan_reap(ch);
	REQUIRE(mp_chan_send(ch, &qc, true, NULL, &a, 2) == 0);
	uint32_t new_id = chan_request(sv[1], MP_QUEUE_CREATE);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), -EINPROGRESS);
	memset(&made, 0, sizeof(made));
	made.id = new_id;
	made.queue.qid = 4;
	CHECK_EQ(mp_send(sv[1], &made, sizeof(made), NULL, 0), 0);
	mp_chan_reap(ch);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), 0);
	CHECK(rep.rc == 0 && rep.queue.qid == 4 && tag == 2);
	REQUIRE(mp_chan_send(ch, &qc, true, NULL, &a, 3) == 0);
	old_id = chan_request(sv[1], MP_QUEUE_CREATE);
	REQUIRE(mp_chan_send(ch, &qc, true, NULL, &a, 4) == 0);
	new_id = chan_request(sv[1], MP_QUEUE_CREATE);
	made.id = old_id;
	made.queue.qid = 5;
	CHECK_EQ(mp_send(sv[1], &made, sizeof(made), NULL, 0), 0);
	made.id = new_id;
	made.queue.qid = 6;
	CHECK_EQ(mp_send(sv[1], &made, sizeof(made), NULL, 0), 0);
	mp_chan_reap(ch);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), 0);
	CHECK(rep.queue.qid == 6 && tag == 4);
	CHECK_EQ(mp_chan_take(ch, MP_QUEUE_CREATE, &a, &rep, &tag, 0), -ENOENT);
	CHECK_EQ(ch->strays, 2);
	/* a synchronous call files a reply to another request that comes before its own */
	a.calls = 0;
	REQUIRE(mp_chan_send(ch, &rq, false, chan_cb, &a, 0) == 0);
	id = chan_request(sv[1], MP_ADMIN);
	chan_reply(sv[1], id, 0, -1);
	chan_reply(sv[1], ch->next_id, 0, -1); /* (the call's, which is the next id) */
	struct mp_req reg = { .op = MP_REG_READ };
	CHECK_EQ(mp_chan_call(ch, &reg, -1, &rep, 5000, NULL), 0);
	CHECK_EQ(rep.id, reg.id);
	(void)chan_request(sv[1], MP_REG_READ);
	mp_chan_reap(ch);
	CHECK_EQ(a.calls, 1);
	CHECK_EQ(a.status, 0);
	/* a reply cut short: the channel is broken, what is out is answered, nothing is sent */
	b.calls = 0;
	REQUIRE(mp_chan_send(ch, &rq, false, chan_cb, &b, 0) == 0);
	(void)chan_request(sv[1], MP_ADMIN);
	CHECK_EQ(mp_send(sv[1], "short", 5, NULL, 0), 0);
	mp_chan_reap(ch);
	CHECK_EQ(b.calls, 1);
	CHECK_EQ(b.status, INTERNAL_DNR);
	CHECK_EQ(mp_chan_send(ch, &rq, false, chan_cb, &b, 0), -EPROTO);
	CHECK_EQ(mp_chan_call(ch, &reg, -1, &rep, 100, NULL), -EPROTO);
	mp_chan_fini(ch);
	free(ch);
	close(sv[0]);
	close(sv[1]);
}

TEST_MAIN(TEST(test_client_checks_every_reply))
