/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers for the printer tests: run a printer into memory, then look at the text or parse the
 * JSON back. The JSON parse insists on exactly one document, as the printers promise.
 */
#ifndef UNVME_TEST_PRINT_CAPTURE_H
#define UNVME_TEST_PRINT_CAPTURE_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

/* Returns the stream the printer writes to. */
static inline FILE *capture_begin(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	return c->f;
}

/* Closes the stream; the text stays in c->buf until capture_free(). */
static inline const char *capture_end(struct capture *c)
{
	fclose(c->f);
	c->f = NULL;
	return c->buf;
}

static inline void capture_free(struct capture *c)
{
	free(c->buf);
	c->buf = NULL;
}

/* Parses the captured text as a single JSON document: NULL if it is not valid JSON or if
 * anything but white space follows the document. */
static inline json_object *capture_json(const struct capture *c)
{
	json_tokener *tok = json_tokener_new();
	json_object *obj = json_tokener_parse_ex(tok, c->buf, (int)c->len);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!obj)
		return NULL;
	for (size_t i = end; i < c->len; i++) {
		if (!isspace((unsigned char)c->buf[i])) {
			json_object_put(obj);
			return NULL;
		}
	}
	return obj;
}

/* Member lookups that tolerate a missing key (NULL) so a test can CHECK instead of crash. */
static inline json_object *jget(json_object *obj, const char *key)
{
	json_object *v = NULL;
	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

static inline json_object *jidx(json_object *array, size_t i)
{
	if (!array || !json_object_is_type(array, json_type_array) || i >= json_object_array_length(array))
		return NULL;
	return json_object_array_get_idx(array, i);
}

/* An integer member; -1 when missing or not an integer (no test value is -1). */
static inline long long jint(json_object *obj, const char *key)
{
	json_object *v = jget(obj, key);
	if (!v || !json_object_is_type(v, json_type_int))
		return -1;
	return (long long)json_object_get_int64(v);
}

static inline const char *jstr(json_object *obj, const char *key)
{
	json_object *v = jget(obj, key);
	if (!v || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static inline size_t jlen(json_object *array)
{
	if (!array || !json_object_is_type(array, json_type_array))
		return (size_t)-1;
	return json_object_array_length(array);
}

/* True when text has a line starting with prefix. */
static inline int has_line_starting(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strncmp(line, prefix, n) == 0)
			return 1;
	return 0;
}

/* True when text has a line equal to want (without its newline). */
static inline int has_line(const char *text, const char *want)
{
	size_t n = strlen(want);
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strncmp(line, want, n) == 0 && (line[n] == '\n' || line[n] == '\0'))
			return 1;
	return 0;
}

#endif
