/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the writers and checkers of the crash harness share (tests/crash/README in
 * docs/reliability.md): the acknowledgement log, option parsing, a seeded generator, and the
 * checker's report.
 *
 * The acknowledgement log is the test's oracle, a text file the writer appends one line to
 * with a single write(2) per line (so a SIGKILL leaves whole lines: a trailing partial line is
 * ignored). Each operation is logged before it is issued (its intent) and again when it is
 * acknowledged:
 *   V <0|1>                    the volatile write cache was set for this round
 *   W <seq> <slba> <nlb> <fua> block write (intent)       S <seq> <key> <len>   KV store
 *   Z <seq> <slba> <nlb>       block write zeroes         D <seq> <key>         KV delete
 *   M <seq>                    format (every key or block erased)
 *   A <seq>                    operation <seq> acknowledged
 *   F <id>                     flush <id> submitted: it covers every A line above it
 *   G <id>                     flush <id> acknowledged
 * and for zoned namespaces (crash_zns.c):
 *   P <seq> <zslba> <nlb> <fua> Zone Append (intent)      L <seq> <lba>  where it landed
 *   R <seq> <zslba>            Reset Zone                 X <seq> <zslba> Finish Zone
 * Sequence numbers are (round << 32) + n, unique across the rounds of one device.
 */
#ifndef UNVME_CRASH_COMMON_H
#define UNVME_CRASH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct unvme_qpair;

/* ---- options: "--name value" pairs and "--flag" switches ---- */
struct copt {
	int argc;
	char **argv;
};
const char *copt_str(const struct copt *o, const char *name, const char *def);
uint64_t copt_u64(const struct copt *o, const char *name, uint64_t def);
bool copt_flag(const struct copt *o, const char *name);

/* A writer-and-checker program's main: argv[1] "write" or "check", the options after it. */
int crash_main(int argc, char **argv, int (*write_fn)(struct copt *), int (*check_fn)(struct copt *),
	       const char *usage);

/* The writers' queue of slots: polls qp until one of the n slots (stride bytes apart, each
 * with a bool busy_off bytes in) is free. Its index; -1 when polling failed, -2 when *failed
 * was set (a command failed). */
int crash_free_slot(struct unvme_qpair *qp, void *slots, size_t stride, size_t busy_off, uint32_t n,
		    const int *failed);

/* ---- acknowledgement log (writer side) ---- */
void ack_log_open(const char *path);
void ack_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- acknowledgement log (checker side) ---- */
enum clog_kind { CL_VWC, CL_WRITE, CL_ZERO, CL_STORE, CL_DELETE, CL_FORMAT, CL_ACK, CL_FLUSH,
		 CL_FLUSHED, CL_APPEND, CL_LANDED, CL_RESET, CL_FINISH };
struct clog_entry {
	enum clog_kind kind;
	uint64_t a, b, c, d;   /* the numbers of the line, in order */
};
/* Reads every whole line; *n entries in a malloc'd array. -1 if the file cannot be read. */
int ack_log_read(const char *path, struct clog_entry **out, size_t *n);

/*
 * Operation bookkeeping shared by the checkers: for every operation of the log, whether it
 * was acknowledged and whether it was durable when the process died (acknowledged and then
 * covered by an acknowledged flush, or written through: FUA, write cache off).
 */
struct cop {
	uint64_t seq;
	enum clog_kind kind;   /* CL_WRITE, CL_ZERO, CL_STORE, CL_DELETE, CL_FORMAT, CL_APPEND,
				  CL_RESET, CL_FINISH */
	uint64_t a, b;         /* write: slba, nlb; store: key, length; delete: key;
				  append: zslba, nlb; reset, finish: zslba */
	uint64_t lba;          /* append: where it landed (UINT64_MAX: not known) */
	bool fua;
	bool acked;
	bool durable;
};
struct cops {
	struct cop *v;
	size_t n;
	bool vwc;              /* write cache on during the round (the default) */
	uint64_t flushes_acked;
};
/* Builds the operation list of a round's log. -1 with a message if the log is malformed. */
int cops_build(const char *log_path, struct cops *ops);
/* A device that promises durability at completion (a KV SSD's power-loss protection): every
 * acknowledged operation counts as durable. */
void cops_acked_durable(struct cops *ops);
struct cop *cops_find(struct cops *ops, uint64_t seq);

/* ---- the checker's verdict ----
 * One JSON object on stdout: counters, and the first violations in words. Exit status 0 when
 * the promise held, 1 on a violation, 2 when the check itself could not run. */
struct cverdict {
	const char *component;
	bool powerloss;
	uint64_t ops, acked, durable, flushes;
	uint64_t checked;      /* blocks or keys read back */
	uint64_t intact;       /* holding the newest version the promise requires or a later one */
	uint64_t inflight;     /* holding a version that was written but not yet acknowledged */
	uint64_t lost;         /* an acknowledged (durable) version is missing: older or none */
	uint64_t corrupt;      /* checksum mismatch, or a version nobody wrote there */
	uint64_t resurrected;  /* a deleted key is back */
	uint64_t damaged;      /* in a damaged range and found lost or detected corrupt: allowed */
	uint64_t iter_keys;    /* keys an iterator returned */
	uint64_t violations;
	char first[8][256];
};
void cverdict_violation(struct cverdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cverdict_print(const struct cverdict *v, const char *extra_json);

/* ---- data ---- */
uint64_t crng_next(uint64_t *state);
/* Deterministic filler for payload bytes, from a seed. */
void cfill(uint8_t *p, size_t n, uint64_t seed);
/* A block of len bytes at b: the header hdr (hdr_len bytes, its CRC field at crc_off), then
 * filler from seed; the CRC-32C of the whole block, taken with the field 0, goes in the field. */
void cblock_fill(uint8_t *b, uint32_t len, const void *hdr, size_t hdr_len, size_t crc_off,
		 uint64_t seed);
/* A block writer's error: the command's status (rc > 0, of command set csi) or the library's
 * message. Returns 2, the checkers' "could not run". */
int cdie(const char *prog, const char *what, int rc, uint8_t csi);
uint32_t ccrc(const void *p, size_t n);
/* The keys of one kv_iterate_read chunk of len bytes (u32 count, then per key its u32
 * length and bytes): each(key, klen, arg) for every key that lies wholly inside. */
void ckv_iter_keys(const uint8_t *buf, size_t len,
		   void (*each)(const uint8_t *key, uint32_t klen, void *arg), void *arg);

/* Writes text lines to path atomically (temporary file, fsync, rename). */
FILE *cstate_create(const char *path, char *tmp, size_t tmplen);
int cstate_commit(FILE *f, const char *tmp, const char *path);

#endif
