/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An NVMe/TCP queue of the host: one connection carrying one queue pair.
 *
 * The generic queue pair (qpair.c) stays the host's view of the queue: its trackers, command
 * ids, split ownership and recovery are the same as over PCIe, and its SQ and CQ rings are
 * host memory. What a PCIe controller does with the rings, this file does with the socket:
 *   - the SQ tail "doorbell" (tcp_queue_doorbell) turns the new SQ entries into CapsuleCmd
 *     PDUs (small writes carry their data in the capsule) and sends them;
 *   - the pump (tcp_queue_pump, at the start of every poll) receives: C2HData straight into
 *     the command's buffer, R2T answered with H2CData from it, and each CapsuleResp written
 *     into the CQ ring with its phase bit, where the generic poll reaps it.
 * Nothing blocks on this path: a partial send is finished by the next doorbell or pump.
 *
 * Threads. An unshared queue is used by one thread. A split queue's transmit state (tx_*,
 * sq_sent, the H2C FIFO's consumer) belongs to whoever holds the queue's ring lock (the
 * generic ring_split takes it around the doorbell; the pump takes it to send H2CData); its
 * receive state belongs to the poller. The admin queue is shared by the admin path, the
 * keep-alive thread and register (property) access: tcp_ctrlr's mutex covers all of it.
 */
#ifndef UNVME_DRIVER_TCP_QUEUE_H
#define UNVME_DRIVER_TCP_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unvme/spec.h"
#include "unvme/spec/tcp.h"
#include "tcp_conn.h"
#include "lib/fabrics/nvmf_async.h"
#include "lib/fabrics/nvmf_cq.h"
#include "lib/fabrics/nvmf_inflight.h"
#include "lib/fabrics/tcp/tcp_pdu.h"
#include "lib/fabrics/tcp/tcp_stream.h"

struct unvme_qpair;
struct tcp_ctrlr;

#define TCP_SYNC_CID 0xfff0u     /* the transport's own synchronous commands */
#define TCP_TX_SLOTS 64u         /* PDUs queued for the socket at once */

/* Per command id. */
struct tcp_req {
	struct nvmf_track track;  /* first (nvmf_inflight.h): answered?, when it was sent */
	uint8_t *buf;             /* the command's data */
	uint32_t len;
	uint32_t c2h_next;        /* next C2HData offset expected (receiver) */
	uint32_t r2t_next;        /* next R2T offset expected (receiver) */
	const uint8_t *key;       /* a long KV key sent in the capsule (vendor KV commands) */
	uint16_t klen;
	bool to_ctrl;             /* its data goes to the controller: R2T may come, C2HData not */
	bool incapsule;           /* its data went in the capsule: no R2T may come */
	bool data_error;          /* a data digest did not match: fail with a transport error */
	bool violated;            /* a PDU about it broke the rules: it fails with Data Transfer Error */
	_Atomic uint8_t h2c_busy; /* an R2T's data is not yet all handed to the socket */
};

_Static_assert(offsetof(struct tcp_req, track) == 0, "nvmf_inflight.h scans the track at the start");

struct tcp_h2c {
	uint16_t cid;
	uint16_t ttag;
	uint32_t off;
	uint32_t len;
};

struct tcp_queue {
	struct tcp_conn conn;
	struct tcp_ctrlr *tc;
	struct unvme_qpair *qp;   /* the queue pair served (NULL before it exists) */
	uint16_t qid;
	uint32_t sq_db;           /* the SQ doorbell offset the generic code rings */
	uint32_t icd_max;         /* in-capsule data bytes the controller takes */
	uint32_t timeout_ms;
	bool locked;              /* the admin queue: callers hold tc->regs.lock */
	_Atomic bool dead;        /* failed: the socket is shut down, nothing moves */
	const char *dead_why;
	bool fail_done;           /* the commands in flight were completed with an error */
	bool timed_out;           /* the failure was a command timeout */

	struct tcp_req *reqs;     /* one per command id of the ring (depth - 1) */
	uint32_t nreqs;
	struct tcp_req sync;      /* TCP_SYNC_CID */
	bool sync_active;
	bool sync_done;
	struct nvme_cqe sync_cqe;
	uint8_t sync_opc, sync_fctype; /* what it is, for the message of a timeout */

	/* transmit */
	struct tcp_txq tx;
	uint16_t sq_sent;         /* SQ entries up to here became capsules */
	uint16_t sq_rung;         /* the latest tail announced */
	struct tcp_h2c *h2c;      /* FIFO of R2Ts to answer, nreqs + 1 entries */
	uint32_t h2c_size;
	_Atomic uint32_t h2c_prod; /* written by the receiver */
	_Atomic uint32_t h2c_cons; /* written by the transmitter */
	uint32_t h2c_off;         /* bytes of the head transfer made into PDUs */

	/* receive */
	struct tcp_rxq rx;
	bool rx_in_data;          /* C2HData's data is coming */
	struct tcp_req *rx_req;
	uint16_t rx_cid;
	struct nvmf_cq cq;         /* where the next completion goes in the CQ ring */
	uint64_t last_scan_ms;

	/* A connect on a thread of its own (a rebuild inside a poll, tcp_ctrlr.c): meanwhile
	 * the connection is the thread's, and the queue serves no queue pair (qp is NULL, kept
	 * in async_qp), so nothing of the ring is touched: the connection carries only Connect
	 * and authentication. The owner's pump does nothing until it took the result. */
	struct nvmf_async async;
	bool connecting;           /* the owner's: a thread has the connection */
	struct unvme_qpair *async_qp;
	uint16_t async_cntlid;
};

/* Sets up q for the ring of qp (or a standalone queue when qp is NULL: the admin connection
 * before its queue pair exists). */
int tcp_queue_init(struct tcp_queue *q, struct tcp_ctrlr *tc, uint16_t qid, uint32_t nreqs);
void tcp_queue_fini(struct tcp_queue *q);
/* Back to the start of a fresh connection: the rings were rewound. */
void tcp_queue_reset(struct tcp_queue *q);

/* Opens the queue's connection (TCP, TLS when the controller uses it, ICReq), its streams on
 * the connection's TLS session; closes it. */
int tcp_queue_open_conn(struct tcp_queue *q);
void tcp_queue_close_conn(struct tcp_queue *q);

/* The data pointer of a command about to be queued (an SGL), and what the transport must know
 * of its buffer. */
int tcp_queue_map(struct tcp_queue *q, uint16_t cid, struct nvme_sqe *sqe, void *buf, size_t len);
/* The SQ tail doorbell: queue capsules for entries up to tail and send. */
void tcp_queue_doorbell(struct tcp_queue *q, uint16_t tail);
/* Receives and sends what can move now. Returns 1 if the connection failed during this call
 * (the caller decides whether to start recovery), else 0. */
int tcp_queue_pump(struct tcp_queue *q);

/* Runs one command on the connection and waits for it (Connect, properties, keep alive,
 * authentication). data/len: the command's data in either direction. Returns the NVMe status
 * (0, > 0) or a negative errno. On failure of the connection the queue is marked dead. */
int tcp_queue_exec(struct tcp_queue *q, struct nvme_sqe *cmd, void *data, uint32_t len,
		   bool to_ctrl, struct nvme_cqe *cpl, uint32_t timeout_ms);
/* tcp_queue_exec in two halves (nvmf_queue_ops.send / reap): send puts the command on the
 * wire (-EAGAIN: the transport's command id is in flight or the transmit queue is full), reap
 * takes what arrived without waiting (-EINPROGRESS while its answer has not come; past
 * timeout_ms the connection ends, -ETIMEDOUT). */
int tcp_queue_send(struct tcp_queue *q, struct nvme_sqe *cmd, void *data, uint32_t len, bool to_ctrl);
int tcp_queue_reap(struct tcp_queue *q, struct nvme_cqe *cpl, uint32_t timeout_ms);

/* Marks the connection failed (any thread): nothing more is sent or received. The receiver
 * then completes what was in flight (tcp_queue_pump). */
void tcp_queue_mark_dead(struct tcp_queue *q, const char *why);

/* tcp_tx.c */
void tcp_tx_flush(struct tcp_queue *q);
int tcp_tx_capsule(struct tcp_queue *q, const struct nvme_sqe *sqe, struct tcp_req *r);
void tcp_tx_reset(struct tcp_queue *q);

/* tcp_rx.c */
int tcp_rx_pump(struct tcp_queue *q);
void tcp_rx_reset(struct tcp_queue *q);
/* Delivers a completion for cid (ring or sync). */
void tcp_queue_complete(struct tcp_queue *q, uint16_t cid, const struct nvme_cqe *cqe);
/* The status a command completes with, given the one its response carries: a command
 * succeeds only when exactly its data moved in its direction (every byte of a read arrived
 * as C2HData, every byte of a write went in the capsule or was asked for by R2T and sent).
 * Otherwise Data Transfer Error (SCT 0h, SC 04h) with Do Not Retry; a data digest that did
 * not match makes it Transient Transport Error (SCT 0h, SC 22h). An error status passes
 * unchanged. */
uint16_t tcp_req_status(const struct tcp_req *r, uint16_t status);
struct tcp_req *tcp_queue_req(struct tcp_queue *q, uint16_t cid);
/* Receiver side: a fatal protocol error. Sends an H2CTermReq echoing the header, fails. */
void tcp_queue_protocol_error(struct tcp_queue *q, uint16_t fes, uint32_t fei, const char *why);

#endif
