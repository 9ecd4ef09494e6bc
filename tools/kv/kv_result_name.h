/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names of the SDK's kv_result codes, so every tool prints a status the way the header spells
 * it ("KV_ERR_NOT_EXIST_KEY (0x10)") rather than a bare number the user has to look up.
 */
#ifndef KVTOOLS_RESULT_NAME_H
#define KVTOOLS_RESULT_NAME_H

#include <stddef.h>

/* The enumerator's name, or NULL for a code kv_types.h does not define. */
const char *kvt_result_name(int result);
/* "NAME (0xNN)", or "unknown kv_result (0xNN)"; returns out. */
const char *kvt_result_str(int result, char *out, size_t outlen);

#endif
