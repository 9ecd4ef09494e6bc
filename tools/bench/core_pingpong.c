/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core_pingpong: how long a cache line takes to move between two CPUs, measured by two
 * threads pinned to them that take turns writing one line each (a round trip is two moves).
 *
 * The benchmarks print it next to every figure that depends on two cores talking (async
 * completion threads, device threads): on the shared VMs here it is 50 ns in one run and
 * 250 ns in the next, as the hypervisor places the virtual CPUs, and such figures move with it.
 *
 *   core_pingpong [CPU_A CPU_B [ROUND_TRIPS]]     prints {"cpu_a":..,"cpu_b":..,"one_way_ns":..}
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct line {
	_Alignas(64) _Atomic unsigned long v;
};

static struct line ping, pong;
static long rounds = 1000000;

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void *responder(void *arg)
{
	pin(*(int *)arg); /* checked by main */
	for (unsigned long i = 1; i <= (unsigned long)rounds; i++) {
		while (atomic_load_explicit(&ping.v, memory_order_acquire) != i)
			;
		atomic_store_explicit(&pong.v, i, memory_order_release);
	}
	return NULL;
}

static int parse(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: core_pingpong [CPU_A CPU_B [ROUND_TRIPS]]\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	long a = 0, b = 1;
	if (argc != 1 && argc != 3 && argc != 4) {
		usage(stderr);
		return 2;
	}
	if (argc >= 3 && (parse(argv[1], 0, CPU_SETSIZE - 1, &a) ||
			  parse(argv[2], 0, CPU_SETSIZE - 1, &b) || a == b)) {
		fprintf(stderr, "%s: CPU_A and CPU_B must be two different CPU numbers\n", argv[0]);
		return 2;
	}
	if (argc == 4 && parse(argv[3], 1000, 1000000000L, &rounds)) {
		fprintf(stderr, "%s: ROUND_TRIPS must be 1000..1000000000\n", argv[0]);
		return 2;
	}
	int cpu_a = (int)a, cpu_b = (int)b;
	/* both CPUs checked here: a responder that cannot run would leave this thread waiting */
	int rc = 0;
	int cpus[2] = { cpu_b, cpu_a };
	for (int i = 0; i < 2 && !rc; i++) {
		rc = pin(cpus[i]);
		if (rc)
			fprintf(stderr, "%s: cannot run on CPU %d: %s\n", argv[0], cpus[i],
				strerror(-rc));
	}
	if (rc)
		return 1;
	pthread_t t;
	if (pthread_create(&t, NULL, responder, &cpu_b)) {
		fprintf(stderr, "%s: cannot start a thread\n", argv[0]);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 1; i <= (unsigned long)rounds; i++) {
		atomic_store_explicit(&ping.v, i, memory_order_release);
		while (atomic_load_explicit(&pong.v, memory_order_acquire) != i)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("{\"cpu_a\": %d, \"cpu_b\": %d, \"one_way_ns\": %.1f}\n", cpu_a, cpu_b,
	       ns / (double)rounds / 2.0);
	return 0;
}
