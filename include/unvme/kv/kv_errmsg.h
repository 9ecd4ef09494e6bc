/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why a KV SDK call failed, in words: an addition of this SDK beside the original's API
 * (kv_apis.h keeps the original's declarations unchanged). docs/kv-sdk.md, "Results and
 * errors".
 *
 *   if (kv_sdk_init(KV_SDK_INIT_FROM_JSON, "kv.json") != KV_SUCCESS)
 *           fprintf(stderr, "kv_sdk_init: %s\n", kv_errmsg());
 *
 * prints e.g. "kv_sdk_init: config file 'kv.json': device_description[0].dev_id
 * '0000:02:00.0' cannot be opened: 0000:02:00.0: no such PCI device".
 */
#ifndef UNVME_KV_ERRMSG_H
#define UNVME_KV_ERRMSG_H

#include "kv_apis.h" /* KV_API, and the calls whose failures this explains */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The reason for the calling thread's last failed SDK call: the file, key and cause of a
 * failed kv_sdk_init or kv_sdk_load_option (a missing file, bad JSON, a value out of range,
 * a device that does not open and why), or the argument a call refused. "" when the last
 * call did not fail, or failed with a device status its kv_result names by itself. Like
 * errno, read it right after the failed call, on the same thread; the string stays valid
 * until the thread's next SDK call.
 */
KV_API const char *kv_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif
