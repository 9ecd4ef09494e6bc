/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kv_perf's command line. The original's single letters; an option of the per-device kind
 * (-d -c -s -q -a) takes every following word that is not an option, so `-d A B -c F F0`
 * configures two devices. Every error names the option and the value and exits 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_perf.h"

#define PROG "kv_perf"

void kvp_usage(FILE *f)
{
	fprintf(f,
		"usage: kv_perf [-w] [-r] [-x] [-e] [-b] [-z] [options]\n"
		"  -w            store the keys\n"
		"  -r            retrieve the keys\n"
		"  -x            verify retrieved values (with -r)\n"
		"  -e            delete the keys\n"
		"  -b            blend: each I/O a store, retrieve or delete at random\n"
		"  -z            format the device(s) first (erases every key)\n"
		"  -n NUM        number of keys [100000]\n"
		"  -t NUM        number of tests (repeat the phases) [1]\n"
		"  -v BYTES      value size [4096]\n"
		"  -K BYTES      key size, 4..255 [16]\n"
		"  -p DIST       key distribution: 0 sequential increasing, 1 sequential decreasing,\n"
		"                2 random, 3 unique random, 4 range random (with -y), 5 random drawn\n"
		"                anew for every phase, as db_bench's fillrandom/readrandom/deleterandom [0]\n"
		"  -y RANGE      key range for -p 4 [the number of keys]\n"
		"  -g SEED       random seed [1]\n"
		"  -k BYTE       fill every value with this byte (0..255)\n"
		"  -f FILE       take the values' content from FILE (repeated to the value size)\n"
		"  -o OFFSET     retrieve from this value offset (a multiple of 512)\n"
		"  -j FILE       SDK JSON configuration (instead of -d -m -c -s -q -a -l -u)\n"
		"  -d DEV...     device(s) [" KVT_DEFAULT_DEVICE "]\n"
		"  -m TYPE       ssd type: kv or lba [kv]\n"
		"  -c MASK...    core mask per device, hexadecimal [one CPU per device]\n"
		"  -s MASK...    sync mask per device, hexadecimal: 1 bits sync, 0 async [the core mask]\n"
		"  -q MASK...    completion thread mask per device, hexadecimal [another CPU]\n"
		"  -a QD...      queue depth per device (async calls in flight) [64]\n"
		"  -l MB         slab size of the SDK's cache\n"
		"  -u            turn the SDK's read cache on\n"
		"  -i            read the utilization log page during the I/O\n"
		"  -L            SDK-level calls (the only kind this SDK has; accepted for scripts)\n"
		"  -J            JSON output\n"
		"  -h            this help\n"
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

/* Hexadecimal like the JSON configuration's masks: "F0" and "0xF0" alike. */
static bool hexmask(const char *s, uint64_t *out)
{
	if (s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	return num(s, out, 16) && *out != 0;
}

static bool is_option(const char *s)
{
	return s[0] == '-' && s[1] != '\0';
}

int kvp_parse(struct kvp_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->num_keys = 100000;
	o->num_tests = 1;
	o->value_size = 4096;
	o->key_size = 16;
	o->seed = 1;
	o->fill = -1;
	o->ssd_type = KV_TYPE_SSD;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0) {
			kvp_usage(stdout);
			return KVT_EXIT_OK;
		}
		if (!is_option(arg) || arg[2] != '\0') {
			fprintf(stderr, PROG ": unexpected argument '%s'%s (see kv_perf -h)\n", arg,
				is_option(arg) ? ": options are single letters, each on its own" : "");
			return KVT_EXIT_USAGE;
		}
		char c = arg[1];
		/* flags */
		bool *flag = NULL;
		switch (c) {
		case 'w': flag = &o->write; break;
		case 'r': flag = &o->read; break;
		case 'x': flag = &o->verify; break;
		case 'e': flag = &o->del; break;
		case 'b': flag = &o->blend; break;
		case 'z': flag = &o->format; break;
		case 'i': flag = &o->getlog; break;
		case 'u': flag = &o->cache; break;
		case 'L': flag = &o->sdk_level; break;
		case 'J': flag = &o->json_out; break;
		case 'h': kvp_usage(stdout); return KVT_EXIT_OK;
		default: break;
		}
		if (flag) {
			*flag = true;
			continue;
		}
		if (!strchr("ntvKpygkfojdmcsqal", c)) {
			fprintf(stderr, PROG ": unknown option '%s' (see kv_perf -h)\n", arg);
			return KVT_EXIT_USAGE;
		}
		if (i + 1 >= argc || is_option(argv[i + 1])) {
			fprintf(stderr, PROG ": option -%c needs a value (see kv_perf -h)\n", c);
			return KVT_EXIT_USAGE;
		}
		/* per-device lists: every following non-option word */
		if (strchr("dcsqa", c)) {
			int n = 0;
			while (i + 1 < argc && !is_option(argv[i + 1])) {
				const char *v = argv[++i];
				if (n == KVP_MAX_DEV) {
					fprintf(stderr, PROG ": -%c: at most %d devices\n", c, KVP_MAX_DEV);
					return KVT_EXIT_USAGE;
				}
				uint64_t x = 0;
				switch (c) {
				case 'd': o->dev[n] = v; break;
				case 'c':
					if (!hexmask(v, &x))
						return bad(c, v, "expected a non-zero hexadecimal core mask");
					o->core_mask[n] = x;
					break;
				case 's':
					if (!(v[0] == '0' && v[1] == '\0') && !hexmask(v, &x))
						return bad(c, v, "expected a hexadecimal sync mask");
					o->sync_mask[n] = x;
					break;
				case 'q':
					if (!hexmask(v, &x))
						return bad(c, v, "expected a non-zero hexadecimal CPU mask");
					o->cq_mask[n] = x;
					break;
				case 'a':
					if (!num(v, &x, 10) || x == 0 || x > 4095)
						return bad(c, v, "expected a queue depth, 1..4095");
					o->qd[n] = (uint32_t)x;
					break;
				}
				n++;
			}
			switch (c) {
			case 'd': o->ndev = n; break;
			case 'c': o->ncore = n; break;
			case 's': o->nsync = n; break;
			case 'q': o->ncq = n; break;
			case 'a': o->nqd = n; break;
			}
			continue;
		}
		const char *v = argv[++i];
		uint64_t x = 0;
		switch (c) {
		case 'n':
			if (!num(v, &x, 0) || x == 0 || x > 1000000000ull)
				return bad(c, v, "expected a number of keys, 1..1000000000");
			o->num_keys = x;
			break;
		case 't':
			if (!num(v, &x, 0) || x == 0 || x > 1000000)
				return bad(c, v, "expected a number of tests, 1..1000000");
			o->num_tests = (uint32_t)x;
			break;
		case 'v':
			if (!num(v, &x, 0) || x > KV_MAX_IO_VALUE_LEN)
				return bad(c, v, "expected a value size, 0..2097152");
			o->value_size = (uint32_t)x;
			break;
		case 'K':
			if (!num(v, &x, 0) || x < KV_MIN_KEY_LEN || x > KV_MAX_KEY_LEN)
				return bad(c, v, "expected a key size, 4..255");
			o->key_size = (uint32_t)x;
			break;
		case 'p':
			if (!num(v, &x, 10) || x > 5)
				return bad(c, v, "expected a key distribution, 0..5");
			o->dist = (int)x;
			break;
		case 'y':
			if (!num(v, &x, 0) || x == 0)
				return bad(c, v, "expected a key range, at least 1");
			o->key_range = x;
			break;
		case 'g':
			if (!num(v, &x, 0))
				return bad(c, v, "expected a number");
			o->seed = x;
			break;
		case 'k':
			if (!num(v, &x, 0) || x > 255)
				return bad(c, v, "expected a byte value, 0..255");
			o->fill = (int)x;
			break;
		case 'o':
			if (!num(v, &x, 0) || x % KV_ALIGNMENT_UNIT || x > KV_MAX_IO_VALUE_LEN)
				return bad(c, v, "expected a value offset, a multiple of 512");
			o->offset = (uint32_t)x;
			break;
		case 'l':
			if (!num(v, &x, 0) || x == 0 || x > 1048576)
				return bad(c, v, "expected a slab size in MB");
			o->slab_mb = (uint32_t)x;
			break;
		case 'm':
			if (strcmp(v, "kv") == 0)
				o->ssd_type = KV_TYPE_SSD;
			else if (strcmp(v, "lba") == 0)
				o->ssd_type = LBA_TYPE_SSD;
			else
				return bad(c, v, "expected kv or lba");
			break;
		case 'j': o->json_config = v; break;
		case 'f': o->read_file = v; break;
		}
	}
	if (!o->write && !o->read && !o->del && !o->blend && !o->format) {
		fprintf(stderr, PROG ": nothing to do: give -w, -r, -e, -b or -z (see kv_perf -h)\n");
		return KVT_EXIT_USAGE;
	}
	if (o->verify && !o->read && !o->blend) {
		fprintf(stderr, PROG ": -x verifies retrieved values: it needs -r or -b\n");
		return KVT_EXIT_USAGE;
	}
	if (o->offset && o->offset >= o->value_size) {
		fprintf(stderr, PROG ": -o %u is not inside a %u-byte value\n", o->offset,
			o->value_size);
		return KVT_EXIT_USAGE;
	}
	if (o->offset && o->ssd_type == LBA_TYPE_SSD) {
		fprintf(stderr, PROG ": -o: a value offset applies to KV SSDs, not with -m lba\n");
		return KVT_EXIT_USAGE;
	}
	if (o->json_config && (o->ndev || o->ncore || o->nsync || o->ncq)) {
		fprintf(stderr, PROG ": -j names the devices and their masks: -d -c -s -q go without "
			"it\n");
		return KVT_EXIT_USAGE;
	}
	int lists[4] = { o->ncore, o->nsync, o->ncq, o->nqd };
	for (int k = 0; k < 4; k++)
		if (lists[k] > (o->ndev ? o->ndev : 1)) {
			fprintf(stderr, PROG ": -%c has more values than there are devices (-d)\n",
				"csqa"[k]);
			return KVT_EXIT_USAGE;
		}
	if (o->dist == 4 && !o->key_range)
		o->key_range = o->num_keys;
	return -1;
}
