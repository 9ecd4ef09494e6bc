/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why a key-value call failed when the device has no key-value namespace: the SDK sends its
 * commands to a block (NVM) namespace as well, and the device answers with a status that
 * names the command (Invalid Namespace, Invalid Opcode), not the namespace. The tools name
 * the namespace instead.
 */
#ifndef KVTOOLS_NS_HINT_H
#define KVTOOLS_NS_HINT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether devid reports namespaces and none of them is a key-value one; buf receives
 * "DEV has no key-value namespace: namespace N is a block namespace (the NVM command set)". */
bool kvt_no_kv_namespace(const char *devid, char *buf, size_t len);
/* Whether a result is one a key-value device gives a call it understood (a missing key, the
 * end of an iteration, ...): no reason to look at the namespaces then. */
bool kvt_result_is_kv_answer(int result);
/* The devices the SDK was started on (kvt_sdk_start*), for the explanation below. */
void kvt_remember_devices(const char *const *devids, int n);
void kvt_remember_devices_of(const char *json_path);
/* After a call failed with result: one line "prog: <why>; <advice>" on stderr for each
 * device the SDK runs on that has no key-value namespace. */
void kvt_explain_failure(const char *prog, int result);

#endif
