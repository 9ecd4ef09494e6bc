/* SPDX-License-Identifier: BSD-3-Clause */
/* The iterator table (kv_iterate_info) as text and JSON, for sdk_iterate and unvme kv-it-info. */
#ifndef KVTOOLS_ITER_INFO_H
#define KVTOOLS_ITER_INFO_H

#include <json-c/json.h>
#include <stdio.h>

#include "kv_types.h"

const char *kvt_iter_type_name(int type);
/* One line per open iterator (or "no open iterator"), each prefixed by indent. */
void kvt_iter_info_text(FILE *f, const char *indent, const kv_iterate_handle_info *info, int n);
/* An array with one object per open iterator. */
json_object *kvt_iter_info_json(const kv_iterate_handle_info *info, int n);

#endif
