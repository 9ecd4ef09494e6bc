/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program written the way the original SDK's kv_perf is (our own code): it includes
 * <kv_trace.h>, "kv_apis.h", "kv_types.h" and "kvnvme.h", loads a JSON configuration into a
 * kv_sdk struct with kv_sdk_load_option (declared again here, as kv_perf does), starts the
 * SDK from the struct, runs one I/O thread per core of each device's core_mask pinned to it,
 * picks sync or async calls from kv_io_queue_type, and stores, retrieves (and checks) and
 * deletes keys with the driver-level calls on DEFAULT_IO_QUEUE_ID through function pointers
 * of kv_perf's types (or, with "L", the kv_* calls), timing each phase with KVNVME_TIMESTART
 * and KVNVME_TIMESTOP while another thread reads log page C0h. It prints the device
 * information before and after, one "ok ..." line per phase and thread, and SUCCESS or FAIL.
 *
 *   kv_perf_idiom CONFIG.json [L] [NUM_KEYS]
 */
#include <stdio.h>
#include <sys/queue.h>

#include <errno.h>
#include <getopt.h>
#include <sched.h>

#include <kv_trace.h>

#include "kv_apis.h"
#include "kv_types.h"
#include "kvnvme.h"

int kv_sdk_load_option(kv_sdk *sdk_opt, char *log_path);

#define MB (1024ULL * 1024ULL)
#define VALUE_SIZE 4096
#define KEY_SIZE 16

static kv_sdk sdk_opt;
static bool low_cmd_mode = true;
static unsigned num_keys = 500;

struct item {
	kv_pair pair;
	unsigned index;
	struct thread_data *td;
	TAILQ_ENTRY(item) link;
};

struct thread_data {
	int device, cpu;
	pthread_mutex_t mutex;
	unsigned submitted, called_back, failures, mismatches;
	TAILQ_HEAD(, item) items;
};

static struct thread_data threads[NR_MAX_SSD][MAX_CPU_CORES];
static int nthreads[NR_MAX_SSD];

static void io_done(kv_pair *kv, unsigned int result, unsigned int status)
{
	(void)result;
	struct item *it = kv->param.private_data;
	pthread_mutex_lock(&it->td->mutex);
	if (status != KV_SUCCESS)
		it->td->failures++;
	it->td->called_back++;
	pthread_mutex_unlock(&it->td->mutex);
}

/* kv_perf's function pointer types for the driver-level store and retrieve */
static int (*nvme_store)(uint64_t handle, int, kv_pair *kv);
static int (*nvme_store_async)(uint64_t handle, int, kv_pair *kv);
static int (*nvme_retrieve)(uint64_t handle, int, kv_pair *kv);
static int (*nvme_retrieve_async)(uint64_t handle, int, kv_pair *kv);

enum op { STORE, RETRIEVE, DELETE };
static const char *op_names[] = { "write", "read", "delete" };

static int submit(enum op op, bool async, uint64_t handle, kv_pair *kv)
{
	int qid = DEFAULT_IO_QUEUE_ID;
	if (low_cmd_mode) {
		switch (op) {
		case STORE: return async ? nvme_store_async(handle, qid, kv) : nvme_store(handle, qid, kv);
		case RETRIEVE:
			return async ? nvme_retrieve_async(handle, qid, kv) : nvme_retrieve(handle, qid, kv);
		case DELETE:
			return async ? kv_nvme_delete_async(handle, qid, kv) : kv_nvme_delete(handle, qid, kv);
		}
	}
	switch (op) {
	case STORE: return async ? kv_store_async(handle, kv) : kv_store(handle, kv);
	case RETRIEVE: return async ? kv_retrieve_async(handle, kv) : kv_retrieve(handle, kv);
	case DELETE: return async ? kv_delete_async(handle, kv) : kv_delete(handle, kv);
	}
	return -EINVAL;
}

static void *io_thread(void *arg)
{
	struct thread_data *td = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(td->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	uint64_t handle = sdk_opt.dev_handle[td->device];
	bool async = kv_io_queue_type(handle, td->cpu) == ASYNC_IO_QUEUE;
	for (int op = STORE; op <= DELETE; op++) {
		struct timeval time;
		KVNVME_TIMESTART(time);
		td->submitted = td->called_back = 0;
		struct item *it;
		TAILQ_FOREACH(it, &td->items, link) {
			kv_pair *kv = &it->pair;
			kv->value.length = VALUE_SIZE;
			if (op == RETRIEVE)
				memset(kv->value.value, 0, VALUE_SIZE);
			kv->param.io_option.store_option = op == STORE ? KV_STORE_DEFAULT
						       : op == RETRIEVE ? KV_RETRIEVE_DEFAULT
									: KV_DELETE_DEFAULT;
			kv->param.private_data = it;
			int ret = submit(op, async, handle, kv);
			if (ret == KV_SUCCESS) {
				td->submitted++;
				continue;
			}
			printf("%s failed: 0x%x\n", op_names[op], ret);
			td->failures++;
			break;
		}
		while (async && td->called_back < td->submitted)
			usleep(1);
		KVNVME_TIMESTOP(time);
		if (op == RETRIEVE)
			TAILQ_FOREACH(it, &td->items, link) {
				const char *v = it->pair.value.value;
				if (it->pair.value.length != VALUE_SIZE ||
				    v[0] != 'a' + (char)(it->index % 26) || v[VALUE_SIZE - 1] != v[0])
					td->mismatches++;
			}
		printf("ok %s device %d cpu %d %s n=%u failures=%u mismatches=%u\n", op_names[op],
		       td->device, td->cpu, async ? "async" : "sync", td->submitted, td->failures,
		       td->mismatches);
	}
	return NULL;
}

static volatile int run_log_thread = 1;
static int log_pages_read;

static void *log_thread(void *arg)
{
	(void)arg;
	char buffer[1024];
	int nr = 0, after_end = 0;
	uint64_t handles[NR_MAX_SSD];
	for (int core = 0; core < MAX_CPU_CORES; core++)
		if (kv_get_devices_on_cpu(core, &nr, handles) == KV_SUCCESS && nr > 0)
			break;
	/* at least one page, however soon the I/O threads are done (a loaded machine may not
	 * run this thread before they are) */
	while (nr > 0) {
		if (kv_get_log_page(handles[0], 0xC0, buffer, sizeof(buffer)) == KV_SUCCESS)
			log_pages_read++;
		if (!run_log_thread && (log_pages_read > 0 || ++after_end >= 1000))
			break; /* (a second of failures after the end: the check reports them) */
		usleep(1000);
	}
	return NULL;
}

static void show_device_info(const char *when)
{
	for (int d = 0; d < sdk_opt.nr_ssd; d++) {
		uint64_t h = sdk_opt.dev_handle[d];
		uint64_t total = kv_get_total_size(h), used = kv_get_used_size(h);
		double waf = (double)kv_get_waf(h);
		if (total == KV_ERR_INVALID_VALUE || used == KV_ERR_INVALID_VALUE) {
			printf("device %s %s: Can't load device info\n", sdk_opt.dev_id[d], when);
			continue;
		}
		printf("device %s %s: total %llu MB used %.2f %% waf %.1f\n", sdk_opt.dev_id[d], when,
		       (unsigned long long)(total / MB), (double)used / 100, waf / 10);
	}
}

static int make_items(struct thread_data *td, unsigned first)
{
	TAILQ_INIT(&td->items);
	pthread_mutex_init(&td->mutex, NULL);
	for (unsigned i = first; i < first + num_keys; i++) {
		struct item *it = calloc(1, sizeof(*it));
		if (!it)
			return -ENOMEM;
		it->index = i;
		it->td = td;
		it->pair.keyspace_id = KV_KEYSPACE_IODATA;
		it->pair.key.length = KEY_SIZE;
		it->pair.key.key = kv_zalloc(KEY_SIZE);
		it->pair.value.value = kv_zalloc(VALUE_SIZE);
		if (!it->pair.key.key || !it->pair.value.value)
			return -ENOMEM;
		snprintf(it->pair.key.key, KEY_SIZE, "%02d%03d%010u", td->device, td->cpu, i);
		memset(it->pair.value.value, 'a' + (int)(i % 26), VALUE_SIZE);
		it->pair.param.async_cb = io_done;
		TAILQ_INSERT_TAIL(&td->items, it, link);
	}
	return 0;
}

int main(int argc, char **argv)
{
	kv_sdk_info();
	const char *json = argc > 1 ? argv[1] : "./kv_perf_scripts/kv_perf_default_config.json";
	if (argc > 2 && strcmp(argv[2], "L") == 0)
		low_cmd_mode = false;
	if (argc > 3)
		num_keys = (unsigned)atoi(argv[3]);
	if (kv_sdk_load_option(&sdk_opt, (char *)json) != KV_SUCCESS) {
		printf("Fail to read json configuration file\n");
		return 1;
	}
	nvme_store = kv_nvme_write;
	nvme_store_async = kv_nvme_write_async;
	nvme_retrieve = kv_nvme_read;
	nvme_retrieve_async = kv_nvme_read_async;
	for (int d = 0; d < sdk_opt.nr_ssd; d++)
		for (int c = 0; c < MAX_CPU_CORES; c++)
			if (sdk_opt.dd_options[d].core_mask & (1ULL << c)) {
				threads[d][nthreads[d]].device = d;
				threads[d][nthreads[d]].cpu = c;
				nthreads[d]++;
			}
	sdk_opt.app_hugemem_size = (uint64_t)VALUE_SIZE * num_keys * 2;
	if (kv_sdk_init(KV_SDK_INIT_FROM_STR, &sdk_opt) != KV_SUCCESS) {
		printf("Can't initialize\n");
		return 1;
	}
	printf("ok init nr_ssd=%d mode=%s\n", sdk_opt.nr_ssd, low_cmd_mode ? "driver" : "sdk");
	show_device_info("before");
	int ret = 0;
	for (int d = 0; d < sdk_opt.nr_ssd; d++) {
		if (kv_format_device(sdk_opt.dev_handle[d], KV_FORMAT_USERDATA) != KV_SUCCESS) {
			printf("Error in formatting the device\n");
			ret = 1;
		}
		for (int t = 0; t < nthreads[d]; t++)
			if (make_items(&threads[d][t], (unsigned)t * num_keys) != 0)
				ret = 1;
	}
	pthread_t log_tid;
	bool logging = ret == 0 && pthread_create(&log_tid, NULL, log_thread, NULL) == 0;
	pthread_t tids[NR_MAX_SSD][MAX_CPU_CORES];
	for (int d = 0; d < sdk_opt.nr_ssd && ret == 0; d++)
		for (int t = 0; t < nthreads[d]; t++)
			pthread_create(&tids[d][t], NULL, io_thread, &threads[d][t]);
	for (int d = 0; d < sdk_opt.nr_ssd && ret == 0; d++)
		for (int t = 0; t < nthreads[d]; t++) {
			pthread_join(tids[d][t], NULL);
			if (threads[d][t].failures || threads[d][t].mismatches)
				ret = 1;
		}
	run_log_thread = 0;
	if (logging)
		pthread_join(log_tid, NULL);
	printf("ok log pages read=%s\n", log_pages_read > 0 ? "yes" : "no");
	show_device_info("after");
	for (int d = 0; d < sdk_opt.nr_ssd; d++)
		for (int t = 0; t < nthreads[d]; t++)
			while (!TAILQ_EMPTY(&threads[d][t].items)) {
				struct item *it = TAILQ_FIRST(&threads[d][t].items);
				TAILQ_REMOVE(&threads[d][t].items, it, link);
				kv_free(it->pair.key.key);
				kv_free(it->pair.value.value);
				free(it);
			}
	kv_sdk_finalize();
	printf(ret ? "FAIL\n" : "SUCCESS\n");
	return ret;
}
