/* SPDX-License-Identifier: BSD-3-Clause */
#include "crash_common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/ns/kv_crc.h"
#include "unvme/unvme.h"

/* ---- options ---- */

static int copt_find(const struct copt *o, const char *name)
{
	for (int i = 0; i < o->argc; i++)
		if (o->argv[i][0] == '-' && o->argv[i][1] == '-' && !strcmp(o->argv[i] + 2, name))
			return i;
	return -1;
}

const char *copt_str(const struct copt *o, const char *name, const char *def)
{
	int i = copt_find(o, name);
	return i >= 0 && i + 1 < o->argc ? o->argv[i + 1] : def;
}

uint64_t copt_u64(const struct copt *o, const char *name, uint64_t def)
{
	const char *v = copt_str(o, name, NULL);
	return v ? strtoull(v, NULL, 0) : def;
}

bool copt_flag(const struct copt *o, const char *name)
{
	return copt_find(o, name) >= 0;
}

int crash_main(int argc, char **argv, int (*write_fn)(struct copt *), int (*check_fn)(struct copt *),
	       const char *usage)
{
	struct copt o = { argc - 2, argv + 2 };
	if (argc >= 2 && !strcmp(argv[1], "write"))
		return write_fn(&o);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return check_fn(&o);
	fprintf(stderr, "usage: %s\n", usage);
	return 2;
}

int crash_free_slot(struct unvme_qpair *qp, void *slots, size_t stride, size_t busy_off, uint32_t n,
		    const int *failed)
{
	for (;;) {
		for (uint32_t i = 0; i < n; i++)
			if (!*(const bool *)((const uint8_t *)slots + i * stride + busy_off))
				return (int)i;
		if (unvme_qpair_poll(qp, 0) < 0)
			return -1;
		if (*failed)
			return -2;
	}
}

/* ---- acknowledgement log ---- */

static int clog_fd = -1;

void ack_log_open(const char *path)
{
	clog_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (clog_fd < 0) {
		fprintf(stderr, "crash: cannot open the log %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

void ack_log(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		abort();
	line[n++] = '\n';
	/* one write per line: a kill leaves the line whole or absent */
	if (write(clog_fd, line, (size_t)n) != n) {
		fprintf(stderr, "crash: log write failed: %s\n", strerror(errno));
		exit(2);
	}
}

int ack_log_read(const char *path, struct clog_entry **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t cap = 1024, cnt = 0;
	struct clog_entry *v = malloc(cap * sizeof(*v));
	char line[256];
	while (v && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		if (!len || line[len - 1] != '\n')
			break; /* the partial last line of a killed writer */
		struct clog_entry e = { 0 };
		char k = line[0];
		int got = sscanf(line + 1, " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &e.a, &e.b,
				 &e.c, &e.d);
		switch (k) {
		case 'V': e.kind = CL_VWC; break;
		case 'W': e.kind = CL_WRITE; break;
		case 'Z': e.kind = CL_ZERO; break;
		case 'S': e.kind = CL_STORE; break;
		case 'D': e.kind = CL_DELETE; break;
		case 'M': e.kind = CL_FORMAT; break;
		case 'A': e.kind = CL_ACK; break;
		case 'F': e.kind = CL_FLUSH; break;
		case 'G': e.kind = CL_FLUSHED; break;
		case 'P': e.kind = CL_APPEND; break;
		case 'L': e.kind = CL_LANDED; break;
		case 'R': e.kind = CL_RESET; break;
		case 'X': e.kind = CL_FINISH; break;
		default: got = 0; break;
		}
		if (got < 1) {
			fprintf(stderr, "crash: %s: malformed line: %s", path, line);
			free(v);
			fclose(f);
			return -1;
		}
		if (cnt == cap) {
			cap *= 2;
			struct clog_entry *nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[cnt++] = e;
	}
	fclose(f);
	if (!v)
		return -1;
	*out = v;
	*n = cnt;
	return 0;
}

struct cop *cops_find(struct cops *ops, uint64_t seq)
{
	size_t lo = 0, hi = ops->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ops->v[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ops->n && ops->v[lo].seq == seq ? &ops->v[lo] : NULL;
}

int cops_build(const char *log_path, struct cops *ops)
{
	struct clog_entry *e;
	size_t n;
	memset(ops, 0, sizeof(*ops));
	ops->vwc = true;
	if (ack_log_read(log_path, &e, &n) != 0) {
		fprintf(stderr, "crash: cannot read the log %s\n", log_path);
		return -1;
	}
	ops->v = calloc(n ? n : 1, sizeof(*ops->v));
	size_t *acks = calloc(n ? n : 1, sizeof(*acks)); /* op indices in acknowledgement order */
	size_t *marks = calloc(n ? n : 1, sizeof(*marks)); /* flush id -> acks before it */
	uint64_t *mark_ids = calloc(n ? n : 1, sizeof(*mark_ids));
	size_t nacks = 0, nmarks = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct clog_entry *x = &e[i];
		switch (x->kind) {
		case CL_VWC:
			ops->vwc = x->a != 0;
			break;
		case CL_WRITE: case CL_ZERO: case CL_STORE: case CL_DELETE: case CL_FORMAT:
		case CL_APPEND: case CL_RESET: case CL_FINISH: {
			if (ops->n && ops->v[ops->n - 1].seq >= x->a) {
				fprintf(stderr, "crash: %s: sequence %" PRIu64 " out of order\n", log_path, x->a);
				rc = -1;
				break;
			}
			struct cop *o = &ops->v[ops->n++];
			*o = (struct cop){ .seq = x->a, .kind = x->kind, .a = x->b, .b = x->c,
					   .lba = UINT64_MAX,
					   .fua = (x->kind == CL_WRITE || x->kind == CL_APPEND) && x->d };
			break;
		}
		case CL_LANDED: {
			struct cop *o = cops_find(ops, x->a);
			if (!o || o->kind != CL_APPEND) {
				fprintf(stderr, "crash: %s: landing of unknown append %" PRIu64 "\n",
					log_path, x->a);
				rc = -1;
				break;
			}
			o->lba = x->b;
			break;
		}
		case CL_ACK: {
			struct cop *o = cops_find(ops, x->a);
			if (!o || o->acked) {
				fprintf(stderr, "crash: %s: acknowledgement of unknown or acknowledged "
					"operation %" PRIu64 "\n", log_path, x->a);
				rc = -1;
				break;
			}
			o->acked = true;
			/* written through: durable once acknowledged */
			if (!ops->vwc || o->fua)
				o->durable = true;
			acks[nacks++] = (size_t)(o - ops->v);
			break;
		}
		case CL_FLUSH:
			mark_ids[nmarks] = x->a;
			marks[nmarks++] = nacks;
			break;
		case CL_FLUSHED:
			for (size_t m = 0; m < nmarks; m++) {
				if (mark_ids[m] != x->a)
					continue;
				for (size_t k = 0; k < marks[m]; k++)
					ops->v[acks[k]].durable = true;
				ops->flushes_acked++;
			}
			break;
		}
	}
	free(e);
	free(acks);
	free(marks);
	free(mark_ids);
	return rc;
}

void cops_acked_durable(struct cops *ops)
{
	for (size_t i = 0; i < ops->n; i++)
		ops->v[i].durable |= ops->v[i].acked;
}

/* ---- verdict ---- */

void cverdict_violation(struct cverdict *v, const char *fmt, ...)
{
	if (v->violations < sizeof(v->first) / sizeof(v->first[0])) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(v->first[v->violations], sizeof(v->first[0]), fmt, ap);
		va_end(ap);
	}
	v->violations++;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

int cverdict_print(const struct cverdict *v, const char *extra_json)
{
	printf("{\"component\": \"%s\", \"powerloss\": %s, \"ops\": %" PRIu64 ", \"acked\": %" PRIu64
	       ", \"durable\": %" PRIu64 ", \"flushes\": %" PRIu64 ", \"checked\": %" PRIu64
	       ", \"intact\": %" PRIu64 ", \"inflight\": %" PRIu64 ", \"lost\": %" PRIu64
	       ", \"corrupt\": %" PRIu64 ", \"resurrected\": %" PRIu64 ", \"damaged\": %" PRIu64
	       ", \"iter_keys\": %" PRIu64 ", \"violations\": %" PRIu64 ", \"first\": [",
	       v->component, v->powerloss ? "true" : "false", v->ops, v->acked, v->durable,
	       v->flushes, v->checked, v->intact, v->inflight, v->lost, v->corrupt, v->resurrected,
	       v->damaged, v->iter_keys, v->violations);
	uint64_t shown = v->violations < 8 ? v->violations : 8;
	for (uint64_t i = 0; i < shown; i++) {
		if (i)
			printf(", ");
		json_str(v->first[i]);
	}
	printf("]%s%s}\n", extra_json ? ", " : "", extra_json ? extra_json : "");
	fflush(stdout);
	return v->violations ? 1 : 0;
}

/* ---- data ---- */

uint64_t crng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void cfill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t r = crng_next(&s);
		memcpy(p + i, &r, 8);
	}
	if (i < n) {
		uint64_t r = crng_next(&s);
		memcpy(p + i, &r, n - i);
	}
}

void cblock_fill(uint8_t *b, uint32_t len, const void *hdr, size_t hdr_len, size_t crc_off,
		 uint64_t seed)
{
	cfill(b + hdr_len, len - hdr_len, seed);
	memcpy(b, hdr, hdr_len);
	memset(b + crc_off, 0, 4);
	uint32_t crc = ccrc(b, len);
	memcpy(b + crc_off, &crc, 4);
}

int cdie(const char *prog, const char *what, int rc, uint8_t csi)
{
	if (rc > 0)
		fprintf(stderr, "%s: %s: %s\n", prog, what, unvme_status_str(rc, csi));
	else
		fprintf(stderr, "%s: %s: %s (%d)\n", prog, what, unvme_errmsg(), rc);
	return 2;
}

uint32_t ccrc(const void *p, size_t n)
{
	return kv_crc32c(0, p, n);
}

FILE *cstate_create(const char *path, char *tmp, size_t tmplen)
{
	snprintf(tmp, tmplen, "%s.tmp", path);
	return fopen(tmp, "w");
}

int cstate_commit(FILE *f, const char *tmp, const char *path)
{
	int rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -1;
	if (fclose(f) != 0)
		rc = -1;
	if (!rc && rename(tmp, path) != 0)
		rc = -1;
	return rc;
}

void ckv_iter_keys(const uint8_t *buf, size_t len,
		   void (*each)(const uint8_t *key, uint32_t klen, void *arg), void *arg)
{
	uint32_t count;
	if (len < 4)
		return;
	memcpy(&count, buf, 4);
	size_t at = 4;
	for (uint32_t i = 0; i < count && at + 4 <= len; i++) {
		uint32_t kl;
		memcpy(&kl, buf + at, 4);
		if (kl > len - at - 4)
			break;
		each(buf + at + 4, kl, arg);
		at += 4 + (size_t)kl;
	}
}
