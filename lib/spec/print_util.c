/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared printer helpers: the text/JSON output abstraction and NVMe field formatting. */
#include "print_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void spec_json_write(FILE *f, json_object *obj)
{
	fputs(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE),
	      f);
	fputc('\n', f);
}

void out_begin(struct spec_out *o, FILE *f, enum unvme_fmt fmt, int width, const char *title)
{
	o->f = f;
	o->fmt = fmt;
	o->width = width;
	o->indent = 0;
	o->root = NULL;
	o->obj = NULL;
	if (fmt == UNVME_FMT_JSON) {
		o->root = json_object_new_object();
		o->obj = o->root;
	} else if (title) {
		fprintf(f, "%s\n", title);
	}
}

void out_end(struct spec_out *o)
{
	if (o->root) {
		spec_json_write(o->f, o->root);
		json_object_put(o->root);
		o->root = NULL;
		o->obj = NULL;
	}
}

bool out_is_json(const struct spec_out *o)
{
	return o->fmt == UNVME_FMT_JSON;
}

/* Text: the "name : " part of a line, nested names indented but their colons aligned. */
static void text_name(struct spec_out *o, const char *name)
{
	int pad = o->width - o->indent;
	fprintf(o->f, "%*s%-*s : ", o->indent, "", pad > 0 ? pad : 0, name);
}

static void json_add(struct spec_out *o, const char *name, json_object *v)
{
	json_object_object_add(o->obj, name, v);
}

void out_dec(struct spec_out *o, const char *name, uint64_t v)
{
	if (out_is_json(o)) {
		json_add(o, name, json_object_new_uint64(v));
		return;
	}
	text_name(o, name);
	fprintf(o->f, "%" PRIu64 "\n", v);
}

void out_hex(struct spec_out *o, const char *name, uint64_t v)
{
	if (out_is_json(o)) {
		json_add(o, name, json_object_new_uint64(v));
		return;
	}
	text_name(o, name);
	fprintf(o->f, "%#" PRIx64 "\n", v);
}

void out_num(struct spec_out *o, const char *name, uint64_t v, const char *text_fmt, ...)
{
	if (out_is_json(o)) {
		json_add(o, name, json_object_new_uint64(v));
		return;
	}
	va_list ap;
	text_name(o, name);
	va_start(ap, text_fmt);
	vfprintf(o->f, text_fmt, ap);
	va_end(ap);
	fputc('\n', o->f);
}

void out_pages_limit(struct spec_out *o, const char *name, uint8_t v, const char *zero_text)
{
	uint64_t bytes = nvme_pow2_pages(4096, v);
	if (!v)
		out_num(o, name, v, "0 (%s)", zero_text);
	else if (bytes != UINT64_MAX)
		out_num(o, name, v, "%u (%" PRIu64 " KiB with 4 KiB pages)", v, bytes >> 10);
	else
		out_num(o, name, v, "%u (2^%u pages: beyond any transfer)", v, v);
}

void out_str(struct spec_out *o, const char *name, const char *s)
{
	if (out_is_json(o)) {
		json_add(o, name, json_object_new_string(s));
		return;
	}
	text_name(o, name);
	fprintf(o->f, "%s\n", s);
}

void out_fixed_str(struct spec_out *o, const char *name, const char *field, size_t width)
{
	char *buf = malloc(width + 1);
	if (!buf)
		return; /* out of memory: the field is left out rather than the process aborted */
	out_str(o, name, spec_trim_fixed(buf, field, width));
	free(buf);
}

void out_u128(struct spec_out *o, const char *name, const void *le128, const char *text_suffix)
{
	char dec[SPEC_U128_DEC_LEN];
	spec_u128_dec(dec, le128);
	if (out_is_json(o)) {
		uint64_t lo;
		if (spec_u128_fits_u64(le128, &lo))
			json_add(o, name, json_object_new_uint64(lo));
		else
			json_add(o, name, json_object_new_string(dec));
		return;
	}
	text_name(o, name);
	fprintf(o->f, "%s%s%s\n", dec, text_suffix ? " " : "", text_suffix ? text_suffix : "");
}

void out_hex_bytes(struct spec_out *o, const char *name, const void *bytes, size_t len)
{
	char *hex = malloc(2 * len + 1);
	if (!hex)
		return; /* out of memory: the field is left out rather than the process aborted */
	out_str(o, name, spec_hex_str(hex, bytes, len));
	free(hex);
}

void out_text(struct spec_out *o, const char *fmt, ...)
{
	if (out_is_json(o))
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

struct out_scope out_enter(struct spec_out *o, const char *name)
{
	struct out_scope saved = { o->obj, o->indent };
	if (out_is_json(o)) {
		json_object *child = json_object_new_object();
		json_add(o, name, child);
		o->obj = child;
	} else {
		o->indent += 2;
	}
	return saved;
}

struct out_scope out_enter_element(struct spec_out *o, json_object *array)
{
	struct out_scope saved = { o->obj, o->indent };
	if (out_is_json(o)) {
		json_object *child = json_object_new_object();
		json_object_array_add(array, child);
		o->obj = child;
	}
	return saved;
}

void out_leave(struct spec_out *o, struct out_scope scope)
{
	o->obj = scope.obj;
	o->indent = scope.indent;
}

json_object *out_array(struct spec_out *o, const char *name)
{
	if (!out_is_json(o))
		return NULL;
	json_object *array = json_object_new_array();
	json_add(o, name, array);
	return array;
}

char *spec_trim_fixed(char *dst, const char *field, size_t width)
{
	size_t n = 0;
	while (n < width && field[n] != '\0') {
		unsigned char c = (unsigned char)field[n];
		/* Bytes outside printable ASCII would make invalid JSON strings and garble
		 * terminals; the fields are ASCII by definition. */
		dst[n] = (c >= 0x20 && c < 0x7f) ? (char)c : '.';
		n++;
	}
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
	return dst;
}

static unsigned __int128 u128_load(const void *le128)
{
	uint64_t half[2];
	memcpy(half, le128, sizeof(half)); /* little-endian host: low half first */
	return ((unsigned __int128)half[1] << 64) | half[0];
}

char *spec_u128_dec(char *buf, const void *le128)
{
	unsigned __int128 v = u128_load(le128);
	char digits[SPEC_U128_DEC_LEN];
	size_t n = 0;
	do {
		digits[n++] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = digits[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

long double spec_u128_ld(const void *le128)
{
	return (long double)u128_load(le128);
}

bool spec_u128_fits_u64(const void *le128, uint64_t *lo)
{
	unsigned __int128 v = u128_load(le128);
	*lo = (uint64_t)v;
	return (v >> 64) == 0;
}

char *spec_si_bytes(char *buf, size_t len, long double bytes)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB" };
	size_t u = 0;
	while (bytes >= 1000.0L && u + 1 < SPEC_ARRAY_SIZE(units)) {
		bytes /= 1000.0L;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0Lf %s", bytes, units[u]);
	else
		snprintf(buf, len, "%.2Lf %s", bytes, units[u]);
	return buf;
}

char *spec_bit_names(char *buf, size_t len, uint64_t v, const struct spec_bit_name *names,
		     size_t n_names)
{
	size_t used = 0;
	buf[0] = '\0';
	if (!v) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(v & (1ull << bit)))
			continue;
		const char *name = NULL;
		for (size_t i = 0; i < n_names; i++)
			if (names[i].bit == bit)
				name = names[i].name;
		char unnamed[16];
		if (!name) {
			snprintf(unnamed, sizeof(unnamed), "bit %u", bit);
			name = unnamed;
		}
		int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
		if (w < 0 || (size_t)w >= len - used)
			break; /* truncated: the buffer holds what fits */
		used += (size_t)w;
	}
	return buf;
}

void spec_hex_dump(FILE *f, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	for (size_t off = 0; off < len; off += 16) {
		size_t n = len - off < 16 ? len - off : 16;
		fprintf(f, "%04zx:", off);
		for (size_t i = 0; i < 16; i++) {
			if (i < n)
				fprintf(f, " %02x", p[off + i]);
			else
				fputs("   ", f);
		}
		fputs("  \"", f);
		for (size_t i = 0; i < n; i++)
			fputc(p[off + i] >= 0x20 && p[off + i] < 0x7f ? p[off + i] : '.', f);
		fputs("\"\n", f);
	}
}

char *spec_hex_str(char *dst, const void *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = bytes;
	for (size_t i = 0; i < len; i++) {
		dst[2 * i] = digits[p[i] >> 4];
		dst[2 * i + 1] = digits[p[i] & 0xf];
	}
	dst[2 * len] = '\0';
	return dst;
}

bool spec_all_zero(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}
