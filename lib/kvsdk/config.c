/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON configuration (docs/kv-sdk.md, "Configuration") and the kv_sdk struct form. Unlike
 * the original, a file that cannot be read or parsed, a value of the wrong type or range, or an
 * impossible device mask is an error whose one-line message names the file, the key and the
 * reason; unknown keys are warned about (stderr and the log) and otherwise ignored.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/env.h"
#include "kv_errmsg.h"
#include "kv_internal.h"

/* The calling thread's last failure reason: configuration errors are composed here, and every
 * error line (kv_err) is recorded here too, whatever the log level; kv_errmsg() reads it. */
static _Thread_local char cfg_err[2048];

const char *kv_config_error(void)
{
	return cfg_err;
}

KV_API const char *kv_errmsg(void)
{
	return cfg_err;
}

void kv_errmsg_clear(void)
{
	cfg_err[0] = '\0';
}

void kv_errmsg_record(const char *msg)
{
	if (msg != cfg_err)
		snprintf(cfg_err, sizeof(cfg_err), "%s", msg);
}

void kv_config_set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cfg_err, sizeof(cfg_err), fmt, ap);
	va_end(ap);
}

void kv_config_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (unvme_log_on())
		fprintf(stderr, "kvsdk: warning: %s\n", msg);
	kv_log(1, "warning: %s", msg);
}

/* The completion threads' keys of the last file loaded by kv_sdk_load_option: kv_sdk has no
 * field for them. */
static _Atomic uint32_t last_idle_sleep_us = KV_DEFAULT_IDLE_SLEEP_US;
static _Atomic uint32_t last_coalesce_us = KV_DEFAULT_COALESCE_US;
static atomic_bool last_zero_copy, last_strict_placement;

void kv_config_defaults(struct kv_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	kv_sdk *k = &cfg->sdk;
	k->use_cache = false;
	k->cache_algorithm = CACHE_ALGORITHM_RADIX;
	k->cache_reclaim_policy = CACHE_RECLAIM_LRU;
	k->slab_size = (uint64_t)KV_DEFAULT_SLAB_MB << 20;
	k->slab_alloc_policy = SLAB_MM_ALLOC_HUGE;
	k->ssd_type = KV_TYPE_SSD;
	k->submit_retry_interval = KV_DEFAULT_RETRY_US;
	k->log_level = 0;
	snprintf(k->log_file, sizeof(k->log_file), "/tmp/kvsdk.log");
	pthread_mutex_init(&k->cb_cnt_mutex, NULL);
	cfg->cq_idle_sleep_max_us = KV_DEFAULT_IDLE_SLEEP_US;
	cfg->cq_coalesce_max_us = KV_DEFAULT_COALESCE_US;
	snprintf(cfg->source, sizeof(cfg->source), "kv_sdk struct");
}

void kv_config_free(struct kv_config *cfg)
{
	for (int i = 0; i < NR_MAX_SSD; i++) {
		free(cfg->devid[i]);
		cfg->devid[i] = NULL;
	}
}

/* ---- device ids longer than the struct's 31 characters ---- */

/* kv_sdk_load_option must put every id into a 32-byte field. A long id goes in as a token:
 * its first 22 characters, '~', and 8 hex digits of a hash of the whole id, so two ids that
 * differ anywhere (even after character 31) get different tokens, and kv_sdk_init maps the
 * token back to the whole id by exact match. */
#define TOKEN_PREFIX (DEV_ID_LEN - 1 - 9)

static pthread_mutex_t devid_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char token[DEV_ID_LEN];
	char *full;
} long_ids[NR_MAX_SSD * 4];
static int nlong_ids, next_long_id;

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

void kv_config_remember_devid(const char *full, char token[DEV_ID_LEN])
{
	if (strlen(full) < DEV_ID_LEN) {
		snprintf(token, DEV_ID_LEN, "%s", full);
		return;
	}
	pthread_mutex_lock(&devid_lock);
	/* a hash collision of two different ids is resolved by perturbing the hash */
	for (uint32_t salt = 0;; salt++) {
		snprintf(token, DEV_ID_LEN, "%.*s~%08x", TOKEN_PREFIX, full, fnv1a(full) + salt);
		int i;
		for (i = 0; i < nlong_ids; i++)
			if (!strcmp(long_ids[i].token, token))
				break;
		if (i == nlong_ids)
			break; /* a new token */
		if (!strcmp(long_ids[i].full, full)) {
			pthread_mutex_unlock(&devid_lock);
			return; /* known already */
		}
	}
	int slot = nlong_ids < (int)(sizeof(long_ids) / sizeof(long_ids[0])) ? nlong_ids++
									    : next_long_id;
	next_long_id = (slot + 1) % (int)(sizeof(long_ids) / sizeof(long_ids[0]));
	free(long_ids[slot].full);
	long_ids[slot].full = strdup(full);
	snprintf(long_ids[slot].token, DEV_ID_LEN, "%s", long_ids[slot].full ? token : "");
	pthread_mutex_unlock(&devid_lock);
}

const char *kv_config_full_devid(const char *token)
{
	const char *found = NULL;
	pthread_mutex_lock(&devid_lock);
	for (int i = 0; i < nlong_ids && !found; i++)
		if (long_ids[i].full && !strcmp(long_ids[i].token, token))
			found = long_ids[i].full;
	pthread_mutex_unlock(&devid_lock);
	return found;
}

/* ---- value parsing ---- */

static int set_devid(struct kv_config *cfg, int i, const char *id)
{
	free(cfg->devid[i]);
	cfg->devid[i] = strdup(id);
	if (!cfg->devid[i]) {
		kv_config_set_error("%s: out of memory", cfg->source);
		return -1;
	}
	kv_config_remember_devid(id, cfg->sdk.dev_id[i]);
	return 0;
}

int kv_parse_hex_mask(const char *text, uint64_t *out)
{
	const char *p = text;
	while (*p == ' ')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!*p || strlen(p) > 16)
		return -1;
	uint64_t v = 0;
	for (; *p; p++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* A mask written as a JSON number is read as hexadecimal digits (10 means 0x10), as the
 * original did; strings take the same digits with or without 0x. */
static int get_mask(struct kv_config *cfg, json_object *v, const char *key, uint64_t *out)
{
	const char *text = NULL;
	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
		text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	else if (json_object_is_type(v, json_type_string))
		text = json_object_get_string(v);
	if (!text || kv_parse_hex_mask(text, out)) {
		kv_config_set_error("%s: key '%s': %s is not a hexadecimal CPU mask (write 10 or "
				    "\"0x10\" for CPU 4)", cfg->source, key,
				    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		return -1;
	}
	return 0;
}

static int get_int(struct kv_config *cfg, json_object *v, const char *key, long long min,
		   long long max, long long *out)
{
	long long x;
	char *end = NULL;
	if (json_object_is_type(v, json_type_int)) {
		x = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		const char *t = json_object_get_string(v);
		errno = 0;
		x = strtoll(t, &end, 10);
		if (!*t || *end || errno) {
			kv_config_set_error("%s: key '%s': \"%s\" is not an integer", cfg->source, key, t);
			return -1;
		}
	} else {
		kv_config_set_error("%s: key '%s': %s is not an integer", cfg->source, key,
				    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		return -1;
	}
	if (x < min || x > max) {
		kv_config_set_error("%s: key '%s': %lld is out of range %lld..%lld", cfg->source, key, x,
				    min, max);
		return -1;
	}
	*out = x;
	return 0;
}

/* One of a fixed set of words; returns its index or -1. */
static int get_word(struct kv_config *cfg, json_object *v, const char *key, const char *const *words,
		    int n)
{
	if (json_object_is_type(v, json_type_string)) {
		const char *t = json_object_get_string(v);
		for (int i = 0; i < n; i++)
			if (!strcasecmp(t, words[i]))
				return i;
	}
	char list[256] = "";
	for (int i = 0; i < n; i++) {
		strncat(list, i ? ", \"" : "\"", sizeof(list) - strlen(list) - 1);
		strncat(list, words[i], sizeof(list) - strlen(list) - 1);
		strncat(list, "\"", sizeof(list) - strlen(list) - 1);
	}
	kv_config_set_error("%s: key '%s': %s is not one of %s", cfg->source, key,
			    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), list);
	return -1;
}

static int parse_device(struct kv_config *cfg, json_object *obj, int i, const char *where)
{
	char key[128];
	kv_nvme_io_options *o = &cfg->sdk.dd_options[i];
	if (!json_object_is_type(obj, json_type_object)) {
		kv_config_set_error("%s: key '%s' is not an object", cfg->source, where);
		return -1;
	}
	bool have_id = false;
	json_object_object_foreach(obj, k, v) {
		snprintf(key, sizeof(key), "%s.%s", where, k);
		long long x;
		if (!strcmp(k, "dev_id")) {
			const char *id = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
			if (!id || !*id) {
				kv_config_set_error("%s: key '%s': must be a non-empty string (a PCI address, "
						    "an emu:// URI or an alias)", cfg->source, key);
				return -1;
			}
			if (set_devid(cfg, i, id))
				return -1;
			have_id = true;
		} else if (!strcmp(k, "core_mask")) {
			if (get_mask(cfg, v, key, &o->core_mask))
				return -1;
		} else if (!strcmp(k, "sync_mask")) {
			if (get_mask(cfg, v, key, &o->sync_mask))
				return -1;
		} else if (!strcmp(k, "cq_thread_mask")) {
			if (get_mask(cfg, v, key, &o->cq_thread_mask))
				return -1;
		} else if (!strcmp(k, "queue_depth")) {
			if (get_int(cfg, v, key, 2, KV_MAX_QUEUE_DEPTH, &x))
				return -1;
			o->queue_depth = (uint32_t)x;
		} else {
			kv_config_warn("%s: unknown key '%s' ignored", cfg->source, key);
		}
	}
	if (!have_id) {
		kv_config_set_error("%s: key '%s.dev_id' is missing", cfg->source, where);
		return -1;
	}
	return 0;
}

static int parse_devices(struct kv_config *cfg, json_object *v)
{
	char where[64];
	if (json_object_is_type(v, json_type_object)) {
		cfg->sdk.nr_ssd = 1;
		return parse_device(cfg, v, 0, "device_description");
	}
	if (!json_object_is_type(v, json_type_array)) {
		kv_config_set_error("%s: key 'device_description' must be an object or an array of "
				    "objects", cfg->source);
		return -1;
	}
	size_t n = json_object_array_length(v);
	if (n > NR_MAX_SSD) {
		kv_config_set_error("%s: key 'device_description': %zu devices, at most %d", cfg->source,
				    n, NR_MAX_SSD);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "device_description[%zu]", i);
		if (parse_device(cfg, json_object_array_get_idx(v, i), (int)i, where))
			return -1;
	}
	cfg->sdk.nr_ssd = (int)n;
	return 0;
}

static int parse_root(struct kv_config *cfg, json_object *root)
{
	static const char *const onoff[] = { "off", "on" };
	static const char *const radix[] = { "radix" };
	static const char *const lru[] = { "lru" };
	static const char *const policies[] = { "posix", "huge" };
	static const char *const types[] = { "kv", "lba" };
	kv_sdk *k = &cfg->sdk;
	bool have_devices = false;
	json_object_object_foreach(root, key, v) {
		long long x;
		int w;
		if (!strcmp(key, "cache")) {
			if (json_object_is_type(v, json_type_boolean))
				k->use_cache = json_object_get_boolean(v);
			else if ((w = get_word(cfg, v, key, onoff, 2)) < 0)
				return -1;
			else
				k->use_cache = w == 1;
		} else if (!strcmp(key, "cache_algorithm")) {
			if (get_word(cfg, v, key, radix, 1) < 0)
				return -1;
			k->cache_algorithm = CACHE_ALGORITHM_RADIX;
		} else if (!strcmp(key, "cache_reclaim_policy")) {
			if (get_word(cfg, v, key, lru, 1) < 0)
				return -1;
			k->cache_reclaim_policy = CACHE_RECLAIM_LRU;
		} else if (!strcmp(key, "slab_size")) {
			if (get_int(cfg, v, key, 1, 1 << 20, &x))
				return -1;
			k->slab_size = (uint64_t)x << 20;
		} else if (!strcmp(key, "app_hugemem_size")) {
			if (get_int(cfg, v, key, 0, 1 << 20, &x))
				return -1;
			k->app_hugemem_size = (uint64_t)x << 20;
		} else if (!strcmp(key, "slab_alloc_policy")) {
			if ((w = get_word(cfg, v, key, policies, 2)) < 0)
				return -1;
			k->slab_alloc_policy = w ? SLAB_MM_ALLOC_HUGE : SLAB_MM_ALLOC_POSIX;
		} else if (!strcmp(key, "ssd_type")) {
			if ((w = get_word(cfg, v, key, types, 2)) < 0)
				return -1;
			k->ssd_type = w ? LBA_TYPE_SSD : KV_TYPE_SSD;
		} else if (!strcmp(key, "submit_retry_interval")) {
			if (get_int(cfg, v, key, -1, KV_MAX_RETRY_US, &x))
				return -1;
			k->submit_retry_interval = (int)x;
		} else if (!strcmp(key, "log_level")) {
			if (get_int(cfg, v, key, 0, 3, &x))
				return -1;
			k->log_level = (int)x;
		} else if (!strcmp(key, "log_file")) {
			const char *p = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
			if (!p || !*p || strlen(p) >= sizeof(k->log_file)) {
				kv_config_set_error("%s: key 'log_file': must be a path of 1..%zu characters",
						    cfg->source, sizeof(k->log_file) - 1);
				return -1;
			}
			snprintf(k->log_file, sizeof(k->log_file), "%s", p);
		} else if (!strcmp(key, "cq_idle_sleep_max_us")) {
			if (get_int(cfg, v, key, 1, KV_MAX_IDLE_SLEEP_US, &x))
				return -1;
			cfg->cq_idle_sleep_max_us = (uint32_t)x;
		} else if (!strcmp(key, "cq_coalesce_max_us")) {
			if (get_int(cfg, v, key, 0, KV_MAX_COALESCE_US, &x))
				return -1;
			cfg->cq_coalesce_max_us = (uint32_t)x;
		} else if (!strcmp(key, "zero_copy") || !strcmp(key, "strict_placement")) {
			bool *flag = key[0] == 'z' ? &cfg->zero_copy : &cfg->strict_placement;
			if (json_object_is_type(v, json_type_boolean))
				*flag = json_object_get_boolean(v);
			else if ((w = get_word(cfg, v, key, onoff, 2)) < 0)
				return -1;
			else
				*flag = w == 1;
		} else if (!strcmp(key, "device_description")) {
			if (parse_devices(cfg, v))
				return -1;
			have_devices = true;
		} else {
			kv_config_warn("%s: unknown key '%s' ignored", cfg->source, key);
		}
	}
	if (!have_devices || k->nr_ssd == 0) {
		kv_config_set_error("%s: key 'device_description': no device configured", cfg->source);
		return -1;
	}
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		char *nb = realloc(buf, cap * 2 + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	/* keep fread's reason (EISDIR for a directory), not a bare EIO */
	int err = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (!buf || err) {
		free(buf);
		errno = err ? err : ENOMEM;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

int kv_config_load_file(const char *path, struct kv_config *cfg)
{
	kv_config_defaults(cfg);
	if (!path || !*path) {
		kv_config_set_error("no configuration file given (NULL or empty path)");
		return -1;
	}
	snprintf(cfg->source, sizeof(cfg->source), "config file '%s'", path);
	size_t len = 0;
	char *text = read_all(path, &len);
	if (!text) {
		kv_config_set_error("%s: cannot be read: %s", cfg->source, strerror(errno));
		return -1;
	}
	struct json_tokener *tok = json_tokener_new();
	if (!tok) {
		free(text);
		kv_config_set_error("%s: out of memory", cfg->source);
		return -1;
	}
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success) {
		size_t off = json_tokener_get_parse_end(tok);
		int line = 1, col = 1;
		for (size_t i = 0; i < off && i < len; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		kv_config_set_error("%s: not valid JSON at line %d column %d: %s", cfg->source, line, col,
				    jerr == json_tokener_continue ? "unexpected end of file"
								  : json_tokener_error_desc(jerr));
		json_object_put(root);
		json_tokener_free(tok);
		free(text);
		return -1;
	}
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (end < len && (text[end] == ' ' || text[end] == '\t' || text[end] == '\n' ||
			     text[end] == '\r'))
		end++;
	if (end < len) {
		int line = 1;
		for (size_t i = 0; i < end; i++)
			line += text[i] == '\n';
		kv_config_set_error("%s: not valid JSON at line %d: text after the top-level object",
				    cfg->source, line);
		json_object_put(root);
		free(text);
		return -1;
	}
	free(text);
	int rc = 0;
	if (!json_object_is_type(root, json_type_object)) {
		kv_config_set_error("%s: the top level is not a JSON object", cfg->source);
		rc = -1;
	} else {
		rc = parse_root(cfg, root);
	}
	json_object_put(root);
	if (rc)
		kv_config_free(cfg);
	return rc;
}

/*
 * The struct form, read as the original read it: the devices are the non-empty dev_id entries
 * from the first on (nr_ssd is an output), and every field left zero gets its default
 * (slab_alloc_policy 0 is "huge", submit_retry_interval 0 is 1 us, slab_size 0 is 44 MB,
 * core_mask 0 the automatic masks, queue_depth 0 is 32, log_file "" /tmp/kvsdk.log). A field
 * that is set to something that does not exist is an error.
 */
int kv_config_from_sdk(const kv_sdk *sdk, struct kv_config *cfg)
{
	kv_config_defaults(cfg);
	cfg->sdk = *sdk;
	cfg->cq_idle_sleep_max_us = atomic_load(&last_idle_sleep_us);
	cfg->cq_coalesce_max_us = atomic_load(&last_coalesce_us);
	cfg->zero_copy = atomic_load(&last_zero_copy);
	cfg->strict_placement = atomic_load(&last_strict_placement);
	kv_sdk *k = &cfg->sdk;
	const char *src = cfg->source;
	int n = 0;
	while (n < NR_MAX_SSD && k->dev_id[n][0])
		n++;
	if (!n) {
		kv_config_set_error("%s: dev_id[0] is empty: name at least one device (a PCI address, "
				    "an emu:// URI or an alias)", src);
		return -1;
	}
	if (k->nr_ssd && k->nr_ssd != n)
		kv_log(2, "%s: nr_ssd %d replaced by the %d dev_id entries set", src, k->nr_ssd, n);
	k->nr_ssd = n;
	if (k->ssd_type != KV_TYPE_SSD && k->ssd_type != LBA_TYPE_SSD) {
		kv_config_set_error("%s: ssd_type %d is neither KV_TYPE_SSD nor LBA_TYPE_SSD", src,
				    k->ssd_type);
		return -1;
	}
	if (!k->slab_alloc_policy)
		k->slab_alloc_policy = SLAB_MM_ALLOC_HUGE;
	if (k->slab_alloc_policy != SLAB_MM_ALLOC_POSIX && k->slab_alloc_policy != SLAB_MM_ALLOC_HUGE) {
		kv_config_set_error("%s: slab_alloc_policy 0x%x is neither SLAB_MM_ALLOC_POSIX nor "
				    "SLAB_MM_ALLOC_HUGE (0: the default, huge)", src,
				    k->slab_alloc_policy);
		return -1;
	}
	if (!k->submit_retry_interval)
		k->submit_retry_interval = KV_DEFAULT_RETRY_US;
	if (k->submit_retry_interval < -1 || k->submit_retry_interval > KV_MAX_RETRY_US) {
		kv_config_set_error("%s: submit_retry_interval %d is not -1..%d", src,
				    k->submit_retry_interval, KV_MAX_RETRY_US);
		return -1;
	}
	if (k->log_level < 0 || k->log_level > 3) {
		kv_config_set_error("%s: log_level %d is not 0..3", src, k->log_level);
		return -1;
	}
	if (k->cache_algorithm != CACHE_ALGORITHM_RADIX || k->cache_reclaim_policy != CACHE_RECLAIM_LRU) {
		kv_config_set_error("%s: cache_algorithm %d / cache_reclaim_policy %d: only RADIX and "
				    "LRU (0) exist", src, k->cache_algorithm, k->cache_reclaim_policy);
		return -1;
	}
	if (!memchr(k->log_file, 0, sizeof(k->log_file))) {
		kv_config_set_error("%s: log_file is not NUL-terminated", src);
		return -1;
	}
	if (!k->log_file[0])
		snprintf(k->log_file, sizeof(k->log_file), "/tmp/kvsdk.log");
	if (!k->slab_size)
		k->slab_size = (uint64_t)KV_DEFAULT_SLAB_MB << 20;
	for (int i = 0; i < n; i++) {
		char id[DEV_ID_LEN];
		memcpy(id, k->dev_id[i], DEV_ID_LEN);
		id[DEV_ID_LEN - 1] = 0;
		/* a long id put into the struct as a token by kv_sdk_load_option */
		const char *full = kv_config_full_devid(id);
		free(cfg->devid[i]);
		cfg->devid[i] = strdup(full ? full : id);
		if (!cfg->devid[i]) {
			kv_config_set_error("%s: out of memory", src);
			return -1;
		}
		kv_nvme_io_options *o = &k->dd_options[i];
		if (o->queue_depth && (o->queue_depth < 2 || o->queue_depth > KV_MAX_QUEUE_DEPTH)) {
			kv_config_set_error("%s: dd_options[%d].queue_depth %u is not 2..%u (the driver's "
					    "limit; 0 means %u)", src, i, o->queue_depth,
					    KV_MAX_QUEUE_DEPTH, KV_DEFAULT_QUEUE_DEPTH);
			return -1;
		}
	}
	/* entries after the devices are not devices: no stale masks or handles there */
	for (int i = n; i < NR_MAX_SSD; i++) {
		memset(&k->dd_options[i], 0, sizeof(k->dd_options[i]));
		k->dev_handle[i] = 0;
	}
	return 0;
}

KV_API int kv_sdk_load_option(kv_sdk *sdk_opt, char *log_path)
{
	if (!sdk_opt) {
		kv_config_set_error("kv_sdk_load_option: sdk_opt is NULL");
		kv_err("%s", kv_config_error());
		return -1;
	}
	struct kv_config cfg;
	kv_errmsg_clear();
	if (kv_config_load_file(log_path, &cfg)) {
		if (unvme_errors_on())
			fprintf(stderr, "kvsdk: %s\n", kv_config_error());
		kv_err("%s", kv_config_error());
		return -1;
	}
	/* the caller's mutex stays as it is: it may be in use */
	pthread_mutex_t keep;
	memcpy(&keep, &sdk_opt->cb_cnt_mutex, sizeof(keep));
	*sdk_opt = cfg.sdk;
	memcpy(&sdk_opt->cb_cnt_mutex, &keep, sizeof(keep));
	atomic_store(&last_idle_sleep_us, cfg.cq_idle_sleep_max_us);
	atomic_store(&last_coalesce_us, cfg.cq_coalesce_max_us);
	atomic_store(&last_zero_copy, cfg.zero_copy);
	atomic_store(&last_strict_placement, cfg.strict_placement);
	kv_config_free(&cfg);
	return 0;
}
