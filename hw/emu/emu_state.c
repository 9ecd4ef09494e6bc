/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-volatile controller state: what a real controller keeps in its own flash across power
 * cycles. A JSON file (docs/devices.md shows an example), written atomically (temporary file,
 * fsync, rename) so that a crash leaves either the old or the new state:
 *   running                 a session is live (not shut down through CC.SHN)
 *   power_cycles, power_on_seconds, unsafe_shutdowns, error_count, media_errors
 *   host_read_commands, host_write_commands, bytes_read, bytes_written  (SMART)
 *   firmware {active_slot, next_slot, slots {"2": rev, "3": rev}}
 *   saved_features {name: value}
 *   namespaces {"nsid": {lba_size}}
 * Unknown keys are ignored (a newer version may add some); a key of the wrong type, a file
 * that is not JSON or not this format is corrupt, and device creation fails naming the file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/common/fdio.h"
#include "emu_ctrl.h"
#include "lib/common/crash_point.h"

#define STATE_FORMAT "unvme-emu-state"
#define STATE_VERSION 1
#define STATE_MAX_BYTES (1u << 20)

static int corrupt(const char *path, char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "state file '%s' is corrupt: %s", path, why);
	return -EINVAL;
}

/* Reads an unsigned integer member if present. false: present with the wrong type. */
static bool get_u64(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return true;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

static bool get_u32(json_object *o, const char *key, uint32_t max, uint32_t *out)
{
	uint64_t v = *out;
	if (!get_u64(o, key, &v) || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool get_object(json_object *o, const char *key, json_object **out, bool *bad)
{
	if (!json_object_object_get_ex(o, key, out))
		return false;
	if (!json_object_is_type(*out, json_type_object)) {
		*bad = true;
		return false;
	}
	return true;
}

static char *read_file(const char *path, size_t *len, int *rc)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		*rc = -errno;
		return NULL;
	}
	char *buf = malloc(STATE_MAX_BYTES + 1);
	size_t n = buf ? fread(buf, 1, STATE_MAX_BYTES + 1, f) : 0;
	*rc = !buf ? -ENOMEM : ferror(f) ? -EIO : n > STATE_MAX_BYTES ? -EFBIG : 0;
	fclose(f);
	if (*rc) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int parse(json_object *root, struct emu_nvstate *st, const char *path, char *err, size_t errlen)
{
	if (!json_object_is_type(root, json_type_object))
		return corrupt(path, err, errlen, "not a JSON object");
	json_object *v;
	if (!json_object_object_get_ex(root, "format", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), STATE_FORMAT))
		return corrupt(path, err, errlen, "no \"format\": \"" STATE_FORMAT "\"");
	uint32_t version = 0;
	if (!get_u32(root, "version", UINT32_MAX, &version) || version != STATE_VERSION)
		return corrupt(path, err, errlen, "unsupported \"version\"");
	if (json_object_object_get_ex(root, "running", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return corrupt(path, err, errlen, "\"running\" is not true or false");
		st->running = json_object_get_boolean(v);
	}
	static const struct {
		const char *key;
		size_t off;
	} counters[] = {
		{ "power_cycles", offsetof(struct emu_nvstate, power_cycles) },
		{ "power_on_seconds", offsetof(struct emu_nvstate, power_on_secs) },
		{ "unsafe_shutdowns", offsetof(struct emu_nvstate, unsafe_shutdowns) },
		{ "error_count", offsetof(struct emu_nvstate, error_count) },
		{ "media_errors", offsetof(struct emu_nvstate, media_errors) },
		{ "host_read_commands", offsetof(struct emu_nvstate, io.read_cmds) },
		{ "host_write_commands", offsetof(struct emu_nvstate, io.write_cmds) },
		{ "bytes_read", offsetof(struct emu_nvstate, io.bytes_read) },
		{ "bytes_written", offsetof(struct emu_nvstate, io.bytes_written) },
	};
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		char why[96];
		snprintf(why, sizeof(why), "\"%s\" is not a non-negative integer", counters[i].key);
		if (!get_u64(root, counters[i].key, (uint64_t *)((char *)st + counters[i].off)))
			return corrupt(path, err, errlen, why);
	}

	bool bad = false;
	json_object *fw;
	if (get_object(root, "firmware", &fw, &bad)) {
		uint32_t active = st->fw_active, next = st->fw_next;
		if (!get_u32(fw, "active_slot", EMU_FW_SLOTS, &active) ||
		    !get_u32(fw, "next_slot", EMU_FW_SLOTS, &next))
			return corrupt(path, err, errlen, "firmware slot numbers out of range");
		st->fw_active = (uint8_t)active;
		st->fw_next = (uint8_t)next;
		json_object *slots;
		if (get_object(fw, "slots", &slots, &bad)) {
			for (uint32_t s = 2; s <= EMU_FW_SLOTS; s++) {
				char key[4];
				snprintf(key, sizeof(key), "%" PRIu32, s);
				if (!json_object_object_get_ex(slots, key, &v))
					continue;
				const char *rev = json_object_get_string(v);
				if (!json_object_is_type(v, json_type_string) || strlen(rev) > 8)
					return corrupt(path, err, errlen, "firmware revision is not a string of up to 8 characters");
				snprintf(st->fw_rev[s], sizeof(st->fw_rev[s]), "%s", rev);
			}
		}
	}
	json_object *feats;
	if (get_object(root, "saved_features", &feats, &bad)) {
		for (unsigned s = 0; s < EMU_FEAT_NSLOTS; s++) {
			if (!emu_feat_slot_saveable(s) ||
			    !json_object_object_get_ex(feats, emu_feat_slot_name(s), &v))
				continue;
			uint32_t val = 0;
			if (!get_u32(feats, emu_feat_slot_name(s), UINT32_MAX, &val))
				return corrupt(path, err, errlen, "a saved feature is not a 32-bit value");
			st->feat_saved[s] = val;
			st->feat_saved_mask |= 1u << s;
		}
	}
	json_object *nss;
	if (get_object(root, "namespaces", &nss, &bad)) {
		for (uint32_t nsid = 1; nsid <= EMU_MAX_NS; nsid++) {
			char key[12];
			snprintf(key, sizeof(key), "%" PRIu32, nsid);
			json_object *ns;
			if (!get_object(nss, key, &ns, &bad))
				continue;
			uint32_t lba = 0;
			if (!get_u32(ns, "lba_size", UINT32_MAX, &lba) || (lba && lba != 512 && lba != 4096))
				return corrupt(path, err, errlen, "a namespace's \"lba_size\" is not 512 or 4096");
			st->ns_lba_size[nsid - 1] = lba;
		}
	}
	if (bad)
		return corrupt(path, err, errlen, "\"firmware\", \"saved_features\" or \"namespaces\" has the wrong type");
	return 0;
}

/* A process killed between writing its temporary copy and the rename leaves <path>.tmp.<pid>
 * behind: removed at the next load when that process is gone (found by the crash harness,
 * which left dozens). */
static void remove_stale_tmps(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : path;
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	char prefix[NAME_MAX + 8];
	snprintf(prefix, sizeof(prefix), "%s.tmp.", base);
	DIR *d = opendir(slash && !dir[0] ? "/" : dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		char *end;
		long pid = strtol(e->d_name + strlen(prefix), &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
			(void)unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int emu_state_load(const char *path, struct emu_nvstate *st, bool *found, char *err, size_t errlen)
{
	remove_stale_tmps(path);
	memset(st, 0, sizeof(*st));
	st->fw_active = 1;
	*found = false;
	size_t len;
	int rc;
	char *text = read_file(path, &len, &rc);
	if (!text) {
		if (rc == -ENOENT)
			return 0;
		snprintf(err, errlen, "state file '%s': %s", path, strerror(-rc));
		return rc;
	}
	*found = true;
	json_tokener *tok = json_tokener_new();
	if (!tok) {
		free(text);
		snprintf(err, errlen, "state file '%s': out of memory", path);
		return -ENOMEM;
	}
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	const char *why = NULL;
	if (!root) {
		why = jerr == json_tokener_continue ? "incomplete JSON" : json_tokener_error_desc(jerr);
	} else {
		for (size_t i = json_tokener_get_parse_end(tok); i < len && !why; i++)
			if (text[i] != ' ' && text[i] != '\n' && text[i] != '\r' && text[i] != '\t')
				why = "data after the JSON object";
	}
	json_tokener_free(tok);
	if (why) {
		json_object_put(root);
		free(text);
		return corrupt(path, err, errlen, why);
	}
	rc = parse(root, st, path, err, errlen);
	json_object_put(root);
	free(text);
	return rc;
}


static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

int emu_state_save(const char *path, const struct emu_nvstate *st)
{
	json_object *root = json_object_new_object();
	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "format", json_object_new_string(STATE_FORMAT));
	add_u64(root, "version", STATE_VERSION);
	json_object_object_add(root, "running", json_object_new_boolean(st->running));
	add_u64(root, "power_cycles", st->power_cycles);
	add_u64(root, "power_on_seconds", st->power_on_secs);
	add_u64(root, "unsafe_shutdowns", st->unsafe_shutdowns);
	add_u64(root, "error_count", st->error_count);
	add_u64(root, "media_errors", st->media_errors);
	add_u64(root, "host_read_commands", st->io.read_cmds);
	add_u64(root, "host_write_commands", st->io.write_cmds);
	add_u64(root, "bytes_read", st->io.bytes_read);
	add_u64(root, "bytes_written", st->io.bytes_written);

	json_object *fw = json_object_new_object(), *slots = json_object_new_object();
	add_u64(fw, "active_slot", st->fw_active);
	add_u64(fw, "next_slot", st->fw_next);
	for (uint32_t s = 2; s <= EMU_FW_SLOTS; s++) {
		char key[4];
		snprintf(key, sizeof(key), "%" PRIu32, s);
		if (st->fw_rev[s][0])
			json_object_object_add(slots, key, json_object_new_string(st->fw_rev[s]));
	}
	json_object_object_add(fw, "slots", slots);
	json_object_object_add(root, "firmware", fw);

	json_object *feats = json_object_new_object();
	for (unsigned s = 0; s < EMU_FEAT_NSLOTS; s++)
		if (st->feat_saved_mask & (1u << s))
			add_u64(feats, emu_feat_slot_name(s), st->feat_saved[s]);
	json_object_object_add(root, "saved_features", feats);

	json_object *nss = json_object_new_object();
	for (uint32_t i = 0; i < EMU_MAX_NS; i++) {
		if (!st->ns_lba_size[i])
			continue;
		char key[12];
		snprintf(key, sizeof(key), "%" PRIu32, i + 1);
		json_object *ns = json_object_new_object();
		add_u64(ns, "lba_size", st->ns_lba_size[i]);
		json_object_object_add(nss, key, ns);
	}
	json_object_object_add(root, "namespaces", nss);

	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	int rc = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
	} else {
		rc = fd_write_all(fd, text, strlen(text));
		if (!rc)
			rc = fd_write_all(fd, "\n", 1);
		if (!rc && fsync(fd))
			rc = -errno;
		if (close(fd) && !rc)
			rc = -errno;
		CRASH_POINT("state.before_rename");
		if (!rc && rename(tmp, path))
			rc = -errno;
		CRASH_POINT("state.after_rename");
		if (rc)
			unlink(tmp);
		else /* a rename is durable once the directory holding the name is synced too */
			rc = emu_sync_parent_dir(path);
	}
	json_object_put(root);
	return rc;
}

int emu_ctrl_persist(struct emu_ctrl *c)
{
	if (!c->has_state)
		return 0;
	struct emu_nvstate out = c->nv;
	out.power_on_secs += (mono_ns() - c->created_ns) / 1000000000ull;
	struct emu_io_stats s;
	emu_io_stats_sum(c, &s);
	out.io.read_cmds += s.read_cmds;
	out.io.write_cmds += s.write_cmds;
	out.io.bytes_read += s.bytes_read;
	out.io.bytes_written += s.bytes_written;
	emu_errlog_snapshot(c, NULL, &out.error_count);
	out.media_errors += atomic_load(&c->media_errors);
	out.fw_active = c->fw.active;
	out.fw_next = c->fw.next;
	for (uint32_t slot = 2; slot <= EMU_FW_SLOTS; slot++)
		memcpy(out.fw_rev[slot], c->fw.rev[slot], sizeof(out.fw_rev[slot]));
	for (uint32_t i = 0; i < c->nr_ns; i++)
		out.ns_lba_size[i] = emu_ns_lba_size(c->ns[i]);
	return emu_state_save(c->p.state_path, &out);
}
