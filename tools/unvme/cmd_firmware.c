/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware commands: fw-download (Firmware Image Download only, as nvme-cli's), fw-commit
 * (also spelled fw-activate), and fw-image, which builds an image the emulated controller
 * accepts.
 * After a commit the tool says whether the new image needs a reset to run; --reset does it
 * and reads the running revision back from the controller.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fw_image.h"

#define FW_FILE_MAX (64u << 20)
#define DEFAULT_PAYLOAD_LEN 8192u

static const char *action_text(uint8_t action)
{
	switch (action) {
	case NVME_FW_CA_REPLACE: return "stored, not activated";
	case NVME_FW_CA_REPLACE_ACTIVATE: return "stored, activates at the next reset";
	case NVME_FW_CA_ACTIVATE: return "activates at the next reset";
	case NVME_FW_CA_ACTIVATE_NOW: return "activated now";
	default: return "unknown action";
	}
}

/* Statuses with which Firmware Commit says "done, but a reset must follow". */
static bool status_needs_reset(int st)
{
	return st == NVME_STATUS(NVME_SCT_CMD, NVME_SC_FW_NEEDS_CONV_RESET) ||
	       st == NVME_STATUS(NVME_SCT_CMD, NVME_SC_FW_NEEDS_SUBSYS_RESET) ||
	       st == NVME_STATUS(NVME_SCT_CMD, NVME_SC_FW_NEEDS_RESET);
}

static int running_revision(struct cli_args *a, struct unvme_ctrlr *c, char fr[9])
{
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	if (!id)
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	int rc = cli_result(a->cmd, unvme_identify(c, NVME_CNS_CTRL, 0, 0, id), 0);
	if (rc == EXIT_OK)
		cli_id_string(id->fr, sizeof(id->fr), fr, 9);
	free(id);
	return rc;
}

/* Commits, then explains the outcome and resets when asked. */
static int commit_and_report(struct cli_args *a, struct unvme_ctrlr *c)
{
	if (a->slot > 7)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --slot (-s): slots are 0..7",
				a->slot);
	if (a->action > 7)
		return cli_fail(a->cmd, EXIT_USAGE, "invalid value '%u' for --action (-a): 0..7",
				a->action);
	int st = unvme_fw_commit(c, a->slot, a->action);
	bool reset_needed = status_needs_reset(st) ||
			    (st == 0 && (a->action == NVME_FW_CA_REPLACE_ACTIVATE ||
					 a->action == NVME_FW_CA_ACTIVATE));
	if (st && !status_needs_reset(st))
		return cli_result(a->cmd, st, 0);

	bool reset_done = false;
	char fr[9] = "";
	if (reset_needed && a->reset) {
		int rc = cli_result(a->cmd, unvme_ctrlr_reset(c), 0);
		if (rc)
			return rc;
		reset_done = true;
	}
	int rc = running_revision(a, c, fr);
	if (rc)
		return rc;

	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_int(a->slot));
		json_object_object_add(o, "action", json_object_new_int(a->action));
		if (st)
			json_object_object_add(o, "commit_status",
					       json_object_new_string(unvme_status_str(st, 0)));
		json_object_object_add(o, "reset_needed", json_object_new_boolean(reset_needed));
		json_object_object_add(o, "reset_done", json_object_new_boolean(reset_done));
		json_object_object_add(o, "running_firmware", json_object_new_string(fr));
		cli_json_print(o);
		return EXIT_OK;
	}
	printf("%s: committed to slot %u with action %u: %s%s%s\n", a->cmd, a->slot, a->action,
	       action_text(a->action), st ? "; controller says " : "", st ? unvme_status_str(st, 0) : "");
	if (reset_done)
		printf("%s: controller reset; running firmware revision %s\n", a->cmd, fr);
	else if (reset_needed)
		printf("%s: a controller reset is needed to run it (--reset does one, so do 'unvme reset' "
		       "and the device's next power-on); running firmware revision %s\n", a->cmd, fr);
	else
		printf("%s: running firmware revision %s\n", a->cmd, fr);
	return EXIT_OK;
}

int cmd_fw_download(struct cli_args *a)
{
	if (cli_given(a, "xfer") && (a->xfer == 0 || a->xfer % 4 != 0))
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%u' for --xfer (-x): a non-zero multiple of 4 bytes",
				a->xfer);
	void *image;
	size_t len;
	int rc = cli_read_file(a->cmd, a->fw_file, FW_FILE_MAX, &image, &len);
	if (rc)
		return rc;
	if (len == 0 || len % 4 != 0) {
		free(image);
		return cli_fail(a->cmd, EXIT_USAGE,
				"%s: a firmware image is a non-zero multiple of 4 bytes (this one is %zu)",
				a->fw_file, len);
	}
	struct unvme_ctrlr *c;
	rc = cli_open(a, &c);
	if (rc == EXIT_OK)
		rc = cli_result(a->cmd, unvme_fw_download(c, image, len, a->xfer), 0);
	free(image);
	if (rc)
		return rc;
	if (a->fmt == UNVME_FMT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "image_bytes", json_object_new_int64((int64_t)len));
		cli_json_print(o);
	} else {
		printf("%s: downloaded %zu bytes; 'unvme fw-commit -s SLOT -a ACTION' commits them\n",
		       a->cmd, len);
	}
	return EXIT_OK;
}

int cmd_fw_commit(struct cli_args *a)
{
	struct unvme_ctrlr *c;
	int rc = cli_open(a, &c);
	if (rc)
		return rc;
	return commit_and_report(a, c);
}

int cmd_fw_image(struct cli_args *a)
{
	size_t rlen = strlen(a->revision);
	if (rlen == 0 || rlen > FW_IMAGE_REV_LEN)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%s' for --revision (-r): 1 to %u characters", a->revision,
				FW_IMAGE_REV_LEN);
	void *payload;
	size_t plen;
	int rc;
	if (a->positional) {
		rc = cli_read_file(a->cmd, a->positional, FW_FILE_MAX, &payload, &plen);
		if (rc)
			return rc;
	} else {
		/* A recognisable generated payload: the revision and a counter, repeated. */
		plen = DEFAULT_PAYLOAD_LEN;
		char *p = malloc(plen);
		if (!p)
			return cli_fail(a->cmd, EXIT_HOST, "out of memory");
		for (size_t off = 0, n = 0; off < plen; n++) {
			char line[64];
			int l = snprintf(line, sizeof(line), "uNVMe emulated firmware %s block %zu\n",
					 a->revision, n);
			size_t take = (size_t)l < plen - off ? (size_t)l : plen - off;
			memcpy(p + off, line, take);
			off += take;
		}
		payload = p;
	}
	uint8_t *image;
	size_t ilen;
	rc = fw_image_build(a->revision, payload, plen, &image, &ilen);
	free(payload);
	if (rc == -EINVAL)
		return cli_fail(a->cmd, EXIT_USAGE,
				"invalid value '%s' for --revision (-r): printable characters without "
				"blanks (payload at most 4 GiB)", a->revision);
	if (rc)
		return cli_fail(a->cmd, EXIT_HOST, "%s", strerror(-rc));
	/* Firmware Image Download moves dwords: pad the image to a multiple of 4 bytes. */
	size_t padded = (ilen + 3) & ~(size_t)3;
	uint8_t *out = realloc(image, padded);
	if (!out) {
		free(image);
		return cli_fail(a->cmd, EXIT_HOST, "out of memory");
	}
	memset(out + ilen, 0, padded - ilen);
	rc = cli_write_file(a->cmd, a->out_file, out, padded);
	free(out);
	if (rc)
		return rc;
	printf("fw-image: wrote %s: revision %s, %zu-byte payload, %zu bytes\n", a->out_file,
	       a->revision, plen, padded);
	return EXIT_OK;
}
