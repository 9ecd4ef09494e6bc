/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BlobFS administration: mkfs and fsck on a namespace (docs/blobfs.md). The device is
 * opened through the CLI (so `unvme batch` can mkfs a memory namespace and use it on the
 * next line); the file system itself is reached only through blobfs.h.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "cli.h"
#include "cmd_blobfs.h"
#include "unvme/blobfs.h"

int cli_fs_ns(const char *cmd, const char *devid, uint32_t nsid, struct unvme_ns **out)
{
	struct unvme_ctrlr *c;
	int rc = cli_open_devid(cmd, devid, &c);
	if (rc)
		return rc;
	if (!nsid)
		nsid = unvme_ctrlr_first_nsid(c);
	struct unvme_ns *ns = nsid ? unvme_ctrlr_ns(c, nsid) : NULL;
	if (!ns)
		return cli_fail(cmd, EXIT_USAGE, "%s has no active namespace %u", devid, nsid);
	*out = ns;
	return EXIT_OK;
}

int cli_fs_result(const char *cmd, int rc)
{
	if (rc == 0)
		return EXIT_OK;
	const char *msg = blobfs_errmsg();
	if (rc > 0)
		return cli_fail(cmd, EXIT_NVME, "%s", msg && *msg ? msg : "device error");
	return cli_fail(cmd, rc == -EINVAL ? EXIT_USAGE : EXIT_HOST, "%s",
			msg && *msg ? msg : blobfs_strerror(rc));
}

int cmd_mkfs(struct cli_args *a)
{
	struct unvme_ns *ns = NULL;
	int rc = cli_fs_ns(a->cmd, a->positional, a->nsid, &ns);
	if (rc)
		return rc;
	if (a->fs_cluster > UINT32_MAX)
		return cli_fail(a->cmd, EXIT_USAGE, "cluster size %llu is too large",
				(unsigned long long)a->fs_cluster);
	struct blobfs_mkfs_opts o = {
		.cluster_size = (uint32_t)a->fs_cluster, .journal_size = a->fs_journal,
		.meta_size = a->fs_meta, .label = a->fs_label, .force = a->force, .discard = a->fs_discard,
	};
	rc = blobfs_mkfs(ns, &o);
	if (rc == -EEXIST)
		return cli_fail(a->cmd, EXIT_USAGE, "%s", blobfs_errmsg());
	if (rc)
		return cli_fs_result(a->cmd, rc);
	/* Report what was made, read back through a read-only mount. */
	struct blobfs *fs;
	struct blobfs_opts mo = { .read_only = true, .cache_size = 1u << 20 };
	rc = blobfs_mount(ns, &mo, &fs);
	if (rc)
		return cli_fs_result(a->cmd, rc);
	struct blobfs_statfs sf;
	blobfs_statfs(fs, &sf);
	blobfs_unmount(fs);
	char uuid[40];
	for (int i = 0, k = 0; i < 16; i++)
		k += snprintf(uuid + k, sizeof(uuid) - (size_t)k, "%02x%s", sf.uuid[i],
			      i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	if (a->fmt == UNVME_FMT_JSON) {
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "device", json_object_new_string(a->positional));
		json_object_object_add(j, "namespace", json_object_new_int64(unvme_ns_id(ns)));
		json_object_object_add(j, "uuid", json_object_new_string(uuid));
		json_object_object_add(j, "label", json_object_new_string(sf.label));
		json_object_object_add(j, "cluster_size", json_object_new_int64((int64_t)sf.cluster_size));
		json_object_object_add(j, "clusters", json_object_new_int64((int64_t)sf.clusters));
		json_object_object_add(j, "journal_size", json_object_new_int64((int64_t)sf.journal_size));
		json_object_object_add(j, "meta_capacity", json_object_new_int64((int64_t)sf.meta_capacity));
		cli_json_print(j);
		return EXIT_OK;
	}
	char data[32], jn[32], meta[32];
	cli_human_size(sf.clusters * sf.cluster_size, data, sizeof(data));
	cli_human_size(sf.journal_size, jn, sizeof(jn));
	cli_human_size(sf.meta_capacity, meta, sizeof(meta));
	printf("BlobFS made on %s namespace %u\n  uuid %s%s%s%s\n  data %s in %llu clusters of %llu KiB\n"
	       "  journal %s, metadata slots %s each\n", a->positional, unvme_ns_id(ns), uuid,
	       sf.label[0] ? ", label '" : "", sf.label, sf.label[0] ? "'" : "", data,
	       (unsigned long long)sf.clusters, (unsigned long long)(sf.cluster_size >> 10), jn, meta);
	return EXIT_OK;
}

int cmd_fsck(struct cli_args *a)
{
	struct unvme_ns *ns = NULL;
	int rc = cli_fs_ns(a->cmd, a->positional, a->nsid, &ns);
	if (rc)
		return rc;
	uint32_t flags = (a->fs_repair ? BLOBFS_FSCK_REPAIR : 0) | (a->fs_verbose ? BLOBFS_FSCK_VERBOSE : 0);
	struct blobfs_fsck_result r;
	bool json = a->fmt == UNVME_FMT_JSON;
	rc = blobfs_fsck(ns, flags, json ? NULL : stdout, &r);
	if (rc)
		return cli_fs_result(a->cmd, rc);
	uint32_t left = r.errors > r.repaired ? r.errors - r.repaired : 0;
	if (json) {
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "errors", json_object_new_int64(r.errors));
		json_object_object_add(j, "repaired", json_object_new_int64(r.repaired));
		json_object_object_add(j, "warnings", json_object_new_int64(r.warnings));
		json_object_object_add(j, "files", json_object_new_int64((int64_t)r.files));
		json_object_object_add(j, "directories", json_object_new_int64((int64_t)r.dirs));
		json_object_object_add(j, "symlinks", json_object_new_int64((int64_t)r.symlinks));
		json_object_object_add(j, "special_files", json_object_new_int64((int64_t)r.specials));
		json_object_object_add(j, "used_clusters", json_object_new_int64((int64_t)r.used_clusters));
		json_object_object_add(j, "free_clusters", json_object_new_int64((int64_t)r.free_clusters));
		json_object_object_add(j, "replayed", json_object_new_int64((int64_t)r.replayed));
		json_object_object_add(j, "lost_transactions", json_object_new_int64((int64_t)r.lost_transactions));
		json_object_object_add(j, "clean_unmount", json_object_new_boolean(r.clean_unmount));
		cli_json_print(j);
	} else {
		printf("%s\n", left ? "errors remain" : r.errors ? "all errors repaired" : "clean");
	}
	return left ? EXIT_NVME : EXIT_OK;
}

#ifdef UNVME_HAVE_FUSE
#include "blobfs_fuse.h"
#endif

int cmd_fuse_raw(int argc, char **argv)
{
#ifdef UNVME_HAVE_FUSE
	return blobfs_fuse_main(argc, argv);
#else
	(void)argc;
	(void)argv;
	return cli_fail("fuse", EXIT_HOST, "this unvme was built without libfuse3 "
			"(install libfuse3-dev and rebuild)");
#endif
}
