/* SPDX-License-Identifier: BSD-3-Clause */
/* Log-linear latency histogram: the parts that are not on the recording fast path. */
#include "histogram.h"

#include <math.h>
#include <string.h>

void lat_hist_init(struct lat_histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX; /* so the first recorded value becomes the minimum */
}

void lat_hist_merge(struct lat_histogram *dst, const struct lat_histogram *src)
{
	for (unsigned r = 0; r < LAT_HIST_RANGES; r++)
		for (unsigned s = 0; s < LAT_HIST_SUB; s++)
			dst->bucket[r][s] += src->bucket[r][s];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

/* True when v lands in bucket (r, s) or an earlier one. */
static int lands_at_or_before(uint64_t v, unsigned r, unsigned s)
{
	unsigned vr, vs;
	lat_hist_index(v, &vr, &vs);
	return vr < r || (vr == r && vs <= s);
}

/*
 * The largest value that lat_hist_index() puts in bucket (r, s) or earlier. The bucket layout
 * is defined by lat_hist_index() alone, which maps values to buckets in increasing order, so a
 * binary search over that function finds the edge without a second copy of the layout here.
 */
static uint64_t bucket_upper_edge(unsigned r, unsigned s)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	if (lands_at_or_before(hi, r, s))
		return hi;
	/* Invariant: lo lands at or before (r, s), hi lands after it. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (lands_at_or_before(mid, r, s))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t lat_hist_percentile(const struct lat_histogram *h, double pct)
{
	if (!h->count)
		return 0;
	if (pct <= 0)
		return h->min;
	if (pct > 100)
		pct = 100;
	/* The rank of the sample at pct: the smallest n with n >= pct% of count. Decimal
	 * percentages such as 99.99 are not exact in binary, so a hair of tolerance keeps an
	 * exact rank (99990 of 100000) from rounding up to the next one. */
	double exact = pct / 100.0 * (double)h->count;
	uint64_t rank = (uint64_t)ceil(exact - exact * 1e-12);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;

	uint64_t seen = 0;
	for (unsigned r = 0; r < LAT_HIST_RANGES; r++) {
		for (unsigned s = 0; s < LAT_HIST_SUB; s++) {
			seen += h->bucket[r][s];
			if (seen < rank)
				continue;
			/* The bucket's upper edge bounds every sample in it; the exact extremes
			 * are known, so the answer never leaves [min, max]. */
			uint64_t v = bucket_upper_edge(r, s);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max; /* unreachable while count matches the buckets */
}

double lat_hist_mean(const struct lat_histogram *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
