/* SPDX-License-Identifier: BSD-3-Clause */
/* The FTL's options, as they appear after '?' in an ftl:// device id (docs/zns.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ftl/ftl.h"

void ftl_opts_default(struct ftl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->op_pct = 20;
	o->gc = FTL_GC_GREEDY;
	o->ck_pct = 25;
}


int ftl_parse_opts(const char *s, struct ftl_opts *o, uint32_t *nsid, uint64_t *zone_bytes,
		   char *err, size_t errlen)
{
	char buf[512];
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "FTL options too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *kv = strtok_r(buf, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			snprintf(err, errlen, "FTL option '%s' is not key=value", kv);
			return -EINVAL;
		}
		*eq = '\0';
		const char *v = eq + 1;
		uint64_t n;
		if (!strcmp(kv, "op")) {
			if (zdev_parse_num(v, 1, 90, &n))
				goto bad;
			o->op_pct = (uint32_t)n;
			o->op_given = true;
		} else if (!strcmp(kv, "gc")) {
			if (!strcmp(v, "greedy"))
				o->gc = FTL_GC_GREEDY;
			else if (!strcmp(v, "cb") || !strcmp(v, "cost-benefit"))
				o->gc = FTL_GC_COST_BENEFIT;
			else
				goto bad;
		} else if (!strcmp(kv, "unit")) {
			if (zdev_parse_num(v, 1, 63, &n))
				goto bad;
			o->unit_pages = (uint32_t)n;
		} else if (!strcmp(kv, "format")) {
			if (strcmp(v, "0") && strcmp(v, "1"))
				goto bad;
			o->format = v[0] == '1';
		} else if (!strcmp(kv, "ck")) {
			if (zdev_parse_num(v, 1, 100, &n))
				goto bad;
			o->ck_pct = (uint32_t)n;
		} else if (!strcmp(kv, "nsid")) {
			if (zdev_parse_num(v, 1, 0xfffffffeu, &n))
				goto bad;
			*nsid = (uint32_t)n;
		} else if (!strcmp(kv, "zone")) {
			if (zdev_parse_num(v, 4096, 1ull << 40, &n) || n % 4096)
				goto bad;
			*zone_bytes = n;
		} else {
			snprintf(err, errlen, "unknown FTL option '%s' (op, gc, unit, format, ck, nsid, zone)", kv);
			return -EINVAL;
		}
		continue;
bad:
		snprintf(err, errlen, "FTL option %s=%s: expected %s", kv, v,
			 !strcmp(kv, "op") ? "a percentage 1..90" : !strcmp(kv, "gc") ? "greedy or cb" :
			 !strcmp(kv, "unit") ? "1..63 pages" : !strcmp(kv, "format") ? "0 or 1" :
			 !strcmp(kv, "ck") ? "a percentage 1..100" : !strcmp(kv, "nsid") ? "a namespace id" :
			 "a size, a multiple of 4K");
		return -EINVAL;
	}
	return 0;
}
