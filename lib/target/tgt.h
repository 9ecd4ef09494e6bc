/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP and NVMe/RDMA target (internal). It exports namespaces of devices the driver
 * opens as NVMe subsystems on TCP and RDMA listeners, with a discovery subsystem. The RDMA
 * wire is tgt_rdma.c; everything from Connect on is shared.
 *
 * Threads. An acceptor thread takes new connections and hands each to a poller (round robin);
 * a poller thread owns its connections and everything behind them: the receive and transmit
 * state of each socket, the commands in flight, and, for every I/O connection, a queue pair
 * of its own on each backing controller, polled by the same thread. So an I/O command goes
 * from socket to backing device and back on one thread with no lock, and host queues on
 * different pollers share nothing. The subsystem's controller list (Connect, controller end)
 * has a mutex; a controller's registers are atomics shared by its connections.
 *
 * Data moves between the socket and DMA buffers the backing device reads and writes: the
 * receive path puts in-capsule and H2C data straight into them, the transmit path sends
 * C2H data from them with sendmsg.
 */
#ifndef UNVME_TARGET_TGT_H
#define UNVME_TARGET_TGT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "unvme/unvme.h"
#include "unvme/spec/fabrics.h"
#include "unvme/spec/tcp.h"
#include "lib/fabrics/dhchap.h"
#include "lib/fabrics/tcp/tcp_psk.h"
#include "lib/fabrics/tcp/tcp_stream.h"
#include "target.h"

#define TGT_ADMIN_SLOTS 32u     /* commands an admin queue may have in flight */
#define TGT_ICD 8192u           /* in-capsule data we take on I/O queues */
#define TGT_MAXH2CDATA (1u << 20)
#define TGT_AERL 3u             /* 0's based: 4 Asynchronous Event Requests */
#define TGT_MAX_NS 256u
#define TGT_MAX_LISTENERS 64      /* TCP and RDMA listeners of one target */
#define TGT_TX_SPIN_MS 2u        /* a full socket is retried this long, then waited for (EPOLLOUT) */
#define TGT_ADMIN_MAX_XFER (1u << 20) /* the most data an admin or fabrics command moves */
#define TGT_AUTH_MAX_XFER 8192u /* an authentication message (the largest is about 1.2 KiB) */
/* The largest DMA buffer one command needs: MDTS of data plus a long KV key after it, rounded
 * up to the buffer size classes (tgt_buf.c); a connection's memory must hold one. */
#define TGT_MAX_CMD_BUF (4u << 20)

/* Limits (docs/nvme-tcp.md "Limits and their settings"): the defaults */
#define TGT_DEF_MAX_CONNS 1024u
#define TGT_DEF_MAX_CONNS_PER_HOST 128u
#define TGT_DEF_QUEUE_DEPTH 256u      /* CAP.MQES + 1 */
#define TGT_DEF_MAX_IO_QUEUES 32u
#define TGT_DEF_MEMORY_MB 1024u
#define TGT_DEF_CONN_MEMORY_MB 32u
#define TGT_DEF_ICREQ_TIMEOUT_MS 5000u
#define TGT_DEF_CONNECT_TIMEOUT_MS 10000u
#define TGT_DEF_DISCOVERY_KATO_MS 120000u

/* ---- configuration (target.h has the public part) ---- */

struct tgt_host {
	char nqn[NVMF_NQN_FIELD];
	bool has_key, has_ckey;
	struct dhchap_key key;    /* the host's secret */
	struct dhchap_key ckey;   /* the controller's secret (bidirectional) */
	uint8_t hash;             /* hash the controller picks, 1..3 */
	uint8_t dhgroup;          /* DH group the controller picks, 0..5 */
	bool has_tls;             /* the host's TLS PSK (tgt_tls.c) */
	struct tcp_psk tls;
};

struct tgt_ns_cfg {
	char device[1024];
	uint32_t nsid;            /* in the subsystem; 0: the next free */
	uint32_t device_nsid;     /* on the device; 0: every active namespace */
};

struct tgt_subsys_cfg {
	char nqn[NVMF_NQN_FIELD];
	char serial[21];
	char model[41];
	bool allow_any_host;
	bool has_tls;             /* a TLS PSK for any host (with allow_any_host) */
	struct tcp_psk tls;
	struct tgt_host *hosts;
	int nhosts;
	struct tgt_ns_cfg *ns;
	int nns;
};

struct tgt_listen_cfg {
	char addr[128];
	char port[8];
	bool rdma;                /* an NVMe/RDMA listener ("rdma:ADDR:PORT"), else NVMe/TCP */
};

struct tgt_limits {
	uint32_t max_conns;           /* connections in total */
	uint32_t max_conns_per_host;  /* connections from one host address */
	uint32_t max_io_queues;       /* per controller */
	uint32_t queue_depth;         /* entries of an I/O queue (CAP.MQES + 1) */
	uint64_t memory;              /* bytes of data buffers in total */
	uint64_t conn_memory;         /* bytes of data buffers of one connection */
	uint32_t icreq_timeout_ms;    /* from accept to ICReq */
	uint32_t connect_timeout_ms;  /* from accept to a connected (and authenticated) queue */
	uint32_t discovery_kato_ms;   /* keep alive of a discovery controller that asked for none */
};

struct tgt_config {
	struct tgt_listen_cfg *listen;
	int nlisten;
	struct tgt_subsys_cfg *subsys;
	int nsubsys;
	int threads;
	bool discovery;
	struct tgt_limits lim;
	bool quiet;
	bool tls;                 /* every connection starts with a TLS handshake (tgt_tls.c) */
};

/* ---- runtime ---- */

struct tgt_backing {
	char devid[1024];
	struct unvme_ctrlr *ctrlr;
};

struct tgt_ns {
	uint32_t nsid;
	int back;                 /* index into the subsystem's backs */
	uint32_t bnsid;
	struct unvme_ns *bns;
	uint8_t csi;
	uint32_t block_bytes;     /* what one logical block moves: data (+ metadata when extended) */
	uint8_t nguid[16];        /* unique per subsystem and nsid */
};

struct tgt_ctrl;

struct tgt_subsys {
	struct unvme_target *t;
	const struct tgt_subsys_cfg *cfg; /* NULL for the discovery subsystem */
	const char *nqn;
	bool discovery;
	struct tgt_ns *ns;
	int nns;
	uint32_t max_nsid;
	struct tgt_backing **backs; /* distinct backing controllers of the namespaces */
	int nbacks;
	int kv_ns;                /* index of the first KV namespace, -1 if none */
	uint32_t mdts_bytes;
	uint16_t oncs;
	uint8_t vwc;
	pthread_mutex_t lock;     /* ctrls, next_cntlid, each controller's qid map */
	struct tgt_ctrl *ctrls;
	uint16_t next_cntlid;
};

struct tgt_ctrl {
	struct tgt_subsys *ss;
	uint16_t cntlid;
	char hostnqn[NVMF_NQN_FIELD];
	uint8_t hostid[16];
	const struct tgt_host *host; /* its entry in the allow-list (NULL: allow_any_host) */
	uint32_t kato_ms;
	_Atomic uint64_t last_ms;  /* traffic seen (keep alive) */
	_Atomic uint32_t cc;
	_Atomic uint32_t csts;
	_Atomic uint32_t gen;      /* bumped by a controller reset: older I/O queues end */
	_Atomic bool dead;         /* ended: every connection of it closes */
	_Atomic int refs;
	uint32_t nr_io;            /* queues granted (Set Features Number of Queues) */
	uint8_t *qid_used;         /* under ss->lock */
	uint32_t aen_cfg;
	uint32_t feat_arb, feat_power, feat_temp, feat_errrec, feat_vwc, feat_coal;
	struct tgt_ctrl *next;
};

enum tgt_cmd_state {
	CMD_FREE = 0,
	CMD_WAIT_BUF,    /* waiting for buffer memory: the connection's receiving stops */
	CMD_RECV,        /* its in-capsule data is arriving */
	CMD_H2C,         /* R2T sent, data arriving */
	CMD_BACKING,     /* at the backing device */
	CMD_HELD,        /* an Asynchronous Event Request kept until an event */
	CMD_SENDING,     /* its response (and data) are queued for the socket */
};

struct tgt_cmd {
	struct tgt_conn *conn;
	uint16_t idx;             /* slot; also the R2T transfer tag */
	uint8_t state;
	bool to_ctrl;             /* data flows host to controller */
	bool data_error;          /* a data digest did not match */
	bool discard;             /* the command is refused: its data is thrown away */
	bool fills;               /* the device writes every byte of its data (an NVM Read) */
	bool icd_ddgst;           /* its in-capsule data carries a digest */
	struct nvme_sqe sqe;      /* as the host sent it */
	uint8_t *buf;             /* DMA buffer of the data (and in-capsule key) */
	uint32_t buf_cap;
	uint32_t len;             /* data bytes: SGL1, checked against the command (tgt_xfer.c) */
	uint32_t icd_len;         /* in-capsule bytes */
	uint32_t icd_off;         /* where they are in buf (tgt_xfer_check_sgl) */
	uint32_t h2c_got;
	struct nvme_cqe cqe;
	uint32_t send_len;        /* C2H data bytes to send with the response */
	void *wire;               /* NVMe/RDMA: its slot of the queue (struct nvrdma_tq_cmd) */
	struct tgt_cmd *next_free; /* also the link of a connection's commands waiting for memory */
};

enum tgt_rx_state { RX_ICREQ, RX_HDR, RX_CAPSULE_DATA, RX_H2C_DATA, RX_DEAD };

struct tgt_auth {
	uint8_t step;             /* the message expected next (enum nvme_auth_msg) */
	uint8_t status;           /* failure reason for Failure1, 0 if none */
	uint16_t tid;
	uint8_t hash, dhgroup;
	uint32_t s1, s2;
	uint8_t c1[DHCHAP_MAX_HASH];
	uint8_t r2[DHCHAP_MAX_HASH];
	bool bidi;
	struct dhchap_dh dh;
	uint8_t pub[DHCHAP_MAX_DH];
};

/* DMA buffers by power-of-two size class from 4 KiB (tgt_buf.c). */
#define TGT_BUF_CLASSES 11
/* A connection's own: no other connection ever sees them while it lives. */
struct tgt_bufs {
	void *free[TGT_BUF_CLASSES];
	uint64_t owned;           /* bytes it holds, in use or free */
	uint64_t idle;            /* of which free */
};
/* A poller's: buffers of ended connections, zeroed, for the next connections. */
struct tgt_bufpool {
	void *free[TGT_BUF_CLASSES];
	uint64_t bytes;
	uint64_t limit;
};

/* A host address and its connections (the per-host connection limit). */
struct tgt_addr {
	uint8_t b[17];            /* family, then the IPv4 or IPv6 address */
};

struct tgt_rdma;
struct rv_listener;
struct rv_req;

/* A host connection: one NVMe queue. Everything from Connect on (controllers, allow-lists,
 * authentication, commands, buffers, limits) is the same for both wires; what is TCP's (the
 * socket, PDUs, TLS) is unused on an NVMe/RDMA connection, whose queue pair and capsules
 * live in rdma (tgt_rdma.c). */
struct tgt_conn {
	struct tgt_poller *p;
	struct unvme_target *t;
	struct tgt_rdma *rdma;    /* NVMe/RDMA (tgt_rdma.c); NULL: NVMe/TCP */
	int fd;                   /* the socket (NVMe/TCP), -1 on RDMA */
	struct tgt_addr addr;     /* the host's address (counted in t's per-host table) */
	bool counted;             /* in the target's connection counts */
	uint64_t born_ms;         /* accepted at (the ICReq and Connect deadlines) */
	char peer[80];
	char local_addr[64];      /* the address the host reached us at (discovery log) */
	char local_port[8];
	uint8_t adrfam;
	bool hdgst, ddgst;
	uint32_t hpda;            /* alignment of C2H data the host wants, bytes */
	struct tcp_txq tx;
	struct tcp_rxq rx;
	struct tcp_tls *tls;      /* its TLS session, the streams' (NULL in the clear) */
	enum tgt_rx_state rx_state;
	struct tgt_cmd *rx_cmd;
	bool closing;             /* close once the transmit queue drained */
	uint64_t close_ms;        /* when it started closing */
	char why[200];
	uint8_t term_spill[32];   /* a TermReq's echoed bytes beyond its 128-byte header slot */

	/* after Connect */
	uint16_t qid;
	uint16_t sqsize;          /* 0's based */
	uint16_t sqhd;
	bool connected;
	bool sqflow_off;
	struct tgt_subsys *ss;
	struct tgt_ctrl *ctrl;
	uint32_t ctrl_gen;
	bool auth_needed;         /* the host has a key: only authentication until it is done */
	struct tgt_auth auth;
	struct unvme_qpair **bqp; /* per backing controller of the subsystem (I/O queues) */

	struct tgt_cmd **cmds;
	uint32_t ncmds;
	struct tgt_cmd *free_cmds;
	uint32_t in_backing;      /* commands at the backing devices */
	struct tgt_cmd *wait_cmd; /* a capsule waiting for buffer memory (receiving paused) */

	struct tgt_bufs bufs;     /* its DMA buffers */
	uint64_t mem_wait_ms;     /* when it last asked the others for memory (mem_pressure) */
	uint32_t ep_events;       /* what its poller's epoll watches for it */
	uint64_t tx_stall_ms;     /* since when the socket takes no more (0: it does) */
	struct tgt_conn *next;
};

struct tgt_poller {
	struct unvme_target *t;
	int idx;
	pthread_t thread;
	bool running;
	int epfd;
	int evfd;
	pthread_mutex_t inbox_lock;
	struct tgt_conn *inbox;
	struct tgt_conn *conns;
	int nconns;
	struct tgt_bufpool pool;
	uint32_t pressure_seen;   /* the target's mem_pressure this poller answered */
};

/* A limit that was hit: logged the first time, then at most once a minute with a count. */
struct tgt_limit_log {
	_Atomic uint64_t last_ms;
	_Atomic uint64_t hits;    /* not reported yet */
};

struct unvme_target {
	struct tgt_config *cfg;
	struct tgt_backing *backs;
	int nbacks;
	struct tgt_subsys *subs;
	int nsubs;
	struct tgt_subsys disc;
	int *lfds;
	int nlfds;
	struct rv_listener **rls; /* NVMe/RDMA listeners (tgt_rdma.c) */
	int nrls;
	uint16_t port;            /* the first listener's bound port */
	int stop_fd;
	pthread_t acceptor;
	bool acceptor_running;
	struct tgt_poller *pollers;
	int npollers;
	_Atomic bool stop;
	_Atomic uint32_t next_poller;
	_Atomic uint64_t genctr;  /* discovery log generation */
	struct tcp_tls_ctx *tls;  /* TLS with per-host PSKs (cfg->tls), else NULL */

	/* limits (tgt_limits.c) */
	_Atomic uint64_t mem;     /* bytes of DMA buffers allocated, in use or kept */
	_Atomic uint32_t mem_pressure; /* bumped when memory ran out: pollers give back what they keep */
	_Atomic uint32_t nconns;
	pthread_mutex_t hosts_lock;
	struct tgt_host_conns *hosts; /* connections per host address */
	uint32_t nhosts, hosts_cap;
	int reserve_fd;           /* given up to accept (and refuse) when descriptors run out */
	struct tgt_limit_log lim_conns, lim_host_conns, lim_fds, lim_mem, lim_conn_mem, lim_icreq,
		lim_connect, lim_queues;
};

struct tgt_host_conns {
	struct tgt_addr addr;
	uint32_t n;
};

/* tgt_main.c: refusals and errors always reach stderr; tgt_info (connections) unless quiet. */
void tgt_log(const struct unvme_target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tgt_info(const struct unvme_target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* tgt_config.c */
/* Formats an error into err (errlen bytes) and returns rc: the configuration's and start-up's
 * way of saying what was wrong. */
int tgt_fail(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
struct tgt_subsys *tgt_find_subsys(struct unvme_target *t, const char *nqn);
const struct tgt_host *tgt_host_allowed(const struct tgt_subsys *ss, const char *hostnqn,
					bool *allowed);
/* The host's entry with a DH-HMAC-CHAP key in any subsystem's allow-list (the key it proves
 * to the discovery controller), or NULL. */
const struct tgt_host *tgt_host_key_entry(const struct unvme_target *t, const char *hostnqn);
void tgt_config_limits_default(struct tgt_limits *lim);

/* tgt_conn.c */
/* "ADDRESS:PORT" of the socket's peer, and its address as a key. */
void tgt_conn_peer(int fd, char *peer, size_t len, struct tgt_addr *key);
/* A connection of fd, already counted by tgt_conn_admit (counted: retired when freed). */
struct tgt_conn *tgt_conn_new(struct unvme_target *t, int fd);
void tgt_conn_free(struct tgt_conn *c);
/* Receives and acts on what arrived; sends what is queued. Returns work done. */
int tgt_conn_service(struct tgt_conn *c);
/* Ends the connection (after what is queued is sent). */
void tgt_conn_close(struct tgt_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes the connection once what is queued now was sent (a refusal the host must see). */
void tgt_conn_close_after_send(struct tgt_conn *c);
/* A fatal protocol error: C2HTermReq with fes/fei echoing the header, then close. */
void tgt_conn_fatal(struct tgt_conn *c, uint16_t fes, uint32_t fei, const char *why);
/* Queues the response of cmd (and its C2H data: cmd->send_len bytes of cmd->buf). */
void tgt_complete(struct tgt_cmd *cmd, uint16_t sct, uint8_t sc);
/* The same with a status word as a device gave it (DNR and More kept; phase ignored). */
void tgt_complete_raw(struct tgt_cmd *cmd, uint16_t status);
void tgt_cmd_release(struct tgt_cmd *cmd);
/* A free command slot of the connection, reset for a new capsule; NULL when all are taken. */
struct tgt_cmd *tgt_cmd_get(struct tgt_conn *c);
/* The descriptor the poller's epoll watches for the connection. */
int tgt_conn_wait_fd(const struct tgt_conn *c);
/* Something is queued for the host that a closing connection should still send. */
bool tgt_conn_tx_pending(const struct tgt_conn *c);
/* Room for the queue's commands after Connect. */
int tgt_conn_size(struct tgt_conn *c, uint32_t slots);
/* Receiving paused (a capsule waits for memory), or sending stalled: what epoll should watch. */
uint32_t tgt_conn_events(const struct tgt_conn *c, uint64_t now_ms);

/* tgt_buf.c: a command's DMA buffer of at least len bytes, the connection's own (zeroed when
 * it came from another). 0, -EAGAIN when a memory limit says wait (a buffer of the connection
 * or another coming back frees room), -ENOMEM. */
int tgt_buf_get(struct tgt_conn *c, uint32_t len, void **buf, uint32_t *cap);
void tgt_buf_put(struct tgt_conn *c, void *buf, uint32_t cap);
/* A connection ends: its buffers, zeroed, go to its poller's pool (or back to the allocator). */
void tgt_bufs_release(struct tgt_conn *c);
/* Gives the connection's free buffers back (memory ran short somewhere). */
void tgt_bufs_trim(struct tgt_conn *c);
void tgt_bufpool_free(struct unvme_target *t, struct tgt_bufpool *pool);

/* tgt_xfer.c: what a command moves, from the command itself, checked against the transport's
 * data descriptor before any buffer is taken. */
struct tgt_xfer {
	uint32_t len;             /* data bytes the command moves */
	bool to_ctrl;             /* host to controller */
	bool fills;               /* the device writes every byte of it (no clearing needed) */
};
/* 0 with *x filled, or the status (SCT << 8 | SC) to refuse the command with. */
int tgt_xfer_plan(const struct tgt_conn *c, const struct nvme_sqe *sqe, struct tgt_xfer *x);
/* The transport side: SGL1 (and a long KV key's descriptor) against the plan and the
 * in-capsule data received; 0 or a status. *icd_off: where the in-capsule data goes. */
int tgt_xfer_check_sgl(const struct nvme_sqe *sqe, const struct tgt_xfer *x, uint32_t icd,
		       uint32_t *icd_off);
/* Features the target's controllers know (Get and Set Features), and the data they move. */
bool tgt_feature_known(bool discovery, uint8_t fid, bool set);

/* tgt_exec.c: a command whose data is in */
void tgt_exec(struct tgt_cmd *cmd);
/* The gate before a command's data is taken: fabrics commands always, others once the queue
 * is connected, authenticated and its controller enabled; 0 or a status. */
int tgt_cmd_admissible(const struct tgt_conn *c, const struct nvme_sqe *sqe);
/* A capsule arrived (either wire): the gate and the command's own plan of its data, 0 with *x
 * or the status to refuse it with; a command of a connected queue keeps its controller alive. */
int tgt_cmd_arrived(struct tgt_conn *c, const struct nvme_sqe *sqe, struct tgt_xfer *x);

/* tgt_limits.c */
/* Counts a new connection from addr; false (and logged) when a connection limit is hit. */
bool tgt_conn_admit(struct unvme_target *t, const struct tgt_addr *addr, const char *peer);
void tgt_conn_retire(struct unvme_target *t, const struct tgt_addr *addr);
void tgt_limit_hit(struct unvme_target *t, struct tgt_limit_log *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The ICReq and Connect deadlines of a connection not serving yet; true when it was closed. */
bool tgt_conn_deadline(struct tgt_conn *c, uint64_t now_ms);

/* tgt_fabrics.c */
void tgt_fabrics(struct tgt_cmd *cmd);
void tgt_ctrl_put(struct tgt_ctrl *ctrl);
/* Keep-alive check of the controller of an admin connection. */
void tgt_keepalive_check(struct tgt_conn *c, uint64_t now);

/* tgt_admin.c, tgt_identify.c, tgt_logs.c */
void tgt_admin(struct tgt_cmd *cmd);
int tgt_identify(struct tgt_cmd *cmd);
int tgt_get_log(struct tgt_cmd *cmd);
void tgt_nguid(const char *subnqn, uint32_t nsid, uint8_t out[16]);

/* tgt_io.c */
void tgt_io(struct tgt_cmd *cmd);
const struct tgt_ns *tgt_ns_of(const struct tgt_subsys *ss, uint32_t nsid);
bool tgt_vendor_kv(uint8_t opc);
/* The key descriptor (CDW12-15) of a vendor KV command with a key over 16 bytes, else NULL:
 * over NVMe/TCP such a key travels in the capsule (docs/nvme-tcp.md). */
const struct nvme_sgl_desc *tgt_kv_key_desc(const struct nvme_sqe *sqe);
int tgt_io_open_queues(struct tgt_conn *c);
void tgt_io_close_queues(struct tgt_conn *c);
/* Polls the connection's backing queue pairs. Returns completions. */
int tgt_io_poll(struct tgt_conn *c);

/* tgt_auth.c */
void tgt_auth_send(struct tgt_cmd *cmd);
void tgt_auth_recv(struct tgt_cmd *cmd);
void tgt_auth_reset(struct tgt_conn *c);

/* tgt_poller.c */
int tgt_pollers_start(struct unvme_target *t);
void tgt_pollers_stop(struct unvme_target *t);
void tgt_poller_adopt(struct unvme_target *t, struct tgt_conn *c);

/* tgt_tls.c: TLS sessions of the connections (cfg->tls) */
int tgt_tls_start(struct unvme_target *t, char *err, size_t errlen);
void tgt_tls_stop(struct unvme_target *t);
int tgt_tls_conn_init(struct tgt_conn *c);
void tgt_tls_conn_fini(struct tgt_conn *c);
/* Why a receive error (err) of a TLS connection happened (the handshake's reason), or NULL. */
const char *tgt_tls_failure(const struct tgt_conn *c, int err);
/* Connect on a TLS connection must name the host and subsystem of its PSK identity: 0, or
 * -EACCES (logged). */
int tgt_tls_connect_check(const struct tgt_conn *c, const char *hostnqn, const char *subnqn);

/* tgt_rdma.c: NVMe/RDMA connections on lib/fabrics/rdma's controller queue engine */
/* NULL when this build can take RDMA listeners, else why not. */
const char *tgt_rdma_unavailable(void);
/* Binds an RDMA listener (t->rls); 0 or a negative errno with the reason in err. */
int tgt_rdma_listen(struct unvme_target *t, const struct tgt_listen_cfg *l, char *err, size_t errlen);
int tgt_rdma_listen_fd(const struct unvme_target *t, int i);
/* Takes the connection requests waiting on listener i: checked, counted, accepted or refused. */
void tgt_rdma_accept(struct unvme_target *t, int i);
/* One connection request: checked, counted and accepted (the connection, for a poller to
 * adopt) or refused (NULL); req is consumed either way. */
struct tgt_conn *tgt_rdma_conn_accept(struct unvme_target *t, struct rv_req *req);
void tgt_rdma_listen_close(struct unvme_target *t);
/* Connection events and completions of an RDMA connection; returns work done. */
int tgt_rdma_rx(struct tgt_conn *c);
/* Sends cmd's response (status as tgt_complete_raw has it) after its data to the host. */
void tgt_rdma_respond(struct tgt_cmd *cmd, uint16_t status);
void tgt_rdma_close_after_send(struct tgt_conn *c);
int tgt_rdma_fd(const struct tgt_conn *c);
/* Before the poller sleeps: arms the descriptor and looks once more; returns work done. */
int tgt_rdma_arm(struct tgt_conn *c);
/* The queue pair ends (nothing more lands in the buffers) and the buffers' regions go. */
void tgt_rdma_stop(struct tgt_conn *c);
/* A buffer leaves the connection (tgt_buf.c): its region goes. */
void tgt_rdma_buf_gone(struct tgt_conn *c, void *buf);

/* tgt_listen.c */
int tgt_listen_start(struct unvme_target *t);
void tgt_listen_stop(struct unvme_target *t);

#endif
