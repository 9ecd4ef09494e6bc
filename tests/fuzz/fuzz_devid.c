/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the device-id parsers. The first byte picks what the rest is:
 *   0  an emu:// URI (emu_params_parse; "emu://" is prepended unless the first byte's bit 7
 *      is set): accepted, it describes a device within the documented limits; refused, the
 *      message quotes the URI;
 *   1  $UNVME_DEVICES ("name=devid;..."): every name in it resolves or fails with a message;
 *   2  the devices file (JSON, through $UNVME_CONFIG): the same, through unvme_devid_list;
 *   3  a PCI address: unvme_addr_parse_bdf accepts only what it can normalise.
 * Whatever resolves to an emu:// URI is parsed as one too.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/emu/emu.h"
#include "lib/driver/devid.h"
#include "unvme/unvme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char cfg_path[128], state_dir[128];
static struct emu_params params;

/* What the run left in /dev/shm: its configuration file and its (empty) state directory. */
static void cleanup(void)
{
	unlink(cfg_path);
	rmdir(state_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("UNVME_QUIET", "1", 1);
	snprintf(state_dir, sizeof(state_dir), "/dev/shm/unvme-fuzz-devid-%d", (int)getpid());
	setenv("UNVME_STATE_DIR", state_dir, 1);
	snprintf(cfg_path, sizeof(cfg_path), "/dev/shm/unvme-fuzz-devid-%d.json", (int)getpid());
	atexit(cleanup);
	return 0;
}

static void parse_uri(const char *uri)
{
	char err[512];
	err[0] = 0;
	if (emu_params_parse(uri, &params, err, sizeof(err)) != 0) {
		if (!strstr(err, "emu URI") && !err[0])
			abort(); /* a refusal names what was wrong */
		return;
	}
	if (params.nr_ns < 1 || params.nr_ns > EMU_MAX_NS || params.max_queues < 1 ||
	    params.max_queues > 1023 || params.mqes < 2 || params.mqes > 65536 || params.dstrd > 15)
		abort();
	for (uint32_t i = 0; i < params.nr_ns; i++) {
		const struct emu_ns_params *n = &params.ns[i];
		if (n->lba_size != 512 && n->lba_size != 4096)
			abort();
		/* file namespaces, and zoned ones with a path, may take their size from the file */
		bool sized_by_file = n->kind == EMU_NS_FILE || (n->kind == EMU_NS_ZNS && n->path[0]);
		if (!sized_by_file && n->size_bytes == 0)
			abort();
		if (n->size_bytes % n->lba_size)
			abort();
		if (!memchr(n->path, 0, sizeof(n->path)))
			abort();
	}
}

static void resolve(const char *name)
{
	char out[4096 + 256];
	if (unvme_devid_resolve(name, out, sizeof(out)) == 0) {
		if (unvme_addr_is_emu(out))
			parse_uri(out);
	} else if (!unvme_errmsg()[0]) {
		abort();
	}
}

static void listed(void *arg, const char *name, const char *addr)
{
	(void)arg;
	if (!name || !addr)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mode = data[0];
	char *s = malloc(size + 8);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	switch (mode & 3) {
	case 0: {
		char *uri = malloc(size + 16);
		snprintf(uri, size + 16, "%s%s", mode & 0x80 ? "" : "emu://", s);
		parse_uri(uri);
		free(uri);
		break;
	}
	case 1: {
		setenv("UNVME_DEVICES", s, 1);
		unsetenv("UNVME_CONFIG");
		/* the first name in it, a name that is surely absent, and the built-in */
		char name[64] = "";
		const char *eq = strchr(s, '=');
		if (eq && (size_t)(eq - s) < sizeof(name)) {
			memcpy(name, s, (size_t)(eq - s));
			name[eq - s] = 0;
		}
		if (name[0])
			resolve(name);
		resolve("no-such-alias");
		resolve("emu0");
		unvme_devid_list(listed, NULL);
		unsetenv("UNVME_DEVICES");
		break;
	}
	case 2: {
		FILE *f = fopen(cfg_path, "w");
		if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f))
			abort();
		setenv("UNVME_CONFIG", cfg_path, 1);
		resolve("a");
		resolve("0000:02:00.0");
		unvme_devid_list(listed, NULL);
		unsetenv("UNVME_CONFIG");
		break;
	}
	case 3: {
		char bdf[13];
		if (unvme_addr_parse_bdf(s, bdf)) {
			/* dddd:bb:dd.f, lower-case hex */
			if (strlen(bdf) != 12 || bdf[4] != ':' || bdf[7] != ':' || bdf[10] != '.')
				abort();
			for (int i = 0; i < 12; i++)
				if (i != 4 && i != 7 && i != 10 && !isxdigit((unsigned char)bdf[i]))
					abort();
		}
		break;
	}
	}
	free(s);
	return 0;
}
