/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every printer shares: one output abstraction that writes either nvme-cli style text
 * lines ("name      : value") or fields of a json-c object, so each printer lists a structure's
 * fields once for both formats; plus the helpers for NVMe's awkward field types (space-padded
 * fixed-width strings, 128-bit counters, byte arrays shown as hex).
 */
#ifndef UNVME_LIB_SPEC_PRINT_UTIL_H
#define UNVME_LIB_SPEC_PRINT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include <unvme/print.h>

/* One printer's output in progress. */
struct spec_out {
	FILE *f;
	enum unvme_fmt fmt;
	int width;         /* text: field names are padded to this many columns */
	int indent;        /* text: columns before nested field names */
	json_object *root; /* json: the document, written by out_end() */
	json_object *obj;  /* json: the object fields currently go to */
};

/* Where out_enter*() came from, for out_leave(). */
struct out_scope {
	json_object *obj;
	int indent;
};

/* Starts a document. Text: prints title on its own line when not NULL. */
void out_begin(struct spec_out *o, FILE *f, enum unvme_fmt fmt, int width, const char *title);
/* Ends it. JSON: writes the document (pretty, followed by a newline) and frees it. */
void out_end(struct spec_out *o);
bool out_is_json(const struct spec_out *o);

/* Fields. JSON gets the value as a number (or string); text gets "name : " and the value. */
void out_dec(struct spec_out *o, const char *name, uint64_t v);
void out_hex(struct spec_out *o, const char *name, uint64_t v);
/* A number whose text form needs decoding: JSON gets v, text gets the formatted line. */
void out_num(struct spec_out *o, const char *name, uint64_t v, const char *text_fmt, ...)
	__attribute__((format(printf, 4, 5)));
void out_str(struct spec_out *o, const char *name, const char *s);
/* A size limit of 2^v pages of 4 KiB (MDTS, ZASL, the NVM set's limits): v is the device's
 * byte, up to 255, so the size is computed without a shift that could overflow. zero_text:
 * what 0 means. */
void out_pages_limit(struct spec_out *o, const char *name, uint8_t v, const char *zero_text);
/* A space-padded fixed-width ASCII field (serial number, model, firmware revision, NQN). */
void out_fixed_str(struct spec_out *o, const char *name, const char *field, size_t width);
/* A 128-bit little-endian counter: a JSON number when it fits in 64 bits, else a decimal
 * string; text_suffix (may be NULL) follows the decimal value in text. */
void out_u128(struct spec_out *o, const char *name, const void *le128, const char *text_suffix);
/* Bytes shown as one run of hex digits, in wire order (identifiers, GUIDs). */
void out_hex_bytes(struct spec_out *o, const char *name, const void *bytes, size_t len);
/* Text only: a line outside the "name : value" scheme (headings, separators). */
void out_text(struct spec_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Nesting. JSON: a new object under name (or appended to array); text: out_enter indents the
 * following field names, out_enter_element leaves them where they are. */
struct out_scope out_enter(struct spec_out *o, const char *name);
struct out_scope out_enter_element(struct spec_out *o, json_object *array);
void out_leave(struct spec_out *o, struct out_scope scope);
/* JSON: a new array under name, returned for out_enter_element(); text: NULL. */
json_object *out_array(struct spec_out *o, const char *name);

/* Writes a json-c object as one pretty document and a newline. Does not free it. */
void spec_json_write(FILE *f, json_object *obj);

/* Copies a space-padded fixed-width field into dst (at least width + 1 bytes), stopping at a
 * NUL, replacing non-printable bytes with '.', dropping trailing spaces. Returns dst. */
char *spec_trim_fixed(char *dst, const char *field, size_t width);

/* 128-bit little-endian value as decimal; buf holds at least SPEC_U128_DEC_LEN bytes. */
#define SPEC_U128_DEC_LEN 40
char *spec_u128_dec(char *buf, const void *le128);
/* The value as a double, for scaled human-readable forms. */
long double spec_u128_ld(const void *le128);
/* True when the 128-bit value fits in 64 bits; *lo receives the low half. */
bool spec_u128_fits_u64(const void *le128, uint64_t *lo);

/* A byte count in SI units ("631.81 MB"). */
char *spec_si_bytes(char *buf, size_t len, long double bytes);

/* Names of the set bits of v, comma separated ("Format NVM, Firmware"); bits without a name
 * show as "bit N". "none" when v is 0. */
struct spec_bit_name {
	unsigned bit;
	const char *name;
};
char *spec_bit_names(char *buf, size_t len, uint64_t v, const struct spec_bit_name *names,
		     size_t n_names);

/* Text hex dump: offset, 16 bytes in hex, their printable ASCII. */
void spec_hex_dump(FILE *f, const void *buf, size_t len);
/* Bytes as a lower-case hex string; dst holds 2 * len + 1 bytes. */
char *spec_hex_str(char *dst, const void *bytes, size_t len);
bool spec_all_zero(const void *buf, size_t len);

/* Kelvin (as NVMe reports temperatures) to degrees Celsius. */
static inline int spec_kelvin_to_celsius(unsigned k)
{
	return (int)k - 273;
}

#define SPEC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* print_nvmecli.c: nvme-cli's JSON keys where ours differ, added (JSON only) to a document. */
void spec_nvmecli_id_ctrl(struct spec_out *o, const struct nvme_id_ctrl *id);
void spec_nvmecli_id_ns(struct spec_out *o, const struct nvme_id_ns *id);
void spec_nvmecli_smart_log(struct spec_out *o, const struct nvme_smart_log *log);
void spec_nvmecli_error_entry(struct spec_out *o, const struct nvme_error_log *e);

#endif
