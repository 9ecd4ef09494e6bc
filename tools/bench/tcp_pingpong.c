/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_pingpong: the floor under NVMe/TCP's added latency on this machine. Two threads pinned
 * to two CPUs exchange the bytes of one 4 KiB NVMe/TCP I/O over a loopback TCP connection,
 * both busy-polling non-blocking sockets as our host and target do, without any NVMe work:
 *   read:  72 bytes (command capsule) one way, 24 + 4096 + 24 (C2HData, response) back;
 *   write: 72 + 4096 (capsule with in-capsule data) one way, 24 (response) back.
 * What our transport adds to a local I/O, less this, is our software's share.
 *
 *   tcp_pingpong [CPU_A CPU_B [ROUND_TRIPS]]
 *       prints {"read":{"avg_us":..,"p50_us":..,"p99_us":..},"write":{...}}
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CMD 72
#define HDR 24
#define DATA 4096

static long rounds = 20000;
static int cpu_a, cpu_b = 1;
static int listen_fd;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "tcp_pingpong: cannot pin to CPU %d (%s), unpinned\n", cpu, strerror(errno));
}

static void xfer(int fd, char *buf, size_t len, int tx)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = tx ? send(fd, buf + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL)
			       : recv(fd, buf + done, len - done, MSG_DONTWAIT);
		if (n > 0)
			done += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			perror("tcp_pingpong: socket");
			exit(1);
		}
	}
}

static void nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* the "target": answers each kind of request with its reply, 2 * rounds times */
static void *responder(void *arg)
{
	(void)arg;
	pin(cpu_b);
	int fd = accept(listen_fd, NULL, NULL);
	if (fd < 0) {
		perror("tcp_pingpong: accept");
		exit(1);
	}
	nodelay(fd);
	static char buf[CMD + DATA + 2 * HDR];
	for (long i = 0; i < rounds; i++) { /* reads */
		xfer(fd, buf, CMD, 0);
		xfer(fd, buf, HDR + DATA + HDR, 1);
	}
	for (long i = 0; i < rounds; i++) { /* writes */
		xfer(fd, buf, CMD + DATA, 0);
		xfer(fd, buf, HDR, 1);
	}
	close(fd);
	return NULL;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *name, double *lat, const char *sep)
{
	double sum = 0;
	for (long i = 0; i < rounds; i++)
		sum += lat[i];
	qsort(lat, (size_t)rounds, sizeof(*lat), cmp);
	printf("\"%s\":{\"avg_us\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f}%s", name, sum / (double)rounds,
	       lat[rounds / 2], lat[rounds * 99 / 100], sep);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tcp_pingpong [CPU_A CPU_B [ROUND_TRIPS >= 100]]\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 || argc > 4) {
		usage(stderr);
		return 2;
	}
	if (argc >= 3)
		cpu_a = atoi(argv[1]), cpu_b = atoi(argv[2]);
	if (argc >= 4)
		rounds = atol(argv[3]);
	if (rounds < 100) {
		usage(stderr);
		return 2;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(listen_fd, 1) || getsockname(listen_fd, (struct sockaddr *)&sa, &sl)) {
		perror("tcp_pingpong: listen on 127.0.0.1");
		return 1;
	}
	pthread_t th;
	pthread_create(&th, NULL, responder, NULL);
	pin(cpu_a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("tcp_pingpong: connect");
		return 1;
	}
	nodelay(fd);
	static char buf[CMD + DATA + 2 * HDR];
	double *rd = calloc((size_t)rounds, sizeof(double)), *wr = calloc((size_t)rounds, sizeof(double));
	if (!rd || !wr)
		return 1;
	for (long i = 0; i < rounds; i++) {
		double t0 = now_us();
		xfer(fd, buf, CMD, 1);
		xfer(fd, buf, HDR + DATA + HDR, 0);
		rd[i] = now_us() - t0;
	}
	for (long i = 0; i < rounds; i++) {
		double t0 = now_us();
		xfer(fd, buf, CMD + DATA, 1);
		xfer(fd, buf, HDR, 0);
		wr[i] = now_us() - t0;
	}
	pthread_join(th, NULL);
	close(fd);
	printf("{\"cpu_a\":%d,\"cpu_b\":%d,\"round_trips\":%ld,", cpu_a, cpu_b, rounds);
	report("read", rd, ",");
	report("write", wr, "}\n");
	free(rd);
	free(wr);
	return 0;
}
