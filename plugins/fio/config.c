/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_path: the KV SDK's configuration file. The SDK's own loader (kv_sdk_load_option) checks
 * it, so a file is accepted or refused here exactly as kv_sdk_init would, with the same reason.
 * Its struct keeps only 31 characters of a device id, and emu:// URIs are longer: the whole ids
 * are read again from the file's device_description, in the same order.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <unvme/kv/kv_apis.h>

#include "unvme_fio.h"

/* The loader prints its reason on stderr ("kvsdk: ..."): catch it to make it our one line. */
static int load_quietly(kv_sdk *sdk, const char *path, char *msg, size_t msglen)
{
	msg[0] = '\0';
	fflush(stderr);
	FILE *tmp = tmpfile();
	int saved = tmp ? dup(STDERR_FILENO) : -1;
	if (saved >= 0)
		dup2(fileno(tmp), STDERR_FILENO);
	/* the library says why only with its log on; setup runs before the job threads */
	unvme_set_log(1);
	int rc = kv_sdk_load_option(sdk, (char *)path);
	unvme_set_log(-1);
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	if (tmp) {
		char line[2048];
		rewind(tmp);
		while (fgets(line, sizeof(line), tmp)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0])
				continue;
			const char *l = strncmp(line, "kvsdk: ", 7) ? line : line + 7;
			if (rc == 0)
				fprintf(stderr, "unvme: %s\n", l); /* warnings of an accepted file */
			else
				snprintf(msg, msglen, "%.1000s", l);
		}
		fclose(tmp);
	}
	return rc;
}

int ufio_config_load(const char *path, struct ufio_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	if (access(path, R_OK) != 0) {
		snprintf(err, errlen, "json_path '%s': %s", path, strerror(errno));
		return -1;
	}
	kv_sdk *sdk = calloc(1, sizeof(*sdk));
	if (!sdk) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char why[1024];
	if (load_quietly(sdk, path, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "json_path '%s' is not a valid SDK configuration: %s", path,
			 why[0] ? why : "rejected by kv_sdk_load_option");
		free(sdk);
		return -1;
	}
	json_object *root = json_object_from_file(path);
	json_object *dd = NULL;
	if (!root || !json_object_object_get_ex(root, "device_description", &dd)) {
		snprintf(err, errlen, "json_path '%s': no device_description", path);
		json_object_put(root);
		free(sdk);
		return -1;
	}
	int n = json_object_is_type(dd, json_type_array) ? (int)json_object_array_length(dd) : 1;
	if (n != sdk->nr_ssd || n > 64) {
		snprintf(err, errlen, "json_path '%s': %d devices in device_description, %d loaded",
			 path, n, sdk->nr_ssd);
		json_object_put(root);
		free(sdk);
		return -1;
	}
	cfg->path = strdup(path);
	cfg->ndev = n;
	cfg->lba_mode = sdk->ssd_type == LBA_TYPE_SSD;
	for (int i = 0; i < n; i++) {
		json_object *d = json_object_is_type(dd, json_type_array) ?
					 json_object_array_get_idx(dd, (size_t)i) : dd;
		json_object *id = NULL;
		json_object_object_get_ex(d, "dev_id", &id);
		cfg->dev_id[i] = strdup(id ? json_object_get_string(id) : sdk->dev_id[i]);
		cfg->core_mask[i] = sdk->dd_options[i].core_mask;
		cfg->queue_depth[i] = sdk->dd_options[i].queue_depth ? sdk->dd_options[i].queue_depth : 32;
	}
	json_object_put(root);
	free(sdk);
	return 0;
}

void ufio_config_free(struct ufio_config *cfg)
{
	free(cfg->path);
	for (int i = 0; i < cfg->ndev; i++)
		free(cfg->dev_id[i]);
	memset(cfg, 0, sizeof(*cfg));
}
