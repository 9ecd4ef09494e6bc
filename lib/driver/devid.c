/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device ids. An address is an emulated device URI ("emu://..."), a PCI address
 * ("0000:02:00.0"; fio's dotted "0000.02.00.0" and the short "02:00.0" are accepted too), a
 * device the kernel keeps ("/dev/ng0n1", "/dev/nvme0", "/dev/nvme0n1") or a regular file
 * ("file:///path?lba=4096", or an absolute path).
 * Any other word is an alias, looked up in order in $UNVME_DEVICES ("name=devid;..."), the
 * devices file ($UNVME_CONFIG, else ~/.config/unvme/devices.json, else
 * /etc/unvme/devices.json: {"devices": {"name": "devid", ...}}), and the built-in "emu0".
 * A PCI address may itself be an alias, so programs written for hardware run unchanged on an
 * emulated device.
 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "unvme/unvme.h"
#include "devid.h"
#include "errmsg.h"
#include "transport.h"

#define MAX_ALIAS_DEPTH 8
/* The longest device id or alias target: a path (PATH_MAX) and room for URI keys. Longer ones
 * are refused, never cut: a cut id names another device, or none. */
#define DEVID_MAX (PATH_MAX + 255)
#define ECHO_MAX 64 /* characters of an over-long id shown in a message */

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(tmp, 0755);
		*p = '/';
	}
	return (mkdir(tmp, 0755) == 0 || errno == EEXIST) ? 0 : -errno;
}

int unvme_state_dir(char *out, size_t outlen)
{
	const char *dir = getenv("UNVME_STATE_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	if (dir && *dir)
		snprintf(out, outlen, "%s", dir);
	else if (xdg && *xdg)
		snprintf(out, outlen, "%s/unvme", xdg);
	else if (home && *home)
		snprintf(out, outlen, "%s/.local/state/unvme", home);
	else
		snprintf(out, outlen, "/var/tmp/unvme");
	int rc = mkdir_p(out);
	if (rc)
		return unvme_fail(rc, "cannot create the state directory %s: %s", out, strerror(-rc));
	return 0;
}

static int builtin_emu0(char *out, size_t outlen)
{
	char dir[PATH_MAX];
	int rc = unvme_state_dir(dir, sizeof(dir));
	if (rc)
		return rc;
	int n = snprintf(out, outlen, "emu://emu0?ns=file:1G:512:%s/emu0.img", dir);
	return (n < 0 || (size_t)n >= outlen) ? unvme_fail(-ENAMETOOLONG, "state path too long") : 0;
}

bool unvme_addr_is_emu(const char *addr)
{
	return strncmp(addr, "emu://", 6) == 0;
}

/* Normalises "0000:02:00.0", "0000.02.00.0" or "02:00.0" into "0000:02:00.0". */
bool unvme_addr_parse_bdf(const char *s, char out[13])
{
	unsigned dom = 0, bus, dev, fn;
	char sep1, sep2, dot, extra;
	if (sscanf(s, "%4x%c%2x%c%2x%c%1u%c", &dom, &sep1, &bus, &sep2, &dev, &dot, &fn, &extra) == 7) {
		if (!((sep1 == ':' && sep2 == ':') || (sep1 == '.' && sep2 == '.')) || dot != '.')
			return false;
		if (strlen(s) != 12)
			return false;
	} else if (sscanf(s, "%2x:%2x.%1u%c", &bus, &dev, &fn, &extra) == 3 && strlen(s) == 7) {
		dom = 0;
	} else {
		return false;
	}
	for (const char *p = s; *p; p++)
		if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
			return false;
	if (dev > 0x1f || fn > 7)
		return false;
	snprintf(out, 13, "%04x:%02x:%02x.%u", dom, bus, dev, fn);
	return true;
}

static int too_long(const char *what, const char *id, size_t len, size_t max)
{
	return unvme_fail(-ENAMETOOLONG, "%s '%.*s...' is %zu characters long; at most %zu are "
			  "allowed", what, ECHO_MAX, id, len, max);
}

/* Looks name up in "a=b;c=d". Returns 1 found, 0 not found, -ENAMETOOLONG for a target that
 * does not fit out. */
static int lookup_env(const char *list, const char *name, char *out, size_t outlen)
{
	size_t nlen = strlen(name);
	const char *p = list;
	while (p && *p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (eq && (size_t)(eq - p) == nlen && strncmp(p, name, nlen) == 0) {
			size_t vlen = len - nlen - 1;
			if (vlen >= outlen) {
				char what[128];
				snprintf(what, sizeof(what), "$UNVME_DEVICES: alias '%.*s' names a device "
					 "id", ECHO_MAX, name);
				return too_long(what, eq + 1, vlen, outlen - 1);
			}
			memcpy(out, eq + 1, vlen);
			out[vlen] = '\0';
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static const char *devices_file(char *buf, size_t len)
{
	const char *cfg = getenv("UNVME_CONFIG");
	if (cfg && *cfg)
		return cfg;
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(buf, len, "%s/unvme/devices.json", xdg);
	else if (home && *home)
		snprintf(buf, len, "%s/.config/unvme/devices.json", home);
	else
		buf[0] = '\0';
	struct stat st;
	if (buf[0] && stat(buf, &st) == 0)
		return buf;
	if (stat("/etc/unvme/devices.json", &st) == 0)
		return "/etc/unvme/devices.json";
	return NULL;
}

static int load_devices_file_ex(json_object **root, json_object **obj, const char **path_out,
				bool for_writing);

/* Loads the devices file's "devices" object. Returns 0 with *obj (NULL when no file), or a
 * negative errno with a message naming the file and the problem. Caller puts *root. */
static int load_devices_file(json_object **root, json_object **obj, const char **path_out)
{
	return load_devices_file_ex(root, obj, path_out, false);
}

/* for_writing: a file about to be written may not exist yet, $UNVME_CONFIG's included. */
static int load_devices_file_ex(json_object **root, json_object **obj, const char **path_out,
				bool for_writing)
{
	static __thread char pathbuf[PATH_MAX];
	const char *path = devices_file(pathbuf, sizeof(pathbuf));
	*root = *obj = NULL;
	*path_out = path;
	if (!path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		/* $UNVME_CONFIG naming a missing file is a mistake worth reporting, except to
		 * the writer that creates it. */
		if (errno == ENOENT && for_writing)
			return 0;
		if (getenv("UNVME_CONFIG") && *getenv("UNVME_CONFIG"))
			return unvme_fail(-ENOENT, "devices file %s: %s", path, strerror(errno));
		return 0;
	}
	json_tokener *tok = json_tokener_new();
	char buf[4096];
	size_t n;
	json_object *j = NULL;
	enum json_tokener_error jerr = json_tokener_continue;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		j = json_tokener_parse_ex(tok, buf, (int)n);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_continue)
			break;
	}
	fclose(f);
	if (!j) {
		int line_err = (jerr == json_tokener_continue);
		json_tokener_free(tok);
		return unvme_fail(-EINVAL, "devices file %s: %s", path,
				  line_err ? "unexpected end of file" : json_tokener_error_desc(jerr));
	}
	json_tokener_free(tok);
	json_object *devs;
	if (!json_object_object_get_ex(j, "devices", &devs) ||
	    !json_object_is_type(devs, json_type_object)) {
		json_object_put(j);
		return unvme_fail(-EINVAL, "devices file %s: key \"devices\" must be an object of "
				  "name: device id", path);
	}
	*root = j;
	*obj = devs;
	return 0;
}

/* One step of alias lookup. Returns 1 and the target, 0 if name is no alias, <0 on error. */
static int lookup_alias(const char *name, char *out, size_t outlen)
{
	const char *env = getenv("UNVME_DEVICES");
	int found_env = env ? lookup_env(env, name, out, outlen) : 0;
	if (found_env)
		return found_env;
	json_object *root, *devs;
	const char *path;
	int rc = load_devices_file(&root, &devs, &path);
	if (rc)
		return rc;
	int found = 0;
	json_object *v;
	if (devs && json_object_object_get_ex(devs, name, &v)) {
		if (!json_object_is_type(v, json_type_string)) {
			json_object_put(root);
			return unvme_fail(-EINVAL, "devices file %s: device \"%s\" must be a string", path,
					  name);
		}
		const char *target = json_object_get_string(v);
		size_t tlen = strlen(target);
		if (tlen >= outlen) {
			char what[PATH_MAX + 128];
			snprintf(what, sizeof(what), "devices file %s: device \"%.*s\" names a device id",
				 path, ECHO_MAX, name);
			rc = too_long(what, target, tlen, outlen - 1);
			json_object_put(root);
			return rc;
		}
		memcpy(out, target, tlen + 1);
		found = 1;
	}
	json_object_put(root);
	if (found)
		return 1;
	if (strcmp(name, "emu0") == 0) {
		rc = builtin_emu0(out, outlen);
		return rc ? rc : 1;
	}
	return 0;
}

UNVME_API int unvme_devid_resolve(const char *devid, char *out, size_t outlen)
{
	if (!devid || !*devid)
		return unvme_fail(-EINVAL, "empty device id");
	if (!out || outlen < 16)
		return unvme_fail(-EINVAL, "unvme_devid_resolve: output buffer of %zu bytes, at least 16 "
				  "needed", out ? outlen : 0);
	char cur[DEVID_MAX + 1], next[DEVID_MAX + 1];
	size_t dlen = strlen(devid);
	if (dlen > DEVID_MAX)
		return too_long("device id", devid, dlen, DEVID_MAX);
	memcpy(cur, devid, dlen + 1);
	for (int depth = 0; depth < MAX_ALIAS_DEPTH; depth++) {
		if (unvme_transport_claims(cur)) {
			size_t clen = strlen(cur);
			if (clen >= outlen)
				return too_long("device address", cur, clen, outlen - 1);
			memcpy(out, cur, clen + 1);
			return 0;
		}
		char bdf[13];
		bool is_bdf = unvme_addr_parse_bdf(cur, bdf);
		int rc = lookup_alias(is_bdf ? bdf : cur, next, sizeof(next));
		if (rc < 0)
			return rc;
		if (rc == 1) {
			memcpy(cur, next, strlen(next) + 1); /* both DEVID_MAX + 1: it fits */
			continue;
		}
		if (is_bdf) {
			snprintf(out, outlen, "%s", bdf);
			return 0;
		}
		if (strstr(cur, "://"))
			return unvme_fail(-EINVAL, "device id '%.*s': unknown scheme (known: %s)",
					  ECHO_MAX * 2, cur, unvme_transport_schemes());
		return unvme_fail(-ENOENT, "device id '%.*s' is not a URI, a PCI address or a known alias "
				  "(aliases come from $UNVME_DEVICES, the devices file %s, and the built-in "
				  "emu0)", ECHO_MAX * 2, cur,
				  getenv("UNVME_CONFIG") ? getenv("UNVME_CONFIG")
							 : "~/.config/unvme/devices.json or /etc/unvme/devices.json");
	}
	return unvme_fail(-ELOOP, "device id '%.*s': aliases nest more than %d deep", ECHO_MAX * 2,
			  devid, MAX_ALIAS_DEPTH);
}

UNVME_API int unvme_devid_list(void (*fn)(void *arg, const char *name, const char *address),
			       void *arg)
{
	char addr[DEVID_MAX + 1];
	/* Names from the environment, then the file, then emu0 unless it was overridden. Names
	 * of any length: one cut short would be looked up as another name. */
	char *seen[64];
	int nseen = 0;
	const char *env = getenv("UNVME_DEVICES");
	for (const char *p = env; p && *p;) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (eq && eq > p && nseen < 64) {
			seen[nseen] = strndup(p, (size_t)(eq - p));
			if (!seen[nseen])
				break;
			if (unvme_devid_resolve(seen[nseen], addr, sizeof(addr)) == 0)
				fn(arg, seen[nseen], addr);
			else
				fn(arg, seen[nseen], unvme_errmsg());
			nseen++;
		}
		p = end ? end + 1 : NULL;
	}
	json_object *root, *devs;
	const char *path;
	int rc = load_devices_file(&root, &devs, &path);
	if (rc) {
		for (int i = 0; i < nseen; i++)
			free(seen[i]);
		return rc;
	}
	if (devs) {
		json_object_object_foreach(devs, key, val)
		{
			(void)val;
			bool dup = false;
			for (int i = 0; i < nseen; i++)
				dup |= strcmp(seen[i], key) == 0;
			if (dup || nseen >= 64)
				continue;
			seen[nseen] = strdup(key);
			if (!seen[nseen])
				break;
			nseen++;
			if (unvme_devid_resolve(key, addr, sizeof(addr)) == 0)
				fn(arg, key, addr);
			else
				fn(arg, key, unvme_errmsg());
		}
	}
	json_object_put(root);
	bool have_emu0 = false;
	for (int i = 0; i < nseen; i++) {
		have_emu0 |= strcmp(seen[i], "emu0") == 0;
		free(seen[i]);
	}
	if (!have_emu0 && builtin_emu0(addr, sizeof(addr)) == 0)
		fn(arg, "emu0", addr);
	return 0;
}

/* Where aliases are written: $UNVME_CONFIG, else the file that is read, else the user's. */
static int writable_devices_file(char *out, size_t len)
{
	char buf[PATH_MAX];
	const char *path = devices_file(buf, sizeof(buf));
	if (path) {
		snprintf(out, len, "%s", path);
		/* $UNVME_CONFIG may name a file in a directory that does not exist yet */
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", out);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			int rc = mkdir_p(dir);
			if (rc)
				return unvme_fail(rc, "cannot create %s: %s", dir, strerror(-rc));
		}
		return 0;
	}
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(out, len, "%s/unvme/devices.json", xdg);
	else if (home && *home)
		snprintf(out, len, "%s/.config/unvme/devices.json", home);
	else
		return unvme_fail(-ENOENT, "no devices file to write: set $UNVME_CONFIG or $HOME");
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", out);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		int rc = mkdir_p(dir);
		if (rc)
			return unvme_fail(rc, "cannot create %s: %s", dir, strerror(-rc));
	}
	return 0;
}

/* Adds, replaces (address) or removes (address NULL) one alias, rewriting the file
 * atomically (temporary file, rename). */
static int edit_alias(const char *name, const char *address)
{
	if (!name || !*name || strchr(name, '/') || strstr(name, "://"))
		return unvme_fail(-EINVAL, "alias '%s': a name without '/' or '://'", name ? name : "");
	char path[PATH_MAX];
	int rc = writable_devices_file(path, sizeof(path));
	if (rc)
		return rc;
	json_object *root, *devs;
	const char *rpath;
	rc = load_devices_file_ex(&root, &devs, &rpath, address != NULL);
	if (rc)
		return rc;
	if (!root) {
		root = json_object_new_object();
		devs = json_object_new_object();
		json_object_object_add(root, "devices", devs);
	}
	bool had = json_object_object_get_ex(devs, name, NULL);
	if (address)
		json_object_object_add(devs, name, json_object_new_string(address));
	else
		json_object_object_del(devs, name);
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rc = json_object_to_file_ext(tmp, root, JSON_C_TO_STRING_PRETTY) == 0 && rename(tmp, path) == 0
		     ? 0
		     : unvme_fail(-EIO, "cannot write the devices file %s: %s", path, strerror(errno));
	json_object_put(root);
	if (rc == 0 && !address && !had)
		return unvme_fail(-ENOENT, "alias '%s' is not in %s", name, path);
	return rc;
}

UNVME_API int unvme_devid_save(const char *name, const char *address)
{
	if (!address || !*address)
		return unvme_fail(-EINVAL, "alias '%s': empty device id", name ? name : "");
	return edit_alias(name, address);
}

UNVME_API int unvme_devid_forget(const char *name)
{
	return edit_alias(name, NULL);
}
