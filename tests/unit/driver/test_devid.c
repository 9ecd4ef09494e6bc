/* SPDX-License-Identifier: BSD-3-Clause */
/* Device id resolution: URIs, PCI addresses, aliases from the environment and the devices file;
 * over-long ids and alias targets refused with a message, never cut. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unvme/unvme.h"
#include "test_util.h"

static char out[PATH_MAX + 256];

static void clean_env(void)
{
	unsetenv("UNVME_DEVICES");
	unsetenv("UNVME_CONFIG");
	setenv("HOME", "/nonexistent-home", 1);
	unsetenv("XDG_CONFIG_HOME");
}

static void test_uri_and_bdf_pass_through(void)
{
	clean_env();
	CHECK_EQ(unvme_devid_resolve("emu://x?ns=mem:1M:512", out, sizeof(out)), 0);
	CHECK_STREQ(out, "emu://x?ns=mem:1M:512");
	CHECK_EQ(unvme_devid_resolve("0000:02:00.0", out, sizeof(out)), 0);
	CHECK_STREQ(out, "0000:02:00.0");
	CHECK_EQ(unvme_devid_resolve("0000.02.00.0", out, sizeof(out)), 0); /* fio's dotted form */
	CHECK_STREQ(out, "0000:02:00.0");
	CHECK_EQ(unvme_devid_resolve("02:00.0", out, sizeof(out)), 0);
	CHECK_STREQ(out, "0000:02:00.0");
}

static void test_env_aliases_nest(void)
{
	clean_env();
	setenv("UNVME_DEVICES", "fast=emu://a?ns=null:1G:512;0000:02:00.0=fast", 1);
	CHECK_EQ(unvme_devid_resolve("fast", out, sizeof(out)), 0);
	CHECK_STREQ(out, "emu://a?ns=null:1G:512");
	/* a PCI address can name an emulated device, in any of its spellings */
	CHECK_EQ(unvme_devid_resolve("0000.02.00.0", out, sizeof(out)), 0);
	CHECK_STREQ(out, "emu://a?ns=null:1G:512");
}

static void test_alias_loop_and_unknown(void)
{
	clean_env();
	setenv("UNVME_DEVICES", "a=b;b=a", 1);
	CHECK_EQ(unvme_devid_resolve("a", out, sizeof(out)), -ELOOP);
	CHECK_EQ(unvme_devid_resolve("nosuch", out, sizeof(out)), -ENOENT);
	CHECK(strstr(unvme_errmsg(), "UNVME_DEVICES") != NULL);
	CHECK(strstr(unvme_errmsg(), "nosuch") != NULL);
	CHECK_EQ(unvme_devid_resolve("nvme://host/x", out, sizeof(out)), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "scheme") != NULL);
	CHECK_EQ(unvme_devid_resolve("", out, sizeof(out)), -EINVAL);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_devices_file(void)
{
	clean_env();
	char path[] = "/tmp/unvme-devid-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	write_file(path, "{\"devices\": {\"lab\": \"emu://lab?ns=mem:64M:4096\", \"bad\": 7}}");
	setenv("UNVME_CONFIG", path, 1);
	CHECK_EQ(unvme_devid_resolve("lab", out, sizeof(out)), 0);
	CHECK_STREQ(out, "emu://lab?ns=mem:64M:4096");
	CHECK_EQ(unvme_devid_resolve("bad", out, sizeof(out)), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "must be a string") != NULL);
	/* the environment wins over the file */
	setenv("UNVME_DEVICES", "lab=emu://env", 1);
	CHECK_EQ(unvme_devid_resolve("lab", out, sizeof(out)), 0);
	CHECK_STREQ(out, "emu://env");
	unsetenv("UNVME_DEVICES");
	/* a broken file is an error naming the file, not a silent fallback */
	write_file(path, "{\"devices\": {\"lab\": ");
	CHECK_EQ(unvme_devid_resolve("lab", out, sizeof(out)), -EINVAL);
	CHECK(strstr(unvme_errmsg(), path) != NULL);
	write_file(path, "[1,2]");
	CHECK_EQ(unvme_devid_resolve("lab", out, sizeof(out)), -EINVAL);
	CHECK(strstr(unvme_errmsg(), "\"devices\"") != NULL);
	unlink(path);
	CHECK_EQ(unvme_devid_resolve("lab", out, sizeof(out)), -ENOENT);
	CHECK(strstr(unvme_errmsg(), path) != NULL);
}

static void test_builtin_emu0_uses_state_dir(void)
{
	clean_env();
	char dir[] = "/tmp/unvme-state-XXXXXX";
	REQUIRE(mkdtemp(dir) != NULL);
	char sub[PATH_MAX];
	snprintf(sub, sizeof(sub), "%s/nested/dir", dir);
	setenv("UNVME_STATE_DIR", sub, 1);
	CHECK_EQ(unvme_devid_resolve("emu0", out, sizeof(out)), 0);
	CHECK(strncmp(out, "emu://emu0?ns=file:", 19) == 0);
	CHECK(strstr(out, sub) != NULL);
	CHECK_EQ(access(sub, W_OK), 0); /* created on demand */
	unsetenv("UNVME_STATE_DIR");
}

struct listing {
	int n;
	int emu0;
	int lab;
};

static void list_cb(void *arg, const char *name, const char *address)
{
	struct listing *l = arg;
	l->n++;
	l->emu0 += strcmp(name, "emu0") == 0;
	l->lab += strcmp(name, "lab") == 0 && strcmp(address, "emu://lab") == 0;
}

static void test_list(void)
{
	clean_env();
	setenv("UNVME_STATE_DIR", "/tmp", 1);
	setenv("UNVME_DEVICES", "lab=emu://lab;other=nosuchalias", 1);
	struct listing l = {0};
	CHECK_EQ(unvme_devid_list(list_cb, &l), 0);
	CHECK_EQ(l.n, 3);
	CHECK_EQ(l.emu0, 1);
	CHECK_EQ(l.lab, 1);
}

/* A string of n characters: "emu://" and a file path made of 'a's. */
static char *long_uri(size_t n)
{
	char *u = malloc(n + 1);
	if (!u)
		abort();
	memcpy(u, "emu://x?file=/", 14);
	memset(u + 14, 'a', n - 14);
	u[n] = 0;
	return u;
}

static void test_too_long_refused(void)
{
	clean_env();
	/* an id longer than any device id: refused, and the message shows only its start */
	char *big = long_uri(1 << 20);
	CHECK_EQ(unvme_devid_resolve(big, out, sizeof(out)), -ENAMETOOLONG);
	CHECK(strstr(unvme_errmsg(), "1048576 characters") != NULL);
	CHECK(strlen(unvme_errmsg()) < 300);
	struct unvme_ctrlr *c = NULL;
	CHECK_EQ(unvme_ctrlr_open(big, NULL, &c), -ENAMETOOLONG);
	CHECK(c == NULL);
	/* a result that does not fit the caller's buffer: refused, not cut */
	char small[64];
	char *u100 = long_uri(100);
	CHECK_EQ(unvme_devid_resolve(u100, small, sizeof(small)), -ENAMETOOLONG);
	CHECK(strstr(unvme_errmsg(), "100 characters") != NULL);
	CHECK_EQ(unvme_devid_resolve(u100, out, sizeof(out)), 0);
	CHECK_STREQ(out, u100);
	/* an alias in the environment whose target does not fit */
	char *target = long_uri(PATH_MAX + 1000);
	size_t envlen = strlen(target) + 16;
	char *env = malloc(envlen);
	REQUIRE(env != NULL);
	snprintf(env, envlen, "longone=%s", target);
	setenv("UNVME_DEVICES", env, 1);
	CHECK_EQ(unvme_devid_resolve("longone", out, sizeof(out)), -ENAMETOOLONG);
	CHECK(strstr(unvme_errmsg(), "longone") != NULL);
	CHECK(strstr(unvme_errmsg(), "UNVME_DEVICES") != NULL);
	/* ... and in the devices file */
	unsetenv("UNVME_DEVICES");
	char path[] = "/tmp/unvme-devid-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	FILE *f = fopen(path, "w");
	fprintf(f, "{\"devices\": {\"filelong\": \"%s\"}}", target);
	fclose(f);
	setenv("UNVME_CONFIG", path, 1);
	CHECK_EQ(unvme_devid_resolve("filelong", out, sizeof(out)), -ENAMETOOLONG);
	CHECK(strstr(unvme_errmsg(), "filelong") != NULL);
	CHECK(strstr(unvme_errmsg(), path) != NULL);
	unlink(path);
	free(env);
	free(target);
	free(u100);
	free(big);
}

static void name_cb(void *arg, const char *name, const char *address)
{
	int *found = arg;
	if (strlen(name) == 100 && strcmp(address, "emu://longname") == 0)
		(*found)++;
}

/* Alias names of any length are listed (and resolved) whole. */
static void test_list_long_names(void)
{
	clean_env();
	setenv("UNVME_STATE_DIR", "/tmp", 1);
	char env[256];
	memset(env, 'n', 100);
	snprintf(env + 100, sizeof(env) - 100, "=emu://longname");
	setenv("UNVME_DEVICES", env, 1);
	int found = 0;
	CHECK_EQ(unvme_devid_list(name_cb, &found), 0);
	CHECK_EQ(found, 1);
}

TEST_MAIN(TEST(test_uri_and_bdf_pass_through), TEST(test_env_aliases_nest),
	  TEST(test_alias_loop_and_unknown), TEST(test_devices_file),
	  TEST(test_builtin_emu0_uses_state_dir), TEST(test_list), TEST(test_too_long_refused),
	  TEST(test_list_long_names))
