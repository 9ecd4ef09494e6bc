/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_perf's command line, the original's: its single letters and long names, and its lists:
 * an option of the list kind (-n -v -o -p -y -g, and the per-device -d -c -s -q -a) takes
 * every following word that does not start with '-', so `-v 4096 2048`, `-n 100 80 30 -b`
 * and `-d A B -c F F0` work as they did. Every error names the option and the value and
 * exits 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_perf.h"

#define PROG "kv_perf"

void kvp_usage(FILE *f)
{
	fprintf(f,
		"usage: kv_perf [-w] [-r] [-x] [-e] [-b] [-z] [-i] [options]\n"
		"  -w, --write              store the keys\n"
		"  -r, --read               retrieve the keys\n"
		"  -x, --verify             store, retrieve and verify the values\n"
		"  -e, --delete             delete the keys\n"
		"  -b, --blend              a blend of stores, retrieves and deletes (-n W R D)\n"
		"  -z, --format             format the device(s) first (erases every key)\n"
		"  -i, --send_get_log       read the utilization log page (C0h) during the I/O;\n"
		"                           alone: show it once\n"
		"  -n, --num_keys N [R D]   keys per I/O thread; with -b stores, retrieves, deletes [1000]\n"
		"  -t, --num_tests N        repeat the phases N times [1]\n"
		"  -v, --value_size B...    value size; up to 8 sizes, key i gets the (i mod count)-th [4096]\n"
		"  -p, --workload D [D D]   key distribution (per blend operation) [0]:\n"
		"                           0 sequential increasing, 1 sequential decreasing,\n"
		"                           2 uniform random in offset..offset+N-1 (repeats possible),\n"
		"                           3 uniform random in the -y range, 4 unique random\n"
		"                           (offset..offset+N-1 shuffled), 5 random drawn anew for\n"
		"                           every phase (db_bench's fillrandom/readrandom)\n"
		"  -o, --offset K [K K]     first key id (per blend operation) [0]\n"
		"  -y, --key_range S-E...   key range for -p 3, inclusive (or N for 0-(N-1))\n"
		"                           [0-0xC0000000; block SSDs: the device]\n"
		"  -g, --seed S...          random seed per I/O thread [1]\n"
		"  -k, --def_value STRING   every value is STRING repeated\n"
		"  -f, --read_file FILE     write the retrieved pairs to FILE (KEY: / VALUE: records)\n"
		"  -F FILE                  every value is FILE's content, repeated\n"
		"  -K BYTES                 key size, 4..255 [16]\n"
		"  -O OFFSET                retrieve from this value offset (a multiple of 512)\n"
		"  -j, --json_conf FILE     SDK JSON configuration [" KVP_DEFAULT_JSON " when it\n"
		"                           exists]; -d -c -s -q -a -m -l -u given too override it\n"
		"  -d, --device DEV...      device(s) [" KVT_DEFAULT_DEVICE "]\n"
		"  -m, --ssd_type TYPE      kv or 1: KV SSD, lba or 0: block SSD [kv]\n"
		"  -c, --core_mask MASK...  CPU cores of each device's I/O threads, hexadecimal [one]\n"
		"  -s, --sync_mask MASK...  sync cores (1 bits) of each device, hexadecimal [all]\n"
		"  -q, --cq_mask MASK...    completion thread cores of each device [another CPU]\n"
		"  -a, --qd QD...           calls in flight per async I/O thread [64]\n"
		"  -l, --slab_size MB       slab size of the SDK\n"
		"  -u, --use_cache          turn the SDK's read cache on\n"
		"  -L, --use_sdk_cmd        the kv_* calls (kv_apis.h) instead of the driver-level\n"
		"                           calls (kvnvme.h)\n"
		"  -J                       JSON output\n"
		"  -h, --help               this help\n"
		"exit codes: 0 success, 1 an I/O failed or data did not verify, 2 usage error,\n"
		"3 the SDK could not be started (device or configuration)\n");
}

static int bad(char opt, const char *val, const char *why)
{
	fprintf(stderr, PROG ": invalid value '%s' for -%c: %s (see kv_perf -h)\n", val, opt, why);
	return KVT_EXIT_USAGE;
}

static bool num(const char *s, uint64_t *out, int base)
{
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end || end == s)
		return false;
	*out = v;
	return true;
}

bool kvp_hexmask(const char *s, uint64_t *out)
{
	if (s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	return num(s, out, 16);
}

/* The original's words of a list: the option's own value and what follows up to an option. */
static bool is_option(const char *s)
{
	return s[0] == '-' && s[1] != '\0';
}

/* The long names of the original's options. */
static const struct {
	const char *name;
	char letter;
} longs[] = {
	{ "num_keys", 'n' }, { "num_tests", 't' }, { "device", 'd' }, { "ssd_type", 'm' },
	{ "value_size", 'v' }, { "core_mask", 'c' }, { "sync_mask", 's' }, { "cq_mask", 'q' },
	{ "qd", 'a' }, { "def_value", 'k' }, { "read_file", 'f' }, { "key_range", 'y' },
	{ "offset", 'o' }, { "workload", 'p' }, { "seed", 'g' }, { "json_conf", 'j' },
	{ "slab_size", 'l' }, { "blend", 'b' }, { "read", 'r' }, { "write", 'w' },
	{ "verify", 'x' }, { "delete", 'e' }, { "format", 'z' }, { "use_cache", 'u' },
	{ "send_get_log", 'i' }, { "use_sdk_cmd", 'L' }, { "help", 'h' },
};

#define FLAGS "wrxebziuLJh"
#define LISTS "nvopygdcsqa"
#define SINGLE "tjmkfFKOl"

/* "S-E" (inclusive) or "N" (0 .. N-1). */
static bool key_range(const char *v, uint64_t *lo, uint64_t *hi)
{
	const char *dash = strchr(v, '-');
	if (!dash) {
		uint64_t n;
		if (!num(v, &n, 0) || n == 0)
			return false;
		*lo = 0;
		*hi = n - 1;
		return true;
	}
	char first[32];
	size_t len = (size_t)(dash - v);
	if (len == 0 || len >= sizeof(first))
		return false;
	memcpy(first, v, len);
	first[len] = '\0';
	return num(first, lo, 0) && num(dash + 1, hi, 0) && *lo <= *hi;
}

/* One value of list option c, the n-th. */
static int list_value(struct kvp_opts *o, char c, int n, const char *v)
{
	uint64_t x = 0;
	int ops = KVP_NOPS;
	switch (c) {
	case 'n':
		if (n >= ops)
			return bad(c, v, "at most 3 counts: stores, retrieves, deletes (with -b)");
		if (!num(v, &x, 0) || x > 1000000000ull)
			return bad(c, v, "expected a number of keys, 0..1000000000");
		o->num_keys[n] = x;
		return -1;
	case 'v':
		if (n >= KVT_MAX_VALUE_SIZES)
			return bad(c, v, "at most 8 value sizes");
		if (!num(v, &x, 0) || x > KV_MAX_IO_VALUE_LEN)
			return bad(c, v, "expected a value size, 0..2097152");
		o->value_size[n] = (uint32_t)x;
		o->nvalues = n + 1;
		return -1;
	case 'o':
		if (n >= ops)
			return bad(c, v, "at most 3 key offsets (store, retrieve, delete)");
		if (!num(v, &x, 0) || x > 1000000000000ull)
			return bad(c, v, "expected a first key id");
		o->key_offset[n] = x;
		return -1;
	case 'p':
		if (n >= ops)
			return bad(c, v, "at most 3 distributions (store, retrieve, delete)");
		if (!num(v, &x, 10) || x > KVP_RAND_PHASE)
			return bad(c, v, "expected a key distribution, 0..5");
		o->dist[n] = (int)x;
		return -1;
	case 'y':
		if (n >= ops)
			return bad(c, v, "at most 3 key ranges (store, retrieve, delete)");
		if (!key_range(v, &o->range_lo[n], &o->range_hi[n]))
			return bad(c, v, "expected a key range START-END (START <= END) or a count");
		o->range_given[n] = true;
		return -1;
	case 'g':
		if (n >= (int)(sizeof(o->seed) / sizeof(o->seed[0])))
			return bad(c, v, "too many seeds");
		if (!num(v, &x, 0))
			return bad(c, v, "expected a number");
		o->seed[n] = x;
		o->nseed = n + 1;
		return -1;
	}
	if (n >= KVP_MAX_DEV) {
		fprintf(stderr, PROG ": -%c: at most %d devices\n", c, KVP_MAX_DEV);
		return KVT_EXIT_USAGE;
	}
	switch (c) {
	case 'd': o->dev[n] = v; o->ndev = n + 1; break;
	case 'c':
		if (!kvp_hexmask(v, &x) || x == 0)
			return bad(c, v, "expected a non-zero hexadecimal core mask");
		o->core_mask[n] = v; o->ncore = n + 1;
		break;
	case 's':
		if (!kvp_hexmask(v, &x))
			return bad(c, v, "expected a hexadecimal sync mask");
		o->sync_mask[n] = v; o->nsync = n + 1;
		break;
	case 'q':
		if (!kvp_hexmask(v, &x))
			return bad(c, v, "expected a hexadecimal CPU mask");
		o->cq_mask[n] = v; o->ncq = n + 1;
		break;
	case 'a':
		if (!num(v, &x, 10) || x == 0 || x > 4095)
			return bad(c, v, "expected a queue depth, 1..4095");
		o->qd[n] = (uint32_t)x; o->nqd = n + 1;
		break;
	}
	return -1;
}

static int single_value(struct kvp_opts *o, char c, const char *v)
{
	uint64_t x = 0;
	switch (c) {
	case 't':
		if (!num(v, &x, 0) || x == 0 || x > 1000000)
			return bad(c, v, "expected a number of tests, 1..1000000");
		o->num_tests = (uint32_t)x;
		break;
	case 'K':
		if (!num(v, &x, 0) || x < KV_MIN_KEY_LEN || x > KV_MAX_KEY_LEN)
			return bad(c, v, "expected a key size, 4..255");
		o->key_size = (uint32_t)x;
		break;
	case 'O':
		if (!num(v, &x, 0) || x % KV_ALIGNMENT_UNIT || x > KV_MAX_IO_VALUE_LEN)
			return bad(c, v, "expected a value offset, a multiple of 512");
		o->value_offset = (uint32_t)x;
		break;
	case 'l':
		if (!num(v, &x, 0) || x == 0 || x > 1048576)
			return bad(c, v, "expected a slab size in MB");
		o->slab_mb = (uint32_t)x;
		break;
	case 'm':
		if (strcmp(v, "kv") == 0 || strcmp(v, "1") == 0)
			o->ssd_type = KV_TYPE_SSD;
		else if (strcmp(v, "lba") == 0 || strcmp(v, "0") == 0)
			o->ssd_type = LBA_TYPE_SSD;
		else
			return bad(c, v, "expected kv or 1 (KV SSD), lba or 0 (block SSD)");
		o->ssd_type_given = true;
		break;
	case 'k':
		if (!*v)
			return bad(c, v, "expected a non-empty string");
		o->pattern = v;
		break;
	case 'j': o->json_config = v; break;
	case 'f': o->dump_file = v; break;
	case 'F': o->value_file = v; break;
	}
	return -1;
}

static void set_flag(struct kvp_opts *o, char c)
{
	switch (c) {
	case 'w': o->write = true; break;
	case 'r': o->read = true; break;
	case 'x': o->verify = true; break;
	case 'e': o->del = true; break;
	case 'b': o->blend = true; break;
	case 'z': o->format = true; break;
	case 'i': o->getlog = true; break;
	case 'u': o->cache = true; break;
	case 'L': o->sdk_level = true; break;
	case 'J': o->json_out = true; break;
	}
}

/* The option letter of argv word arg ("-n", "--num_keys", "--num_keys=5": *inline_val set),
 * or 0 with a message. */
static char letter_of(const char *arg, const char **inline_val)
{
	*inline_val = NULL;
	if (arg[1] != '-') {
		if (arg[2] != '\0') {
			fprintf(stderr, PROG ": unexpected argument '%s': options are single letters, "
				"each on its own (see kv_perf -h)\n", arg);
			return 0;
		}
		if (!strchr(FLAGS LISTS SINGLE, arg[1])) {
			fprintf(stderr, PROG ": unknown option '%s' (see kv_perf -h)\n", arg);
			return 0;
		}
		return arg[1];
	}
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
		if (strlen(longs[i].name) == len && strncmp(longs[i].name, name, len) == 0) {
			if (name[len] == '=')
				*inline_val = name + len + 1;
			return longs[i].letter;
		}
	fprintf(stderr, PROG ": unknown option '%s' (see kv_perf -h)\n", arg);
	return 0;
}

static int check(struct kvp_opts *o)
{
	if (!o->write && !o->read && !o->del && !o->blend && !o->format && !o->verify &&
	    !o->getlog) {
		fprintf(stderr, PROG ": nothing to do: give at least one of -w (write), -r (read), "
			"-e (delete), -b (blend), -z (format), -x (verify), -i (info) "
			"(see kv_perf -h)\n");
		return KVT_EXIT_USAGE;
	}
	/* as the original: -x stores, retrieves and verifies; with -b it verifies the blend's
	 * retrieves */
	if (o->verify && !o->blend)
		o->write = o->read = true;
	if (!o->blend && o->num_keys[0] == 0) {
		fprintf(stderr, PROG ": -n 0: nothing to store or read (see kv_perf -h)\n");
		return KVT_EXIT_USAGE;
	}
	if (o->blend && !o->num_keys[0] && !o->num_keys[1] && !o->num_keys[2]) {
		fprintf(stderr, PROG ": -b with -n 0 0 0: the blend has no operation\n");
		return KVT_EXIT_USAGE;
	}
	for (int k = 0; k < KVP_NOPS; k++)
		if (o->dist[k] == KVP_RAND_PHASE && o->blend) {
			fprintf(stderr, PROG ": -p 5 draws keys per phase: not with -b\n");
			return KVT_EXIT_USAGE;
		}
	for (int i = 0; i < o->nvalues; i++)
		if (o->value_offset && o->value_offset >= o->value_size[i]) {
			fprintf(stderr, PROG ": -O %u is not inside a %u-byte value\n",
				o->value_offset, o->value_size[i]);
			return KVT_EXIT_USAGE;
		}
	if (o->value_offset && o->ssd_type == LBA_TYPE_SSD) {
		fprintf(stderr, PROG ": -O: a value offset applies to KV SSDs, not with -m lba\n");
		return KVT_EXIT_USAGE;
	}
	if (o->pattern && o->value_file) {
		fprintf(stderr, PROG ": -k and -F both give the values' content: choose one\n");
		return KVT_EXIT_USAGE;
	}
	/* without a configuration file the devices are -d's (or the default one) */
	if (!o->json_config) {
		int lists[4] = { o->ncore, o->nsync, o->ncq, o->nqd };
		for (int k = 0; k < 4; k++)
			if (lists[k] > (o->ndev ? o->ndev : 1)) {
				fprintf(stderr, PROG ": -%c has more values than there are devices "
					"(-d)\n", "csqa"[k]);
				return KVT_EXIT_USAGE;
			}
	}
	return -1;
}

int kvp_parse(struct kvp_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->num_keys[0] = KVP_DEFAULT_KEYS;
	o->num_tests = 1;
	o->value_size[0] = 4096;
	o->nvalues = 1;
	o->key_size = 16;
	o->ssd_type = KV_TYPE_SSD;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!is_option(arg)) {
			fprintf(stderr, PROG ": unexpected argument '%s' (see kv_perf -h)\n", arg);
			return KVT_EXIT_USAGE;
		}
		const char *inline_val;
		char c = letter_of(arg, &inline_val);
		if (!c)
			return KVT_EXIT_USAGE;
		if (c == 'h') {
			kvp_usage(stdout);
			return KVT_EXIT_OK;
		}
		if (strchr(FLAGS, c)) {
			set_flag(o, c);
			continue;
		}
		if (!inline_val && (i + 1 >= argc || is_option(argv[i + 1]))) {
			fprintf(stderr, PROG ": option -%c needs a value (see kv_perf -h)\n", c);
			return KVT_EXIT_USAGE;
		}
		int rc;
		if (strchr(SINGLE, c)) {
			rc = single_value(o, c, inline_val ? inline_val : argv[++i]);
			if (rc >= 0)
				return rc;
			continue;
		}
		/* a list: the value, then every following word that is not an option */
		int n = 0;
		if (inline_val) {
			rc = list_value(o, c, n++, inline_val);
			if (rc >= 0)
				return rc;
		}
		while (i + 1 < argc && !is_option(argv[i + 1])) {
			rc = list_value(o, c, n++, argv[++i]);
			if (rc >= 0)
				return rc;
		}
	}
	if (!o->json_config && access(KVP_DEFAULT_JSON, R_OK) == 0) {
		o->json_config = KVP_DEFAULT_JSON;
		o->json_is_default = true;
	}
	return check(o);
}
