/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: whole NVMe/TCP target sessions in one process, several hosts at once,
 * against two subsystems whose namespaces hold canary data.
 *
 *   subsystem A (NQN_A): a 64 KiB block namespace of canary A, and a KV namespace;
 *                        hosts HOST_A (no key) and HOST_K (DH-HMAC-CHAP key)
 *   subsystem B (NQN_B): a 64 KiB block namespace of canary B; host HOST_B
 *
 * The input is a sequence of operations on up to four connections (socket pairs whose target
 * side is a real target connection, tgt_conn_new, driven by tgt_conn_service as a poller
 * drives it, the connections sharing one poller's buffer pool): open a connection, ICReq,
 * Connect (admin or I/O, to A, B, discovery or an unknown NQN, as any of the hosts or a
 * stranger), Property Get / Set, any command capsule (fabrics, admin, NVM, ZNS, KV standard and
 * vendor opcodes, with any SGL and in-capsule data), H2CData for the last R2T (right or
 * wrong), raw bytes, a whole DH-HMAC-CHAP exchange with the right or a wrong key, stop / resume
 * reading a connection (back-pressure), time passing (deadlines, keep alive), closing one.
 *
 * The oracle, beyond "no crash, no sanitizer report, no leak":
 *   - no canary leaves through the wrong connection: every byte a connection receives is
 *     scanned for the canary words of the subsystems it is not connected to (a connection
 *     connected to none may see no canary at all). A canary word is 48 random bits under a
 *     16-bit tag per subsystem; a hit on a tag is confirmed against a keyed hash of every canary
 *     word (the oracle's own comparisons teach the fuzzer nothing). The fuzzer can still learn
 *     canary bytes from the device's comparisons (Compare, KV keys) and send them: words a host
 *     sent are not secret any more and no longer count (canary_sent);
 *   - every PDU the target sends passes the host's own header checks (tcp_pdu_check);
 *   - after each input, with every connection closed: no controller is left in any subsystem,
 *     and every data buffer the target counts is back in the poller's pool.
 * The canaries are written again before an input after one that may have written a namespace.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unvme/spec/auth.h"
#include "unvme/spec/kv.h"
#include "unvme/spec/zns.h"
#include "lib/common/clock.h"
#include "lib/fabrics/dhchap.h"
#include "lib/fabrics/tcp/tcp_pdu.h"
#include "lib/target/tgt.h"
#include "lib/util/crc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define NQN_A "nqn.2024-01.io.unvme.fuzz:a"
#define NQN_B "nqn.2024-01.io.unvme.fuzz:b"
#define HOST_A "nqn.2014-08.io.unvme.fuzz:host-a"
#define HOST_B "nqn.2014-08.io.unvme.fuzz:host-b"
#define HOST_K "nqn.2014-08.io.unvme.fuzz:host-k"
#define DEV_A "emu://fuzz-ta?ns=mem:64K:512&ns=kv:1M"
#define DEV_B "emu://fuzz-tb?ns=mem:64K:512"
#define NS_BYTES (64u * 1024)
#define MAX_CONNS 4
#define PDU_KEEP 8448u                  /* of a PDU the harness looks at: headers, 8 KiB of data */

enum { OWNER_NONE = -1, OWNER_A = 0, OWNER_B = 1 };

static struct unvme_target *target;
static struct tgt_poller poller;       /* the pool the fuzzed connections share */
static struct dhchap_key key_k;        /* HOST_K's secret */
static bool trace;                     /* $FUZZ_TARGET_TRACE: print what each connection receives */

/* ---- canaries ---- */

struct canary {
	uint16_t tag;
	uint8_t *data;                     /* NS_BYTES, DMA memory */
	uint64_t *hashes;                  /* sorted keyed hashes of its words */
	bool *known;                       /* by hash index: a word a host has sent (see below) */
	size_t n;
};
static struct canary canary[2];
static uint64_t hash_key;
static struct unvme_ctrlr *dev[2];     /* the harness's own opens of the devices */
static struct unvme_qpair *qp[2];

/* The oracle and the harness's byte handling are not what is fuzzed: no coverage feedback from
 * them (they run over every byte received, which would cost most of the time, and the oracle's
 * comparisons would only teach the fuzzer the canaries' tags). */
#define ORACLE __attribute__((no_sanitize("coverage")))

/* A broken promise: said on stdout too (the fuzz runs close stderr, -close_fd_mask=2). */
__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("fuzz_target_session: %s\n", msg);
	fflush(stdout);
	fprintf(stderr, "fuzz_target_session: %s\n", msg);
	abort();
}

ORACLE static uint64_t mix(uint64_t x)
{
	x ^= hash_key;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void canary_make(struct canary *cn, uint16_t tag)
{
	cn->tag = tag;
	cn->n = NS_BYTES / 8;
	cn->data = unvme_dma_alloc(NS_BYTES, 4096);
	cn->hashes = malloc(cn->n * sizeof(uint64_t));
	cn->known = calloc(cn->n, sizeof(bool));
	if (!cn->data || !cn->hashes || !cn->known || dhchap_random(cn->data, NS_BYTES))
		abort();
	for (size_t i = 0; i < cn->n; i++) {
		uint64_t w;
		memcpy(&w, cn->data + 8 * i, 8);
		w = (w & 0x0000ffffffffffffull) | (uint64_t)tag << 48;
		memcpy(cn->data + 8 * i, &w, 8);
		cn->hashes[i] = mix(w);
	}
	qsort(cn->hashes, cn->n, sizeof(uint64_t), cmp_u64);
}

/* The index of w among the canary's words, or -1. */
ORACLE static long canary_find(const struct canary *cn, uint64_t w)
{
	uint64_t h = mix(w);
	size_t lo = 0, hi = cn->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cn->hashes[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cn->n && cn->hashes[lo] == h ? (long)lo : -1;
}

/* Calls fn(s, k, at) for each canary word (subsystem s, index k) at byte offset at of p, the
 * words of subsystem skip (or -1) left out. A word's top byte is its tag's high byte, rare in
 * other data: memchr finds the candidates, so that megabytes of read data cost little. */
ORACLE static long canary_each(const uint8_t *p, size_t len, int skip,
			       bool (*fn)(int s, long k, void *arg), void *arg)
{
	for (int s = 0; s < 2; s++) {
		if (s == skip)
			continue;
		uint8_t hi = (uint8_t)(canary[s].tag >> 8);
		for (const uint8_t *q = p + 7; q < p + len; q++) {
			q = memchr(q, hi, (size_t)(p + len - q));
			if (!q)
				break;
			uint64_t w;
			memcpy(&w, q - 7, 8);
			if ((uint16_t)(w >> 48) != canary[s].tag)
				continue;
			long k = canary_find(&canary[s], w);
			if (k >= 0 && fn(s, k, arg))
				return q - 7 - p;
		}
	}
	return -1;
}

/*
 * Canary words a host sent are no longer secret. The fuzzer can learn the device's bytes from
 * comparisons it observes (the emulated device's Compare and KV code compare namespace data
 * with memcmp, which libFuzzer watches) and put them in its input: a host writing such a word
 * into its own namespace and reading it back, or having it echoed in a TermReq, is no leak.
 * Every byte sent to the target is scanned and such words are marked known for the run.
 */
ORACLE static bool mark_known(int s, long k, void *arg)
{
	(void)arg;
	canary[s].known[k] = true;
	return false;
}

ORACLE static void canary_sent(const uint8_t *p, size_t len)
{
	static uint8_t buf[7 + 16384];
	static size_t ncarry;
	while (len) {
		size_t take = len < 16384 ? len : 16384;
		memcpy(buf + ncarry, p, take);
		size_t all = ncarry + take;
		canary_each(buf, all, -1, mark_known, NULL);
		ncarry = all < 7 ? all : 7;
		memmove(buf, buf + all - ncarry, ncarry);
		p += take;
		len -= take;
	}
}

struct scan {
	int owner, which;
};

ORACLE static bool is_leak(int s, long k, void *arg)
{
	struct scan *sc = arg;
	if (s == sc->owner || canary[s].known[k])
		return false;
	sc->which = s;
	return true;
}

/* Bytes a connection of owner received: the offset of a canary word of another subsystem that
 * no host sent (a leak), and that subsystem in *which, or -1. */
ORACLE static long canary_scan(const uint8_t *p, size_t len, int owner, int *which)
{
	struct scan sc = {owner, -1};
	/* its own subsystem's words are no leak: not looked up (a read of its own namespace is
	 * all canary words, each a hash and a search, which took a fifth of the run's time) */
	long at = canary_each(p, len, owner, is_leak, &sc);
	*which = sc.which;
	return at;
}

/* Set when an input sent a command that may change a namespace's blocks (a write, a zeroing,
 * a deallocation, an unreadable block, a zone change, an opcode the harness does not know). */
static bool dirty = true;

static bool may_write(uint8_t opc)
{
	switch (opc) {
	case NVME_CMD_WRITE:
	case NVME_CMD_WRITE_UNCOR:
	case NVME_CMD_WRITE_ZEROES:
	case NVME_CMD_DSM:
	case NVME_CMD_ZONE_APPEND:
	case NVME_CMD_ZONE_MGMT_SEND:
	case NVME_CMD_COPY:
		return true;
	default:
		return opc >= 0x80 || (opc & 1u); /* vendor, or host-to-controller data */
	}
}

static void canary_restore(void)
{
	if (!dirty)
		return;
	dirty = false;
	for (int s = 0; s < 2; s++) {
		struct unvme_ns *ns = unvme_ctrlr_ns(dev[s], 1);
		if (unvme_write_sync(ns, qp[s], canary[s].data, 0, NS_BYTES / 512) != 0)
			abort();
	}
}

/* ---- set-up ---- */

static void start_target(void)
{
	char err[400], secret[256];
	setenv("UNVME_QUIET", "1", 1);
	/* the devices live in this process (a named emulated device would otherwise run in a
	 * device process of its own, out of the fuzzer's sight) */
	setenv("UNVME_MP", "0", 1);
	struct dhchap_key k = {.len = 32, .transform = 0};
	if (dhchap_random(k.key, 32))
		abort();
	dhchap_key_format(&k, secret, sizeof(secret));
	if (dhchap_key_parse(secret, &key_k, err, sizeof(err)))
		abort();
	struct tgt_config *cfg = tgt_config_new();
	tgt_config_set_quiet(cfg, 1);
	tgt_config_add_listen(cfg, "127.0.0.1:0", err, sizeof(err));
	int a = tgt_config_add_subsys(cfg, NQN_A, err, sizeof(err));
	int b = tgt_config_add_subsys(cfg, NQN_B, err, sizeof(err));
	if (a < 0 || b < 0 || tgt_config_add_ns(cfg, a, DEV_A, 0, 0, err, sizeof(err)) ||
	    tgt_config_add_ns(cfg, b, DEV_B, 0, 0, err, sizeof(err)) ||
	    tgt_config_add_host(cfg, a, HOST_A, NULL, NULL, NULL, NULL, err, sizeof(err)) ||
	    tgt_config_add_host(cfg, a, HOST_K, secret, NULL, NULL, NULL, err, sizeof(err)) ||
	    tgt_config_add_host(cfg, b, HOST_B, NULL, NULL, NULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "fuzz_target_session: %s\n", err);
		abort();
	}
	/* small limits, so that waiting for memory and full queues happen */
	tgt_config_set_limit(cfg, "max_queue_depth", 8, err, sizeof(err));
	tgt_config_set_limit(cfg, "max_io_queues", 4, err, sizeof(err));
	tgt_config_set_limit(cfg, "max_connection_memory_mb", 4, err, sizeof(err));
	tgt_config_set_limit(cfg, "max_memory_mb", 12, err, sizeof(err));
	/* the harness's own opens keep the devices (and their data) while the target runs */
	if (unvme_ctrlr_open(DEV_A, NULL, &dev[0]) || unvme_ctrlr_open(DEV_B, NULL, &dev[1]) ||
	    unvme_qpair_create(dev[0], NULL, &qp[0]) || unvme_qpair_create(dev[1], NULL, &qp[1]))
		abort();
	if (unvme_target_start(cfg, &target, err, sizeof(err))) {
		fprintf(stderr, "fuzz_target_session: %s\n", err);
		abort();
	}
	poller.t = target;
	poller.pool.limit = 4u << 20;
	if (dhchap_random(&hash_key, sizeof(hash_key)))
		abort();
	canary_make(&canary[0], 0xa5c3);
	canary_make(&canary[1], 0x5a3c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	signal(SIGPIPE, SIG_IGN); /* writes to a connection the target closed */
	trace = getenv("FUZZ_TARGET_TRACE") != NULL;
	start_target();
	return 0;
}

/* ---- the input ---- */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t u16(struct in *in)
{
	return (uint16_t)(u8(in) | u8(in) << 8);
}

static uint32_t u32(struct in *in)
{
	return u16(in) | (uint32_t)u16(in) << 16;
}

/* ---- connections, seen from the host's side ---- */

struct fconn {
	struct tgt_conn *c;
	int peer;
	bool reading;
	int owner;
	bool hd, dd;                       /* digests the ICResp granted */
	bool icresp;
	uint8_t carry[7];                  /* the stream's last bytes: a canary word may straddle reads */
	size_t ncarry;
	uint8_t pdu[PDU_KEEP];             /* the PDU being received (its first PDU_KEEP bytes) */
	uint32_t have, plen;
	uint16_t cntlid;                   /* from the last successful Connect */
	uint16_t last_status;
	struct nvme_tcp_data r2t;          /* the last R2T */
	bool has_r2t;
	_Alignas(8) uint8_t c2h[4096];     /* the start of the last C2HData */
	uint32_t c2h_len;
};

static struct fconn conns[MAX_CONNS];
static uint32_t hpda_bytes[MAX_CONNS];

/* One PDU the target sent (plen bytes, the first avail of them at p): checked like the host
 * checks it, then remembered. */
ORACLE static void on_pdu(struct fconn *f, const uint8_t *p, uint32_t plen, uint32_t avail)
{
	struct nvme_tcp_hdr h;
	memcpy(&h, p, sizeof(h));
	if (trace) {
		uint16_t st = 0;
		if (h.type == NVME_TCP_CAPSULE_RESP && avail >= 24)
			memcpy(&st, p + 22, 2);
		fprintf(stderr, "conn %d: %s, %u bytes%s%03x\n", (int)(f - conns), tcp_pdu_type_name(h.type),
			plen, h.type == NVME_TCP_CAPSULE_RESP ? ", status " : "",
			h.type == NVME_TCP_CAPSULE_RESP ? (st >> 1) & 0x7ffu : 0);
	}
	if (h.type == NVME_TCP_ICRESP) {
		struct tcp_pdu_info info;
		struct nvme_tcp_icresp r;
		if (avail < sizeof(r))
			fail("the target sent an ICResp of %u bytes", plen);
		memcpy(&r, p, sizeof(r));
		if (tcp_pdu_check_icresp(&r, NVME_TCP_DGST_HDR | NVME_TCP_DGST_DATA, &info) != TCP_PDU_OK)
			fail("the target sent an ICResp its host refuses: %s", info.why);
		f->hd = r.dgst & NVME_TCP_DGST_HDR;
		f->dd = r.dgst & NVME_TCP_DGST_DATA;
		f->icresp = true;
		return;
	}
	struct tcp_pdu_rules rules = {.controller = false, .hdgst = f->hd, .ddgst = f->dd,
				      .pda = hpda_bytes[f - conns]};
	struct tcp_pdu_info info;
	if (h.type != NVME_TCP_C2H_TERM && tcp_pdu_check(&h, &rules, &info) != TCP_PDU_OK) {
		fail("the target sent a PDU its host refuses: %s", info.why);
	}
	if (h.type == NVME_TCP_CAPSULE_RESP && avail >= sizeof(struct nvme_tcp_rsp)) {
		struct nvme_tcp_rsp r;
		memcpy(&r, p, sizeof(r));
		f->last_status = (r.cqe.status >> 1) & 0x7ff;
		if (f->last_status == 0 && !f->cntlid)
			f->cntlid = (uint16_t)r.cqe.dw0;
	} else if (h.type == NVME_TCP_R2T && avail >= sizeof(struct nvme_tcp_data)) {
		memcpy(&f->r2t, p, sizeof(f->r2t));
		f->has_r2t = true;
	} else if (h.type == NVME_TCP_C2H_DATA && h.pdo && h.pdo < avail) {
		uint32_t end = plen - (f->dd ? 4u : 0u);
		if (end > avail)
			end = avail;
		uint32_t n = end > h.pdo ? end - h.pdo : 0;
		f->c2h_len = n < sizeof(f->c2h) ? n : sizeof(f->c2h);
		memcpy(f->c2h, p + h.pdo, f->c2h_len);
	}
}

/* Bytes of the stream, in order: split in PDUs. */
ORACLE static void parse(struct fconn *f, const uint8_t *b, size_t n)
{
	while (n) {
		if (f->have < 8) {
			size_t take = 8 - f->have < n ? 8 - f->have : n;
			memcpy(f->pdu + f->have, b, take);
			f->have += (uint32_t)take, b += take, n -= take;
			if (f->have < 8)
				return;
			memcpy(&f->plen, f->pdu + 4, 4);
			if (f->plen < 8 || f->plen > (64u << 20))
				fail("the target sent PDU length %u", f->plen);
		}
		size_t take = f->plen - f->have < n ? f->plen - f->have : n;
		if (f->have < PDU_KEEP)
			memcpy(f->pdu + f->have, b, f->have + take <= PDU_KEEP ? take : PDU_KEEP - f->have);
		f->have += (uint32_t)take, b += take, n -= take;
		if (f->have == f->plen) {
			on_pdu(f, f->pdu, f->plen, f->plen < PDU_KEEP ? f->plen : PDU_KEEP);
			f->have = f->plen = 0;
		}
	}
}

/* What the target sent a connection since the last look: scanned for canaries, parsed. */
ORACLE static void drain(struct fconn *f)
{
	if (f->peer < 0 || !f->reading)
		return;
	if (f->c && f->c->ss)
		f->owner = f->c->ss == &target->subs[0] ? OWNER_A : f->c->ss == &target->subs[1] ? OWNER_B
											: OWNER_NONE;
	static uint8_t buf[7 + 65536];
	for (;;) {
		memcpy(buf, f->carry, f->ncarry);
		ssize_t n = read(f->peer, buf + f->ncarry, 65536);
		if (n <= 0)
			break;
		size_t all = f->ncarry + (size_t)n;
		int which;
		long at = canary_scan(buf, all, f->owner, &which);
		if (at >= 0) {
			fail("LEAK: canary of subsystem %c reached connection %d (of %s, %s, queue %u), %ld "
			     "bytes into what it read now, inside a PDU of type %u (%u of %u bytes in)",
			     'A' + which, (int)(f - conns),
			     f->owner == OWNER_NONE ? "no subsystem" : f->owner == OWNER_A ? "A" : "B",
			     f->c ? "open" : "closed", f->c ? f->c->qid : 0, at - (long)f->ncarry,
			     f->have >= 1 ? f->pdu[0] : 255u, f->have, f->plen);
		}
		parse(f, buf + f->ncarry, (size_t)n);
		f->ncarry = all < 7 ? all : 7;
		memcpy(f->carry, buf + all - f->ncarry, f->ncarry);
	}
}

static void conn_close(struct fconn *f)
{
	if (f->c)
		tgt_conn_free(f->c);
	if (f->peer >= 0)
		close(f->peer);
	memset(f, 0, sizeof(*f));
	f->peer = -1;
}

/* Runs the target until nothing moves: services every connection, drains what it sent,
 * frees those that ended (as a poller drops them). */
static void pump(void)
{
	for (int round = 0, idle = 0; round < 64 && idle < 2; round++) {
		int work = 0;
		uint32_t pressure = atomic_load(&target->mem_pressure);
		if (pressure != poller.pressure_seen) { /* as tgt_poller.c answers it */
			poller.pressure_seen = pressure;
			for (int i = 0; i < MAX_CONNS; i++)
				if (conns[i].c && !conns[i].c->wait_cmd)
					tgt_bufs_trim(conns[i].c);
			tgt_bufpool_free(target, &poller.pool);
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			struct fconn *f = &conns[i];
			if (!f->c)
				continue;
			work += tgt_conn_service(f->c);
			drain(f);
			if (f->c->closing && (tcp_txq_count(&f->c->tx) == 0 || round > 8)) {
				drain(f);
				tgt_conn_free(f->c);
				f->c = NULL;
				work++;
			}
		}
		idle = work ? 0 : idle + 1;
	}
}

static void send_bytes(struct fconn *f, const void *p, size_t n)
{
	const uint8_t *b = p;
	canary_sent(b, n);
	/* the socket pair holds a few hundred KiB: let the target take what it can meanwhile */
	for (int tries = 0; n && tries < 64 && f->peer >= 0; tries++) {
		ssize_t w = write(f->peer, b, n);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			continue;
		}
		if (f->c)
			tgt_conn_service(f->c);
		drain(f);
	}
	pump();
}

/* A PDU with the negotiated digests: header (+ digest, padding to the target's alignment of
 * 4), data (+ digest). */
static void send_pdu(struct fconn *f, uint8_t type, uint8_t flags, const void *hdr, uint8_t hlen,
		     const void *data, uint32_t dlen)
{
	static uint8_t pdu[16384];
	if ((size_t)hlen + 8 + dlen > sizeof(pdu))
		return;
	uint32_t pdo = dlen ? tcp_pdu_data_offset(hlen, f->hd, 4) : 0;
	uint32_t plen = (dlen ? pdo : hlen + (f->hd ? 4u : 0u)) + dlen + (dlen && f->dd ? 4u : 0u);
	struct nvme_tcp_hdr ch = {.type = type,
				  .flags = (uint8_t)(flags | (f->hd ? NVME_TCP_F_HDGST : 0) |
						     (dlen && f->dd ? NVME_TCP_F_DDGST : 0)),
				  .hlen = hlen, .pdo = (uint8_t)pdo, .plen = plen};
	memcpy(pdu, hdr, hlen);
	memcpy(pdu, &ch, sizeof(ch));
	uint32_t at = hlen;
	if (f->hd) {
		uint32_t d = tcp_hdgst(pdu, hlen);
		memcpy(pdu + at, &d, 4);
		at += 4;
	}
	if (dlen) {
		memset(pdu + at, 0, pdo - at);
		memcpy(pdu + pdo, data, dlen);
		at = pdo + dlen;
		if (f->dd) {
			uint32_t d = crc32c(0, data, dlen);
			memcpy(pdu + at, &d, 4);
			at += 4;
		}
	}
	send_bytes(f, pdu, at);
}

static void send_capsule(struct fconn *f, const struct nvme_sqe *sqe, const void *icd, uint32_t icd_len)
{
	struct nvme_tcp_cmd c = {.sqe = *sqe};
	send_pdu(f, NVME_TCP_CAPSULE_CMD, 0, &c, sizeof(c), icd, icd_len);
}

static void sgl(struct nvme_sqe *sqe, uint8_t type, uint32_t len)
{
	struct nvme_sgl_desc d = {.addr = 0, .len = len, .type = type};
	sqe->flags = NVME_CMD_FLAGS_PSDT_SGL;
	memcpy(&sqe->prp1, &d, sizeof(d));
}

/* ---- operations ---- */

static const char *const subnqns[] = {NQN_A, NQN_B, NVMF_DISCOVERY_NQN, "nqn.2024-01.io.unvme.fuzz:none"};
static const char *const hostnqns[] = {HOST_A, HOST_B, HOST_K, "nqn.2014-08.io.unvme.fuzz:stranger"};

static void op_open(void)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		struct fconn *f = &conns[i];
		if (f->c || f->peer >= 0)
			continue;
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
			return;
		f->c = tgt_conn_new(target, sv[0]);
		if (!f->c) {
			close(sv[0]);
			close(sv[1]);
			return;
		}
		f->c->p = &poller;
		f->peer = sv[1];
		f->reading = true;
		f->owner = OWNER_NONE;
		return;
	}
}

static void op_icreq(struct fconn *f, struct in *in)
{
	uint8_t b = u8(in);
	struct nvme_tcp_icreq r = {.hdr = {.type = NVME_TCP_ICREQ, .hlen = 128, .plen = 128}};
	r.dgst = b & 3u;
	r.hpda = (b >> 2) & 31u;
	r.pfv = (b & 0x80) ? 1 : 0;
	if (!f->icresp) /* a second ICReq is refused: the first one's alignment stays */
		hpda_bytes[f - conns] = 4u * (r.hpda + 1u);
	send_bytes(f, &r, sizeof(r));
}

static void op_connect(struct fconn *f, struct in *in)
{
	uint8_t mode = u8(in), who = u8(in), sq = u8(in), kato = u8(in);
	struct nvme_sqe sqe = {0};
	struct nvmf_connect_cmd *cc = (void *)&sqe;
	cc->opc = NVME_FABRICS_OPC;
	cc->cid = u16(in);
	cc->fctype = NVMF_FCTYPE_CONNECT;
	cc->qid = mode & 0x80 ? (uint16_t)(mode & 7u) : 0;
	cc->sqsize = sq;
	cc->kato = kato * 100u;
	cc->cattr = (mode & 0x40) ? NVMF_CONNECT_CATTR_DISABLE_SQFLOW : 0;
	struct nvmf_connect_data d = {0};
	d.cntlid = cc->qid ? conns[(mode >> 3) & 3u].cntlid : NVMF_CNTLID_DYNAMIC;
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", subnqns[who & 3u]);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", hostnqns[(who >> 2) & 3u]);
	sgl(&sqe, NVME_SGL_INCAPSULE, sizeof(d));
	f->cntlid = 0;
	send_capsule(f, &sqe, &d, sizeof(d));
}

static void op_property(struct fconn *f, struct in *in)
{
	static const uint32_t ofst[] = {NVME_REG_CAP, NVME_REG_VS, NVME_REG_CC, NVME_REG_CSTS, 0x20};
	static const uint32_t cc_values[] = {0x460001, 0x460000, 0x464001, 0x460005};
	uint8_t b = u8(in);
	struct nvme_sqe sqe = {0};
	struct nvmf_property_cmd *pc = (void *)&sqe;
	pc->opc = NVME_FABRICS_OPC;
	pc->cid = u16(in);
	pc->fctype = (b & 1) ? NVMF_FCTYPE_PROPERTY_SET : NVMF_FCTYPE_PROPERTY_GET;
	pc->attrib = (b >> 1) & 1u;
	pc->ofst = ofst[(b >> 2) % 5];
	pc->value = (b & 0x80) ? u32(in) : cc_values[(b >> 5) & 3u];
	sgl(&sqe, NVME_SGL_TRANSPORT, 0);
	send_capsule(f, &sqe, NULL, 0);
}

static const uint8_t opcodes[] = {
	/* admin */
	NVME_ADM_IDENTIFY, NVME_ADM_GET_LOG_PAGE, NVME_ADM_GET_FEATURES, NVME_ADM_SET_FEATURES,
	NVME_ADM_KEEP_ALIVE, NVME_ADM_ASYNC_EVENT, NVME_ADM_ABORT, NVME_ADM_FORMAT_NVM,
	/* NVM and ZNS */
	NVME_CMD_READ, NVME_CMD_WRITE, NVME_CMD_COMPARE, NVME_CMD_FLUSH, NVME_CMD_WRITE_ZEROES,
	NVME_CMD_DSM, NVME_CMD_VERIFY, NVME_CMD_WRITE_UNCOR, NVME_CMD_COPY, NVME_CMD_ZONE_APPEND,
	NVME_CMD_ZONE_MGMT_RECV, NVME_CMD_ZONE_MGMT_SEND,
	/* KV, standard and vendor */
	NVME_KV_STORE, NVME_KV_RETRIEVE, NVME_KV_LIST, NVME_KV_DELETE, NVME_KV_EXIST,
	NVME_KVV_STORE, NVME_KVV_RETRIEVE, NVME_KVV_DELETE, NVME_KVV_EXIST, NVME_KVV_ITER_REQ,
	NVME_KVV_ITER_READ, NVME_KVV_APPEND,
	/* fabrics */
	NVME_FABRICS_OPC,
};

static const uint32_t lengths[] = {0, 16, 512, 1024, 4096, 8192, 65536, 512 * 256, 1u << 20, 2u << 20};

/* Any command: opcode, NSID, CDW10-15, an SGL and in-capsule data, all from the input. */
static void op_command(struct fconn *f, struct in *in)
{
	uint8_t o = u8(in), flags = u8(in);
	struct nvme_sqe sqe = {0};
	sqe.opc = o < 2 * sizeof(opcodes) ? opcodes[o % sizeof(opcodes)] : o;
	sqe.cid = u16(in);
	uint8_t ns = u8(in);
	sqe.nsid = ns == 0xff ? 0xffffffffu : ns & 3u;
	/* small fields first (NLB, NUMD, sizes), whole dwords when asked */
	uint32_t *cdw = &sqe.cdw10;
	for (int i = 0; i < 6; i++)
		cdw[i] = (flags & (1u << i)) ? u32(in) : u8(in);
	if (sqe.opc == NVME_FABRICS_OPC)
		((struct nvmf_cmd *)&sqe)->fctype = (uint8_t)cdw[5];
	uint8_t l = u8(in);
	uint32_t len = l & 0x80 ? (uint32_t)u16(in) * 4u : lengths[l % (sizeof(lengths) / sizeof(lengths[0]))];
	uint8_t t = u8(in);
	uint8_t type = t & 0x40 ? t : (t & 1) ? NVME_SGL_INCAPSULE : NVME_SGL_TRANSPORT;
	sgl(&sqe, type, len);
	dirty |= may_write(sqe.opc);
	if (flags & 0x40)
		sqe.flags = u8(in); /* PSDT and FUSE as given */
	uint32_t icd = type == NVME_SGL_INCAPSULE ? len : 0;
	if (t & 0x20)
		icd = u16(in) & 0x3fffu;
	if (icd > 9000)
		icd = 9000;
	static uint8_t data[9000];
	uint8_t fill = u8(in);
	size_t take = (t & 0x10) ? (in->n < icd ? in->n : icd) : 0; /* the data from the input */
	memcpy(data, in->p, take);
	memset(data + take, fill, icd - take);
	in->p += take;
	in->n -= take;
	send_capsule(f, &sqe, data, icd);
}

/* H2CData for the last R2T: as asked (in one or two PDUs), or with fields from the input. */
static void op_h2c(struct fconn *f, struct in *in)
{
	uint8_t mode = u8(in), fill = u8(in);
	struct nvme_tcp_data h = {0};
	h.cccid = f->r2t.cccid;
	h.ttag = f->r2t.ttag;
	uint32_t len = f->has_r2t ? f->r2t.datal : 0;
	if (mode & 1) {
		h.cccid = u16(in);
		h.ttag = u16(in);
		h.datao = u32(in) & 0x3fffu;
		len = u16(in);
	}
	static uint8_t data[16000];
	uint32_t done = h.datao, end = h.datao + len;
	while (done < end) {
		uint32_t n = end - done;
		if (n > 8192)
			n = 8192;
		if ((mode & 2) && n > 512)
			n /= 2;
		memset(data, fill, n);
		h.datao = done;
		h.datal = n;
		bool last = done + n == end;
		send_pdu(f, NVME_TCP_H2C_DATA, last || (mode & 4) ? NVME_TCP_F_LAST_PDU : 0, &h, sizeof(h),
			 data, n);
		done += n;
		if (!f->c || f->c->closing)
			break;
	}
	f->has_r2t = false;
}

static void op_raw(struct fconn *f, struct in *in)
{
	uint8_t n = u8(in);
	size_t take = in->n < n ? in->n : n;
	send_bytes(f, in->p, take);
	in->p += take;
	in->n -= take;
}

/* An authentication command: Send with msg, or Receive of al bytes. */
static void auth_cmd(struct fconn *f, bool send, const void *msg, uint32_t len)
{
	struct nvme_sqe sqe = {0};
	struct nvmf_auth_cmd *a = (void *)&sqe;
	a->opc = NVME_FABRICS_OPC;
	a->cid = 0x4a;
	a->fctype = send ? NVMF_FCTYPE_AUTH_SEND : NVMF_FCTYPE_AUTH_RECV;
	a->secp = NVME_AUTH_SECP;
	a->spsp0 = a->spsp1 = NVME_AUTH_SPSP;
	a->len = len;
	sgl(&sqe, send ? NVME_SGL_INCAPSULE : NVME_SGL_TRANSPORT, len);
	f->c2h_len = 0;
	send_capsule(f, &sqe, send ? msg : NULL, send ? len : 0);
}

/* A whole DH-HMAC-CHAP transaction as HOST_K (SHA-256, null group), with the right key or not. */
static void op_auth(struct fconn *f, struct in *in)
{
	uint8_t mode = u8(in);
	uint16_t tid = u16(in);
	uint8_t neg[8 + 64] = {0};
	struct nvme_auth_negotiate *n = (void *)neg;
	n->hdr.auth_type = NVME_AUTH_COMMON;
	n->hdr.auth_id = NVME_AUTH_NEGOTIATE;
	n->hdr.t_id = tid;
	n->napd = 1;
	n->desc[0].authid = NVME_AUTH_PROTOCOL_DHCHAP;
	n->desc[0].halen = 1;
	n->desc[0].dhlen = 1;
	n->desc[0].idlist[0] = NVME_AUTH_HASH_SHA256;
	n->desc[0].idlist[NVME_AUTH_DHLIST_OFFSET] = NVME_AUTH_DH_NULL;
	auth_cmd(f, true, neg, sizeof(neg));
	auth_cmd(f, false, NULL, 4096);
	if (!f->c || f->c2h_len < sizeof(struct nvme_auth_challenge) + 32)
		return;
	const struct nvme_auth_challenge *ch = (const void *)f->c2h;
	if (ch->hdr.auth_id != NVME_AUTH_CHALLENGE || ch->hl != 32)
		return;
	uint8_t kh[DHCHAP_MAX_HASH], rep[16 + 64] = {0};
	struct nvme_auth_reply *r = (void *)rep;
	size_t khl = dhchap_key_transform(&key_k, HOST_K, kh);
	if (!khl || dhchap_response(NVME_AUTH_HASH_SHA256, kh, khl, ch->cval, ch->seqnum, tid, "HostHost",
				    HOST_K, NQN_A, NULL, 0, r->rval))
		abort();
	if (mode & 1)
		r->rval[mode % 32] ^= 0x40; /* the wrong key's answer */
	r->hdr.auth_type = NVME_AUTH_DHCHAP;
	r->hdr.auth_id = NVME_AUTH_REPLY;
	r->hdr.t_id = tid;
	r->hl = 32;
	auth_cmd(f, true, rep, sizeof(rep));
	auth_cmd(f, false, NULL, 4096);
}

/* Time passes for every connection: deadlines and keep alive as the poller checks them. */
static void op_time(struct in *in)
{
	uint64_t later = mono_ms_coarse() + (uint64_t)u16(in) * 100u;
	for (int i = 0; i < MAX_CONNS; i++) {
		if (!conns[i].c)
			continue;
		tgt_keepalive_check(conns[i].c, later);
		tgt_conn_deadline(conns[i].c, later);
	}
	pump();
}

static void finish(void)
{
	for (int i = 0; i < MAX_CONNS; i++)
		conn_close(&conns[i]);
	for (int s = 0; s < target->nsubs; s++)
		if (target->subs[s].ctrls)
			fail("a controller of %s outlived its connections", target->subs[s].nqn);
	if (target->disc.ctrls)
		fail("a discovery controller outlived its connections");
	/* every buffer is back in the pool (kept for the next input, as a poller keeps it); the
	 * target's own poller thread has no connection and holds none */
	uint64_t mem = atomic_load(&target->mem);
	if (mem != poller.pool.bytes)
		fail("%llu bytes of data buffers counted, %llu in the pool", (unsigned long long)mem,
		     (unsigned long long)poller.pool.bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	for (int i = 0; i < MAX_CONNS; i++) {
		memset(&conns[i], 0, sizeof(conns[i]));
		conns[i].peer = -1;
	}
	canary_restore();
	for (int ops = 0; in.n && ops < 96; ops++) {
		uint8_t op = u8(&in);
		struct fconn *f = &conns[(op >> 4) & 3u];
		switch (op & 0xfu) {
		case 0:
			op_open();
			continue;
		case 1:
			op_time(&in);
			continue;
		default:
			break;
		}
		if (!f->c)
			continue;
		switch (op & 0xfu) {
		case 2:
			op_icreq(f, &in);
			break;
		case 3:
			op_connect(f, &in);
			break;
		case 4:
			op_property(f, &in);
			break;
		case 5:
		case 6:
		case 7:
			op_command(f, &in);
			break;
		case 8:
			op_h2c(f, &in);
			break;
		case 9:
			op_raw(f, &in);
			break;
		case 10:
			op_auth(f, &in);
			break;
		case 11:
			f->reading = !f->reading; /* a host that stops reading: back-pressure */
			pump();
			break;
		case 12:
			shutdown(f->peer, SHUT_RDWR); /* the host goes away */
			pump();
			break;
		default:
			pump();
			break;
		}
	}
	for (int i = 0; i < MAX_CONNS; i++)
		conns[i].reading = true;
	pump();
	finish();
	return 0;
}
