/* SPDX-License-Identifier: BSD-3-Clause */
/* Printing the device's iterator table. Closed handles are left out: 16 lines of "closed"
 * would hide the ones that matter. */
#include "kv_iter_info.h"

const char *kvt_iter_type_name(int type)
{
	switch (type) {
	case KV_KEY_ITERATE: return "key";
	case KV_KEY_ITERATE_WITH_RETRIEVE: return "key+retrieve";
	case KV_KEY_ITERATE_WITH_DELETE: return "key+delete";
	default: return "unknown";
	}
}

void kvt_iter_info_text(FILE *f, const char *indent, const kv_iterate_handle_info *info, int n)
{
	int open = 0;
	for (int i = 0; i < n; i++) {
		const kv_iterate_handle_info *h = &info[i];
		if (h->status != ITERATE_HANDLE_OPENED)
			continue;
		if (!open++)
			fprintf(f, "%shandle  type          keyspace  prefix      bitmask     eof\n", indent);
		fprintf(f, "%s%-6u  %-12s  %-8u  0x%08x  0x%08x  %s\n", indent, h->handle_id,
			kvt_iter_type_name(h->type), h->keyspace_id, h->prefix, h->bitmask,
			h->is_eof ? "yes" : "no");
	}
	if (!open)
		fprintf(f, "%sno open iterator\n", indent);
}

json_object *kvt_iter_info_json(const kv_iterate_handle_info *info, int n)
{
	json_object *a = json_object_new_array();
	for (int i = 0; i < n; i++) {
		const kv_iterate_handle_info *h = &info[i];
		if (h->status != ITERATE_HANDLE_OPENED)
			continue;
		json_object *o = json_object_new_object();
		json_object_object_add(o, "handle", json_object_new_int(h->handle_id));
		json_object_object_add(o, "type", json_object_new_string(kvt_iter_type_name(h->type)));
		json_object_object_add(o, "keyspace", json_object_new_int(h->keyspace_id));
		json_object_object_add(o, "prefix", json_object_new_int64(h->prefix));
		json_object_object_add(o, "bitmask", json_object_new_int64(h->bitmask));
		json_object_object_add(o, "eof", json_object_new_boolean(h->is_eof));
		json_object_array_add(a, o);
	}
	return a;
}
