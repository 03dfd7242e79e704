/* SPDX-License-Identifier: MIT */
/* bench_json [MB]: generate N MB of Chrome JSON in memory and report the
 * throughput of tm_scan_json (fed in 256 KiB blocks, as stream.c does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scan.h"

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 256;
	size_t want = mb << 20;
	struct tm_buf b;
	tm_buf_init(&b);
	tm_buf_adds(&b, "{\"traceEvents\":[\n");
	for (unsigned i = 0; b.len < want; i++) {
		tm_buf_addf(&b,
			    "{\"name\":\"RenderFrameImpl::OnMessage%u\",\"cat\":\"toplevel,ipc\","
			    "\"ph\":\"X\",\"ts\":%u.%03u,\"dur\":%u,\"pid\":%u,\"tid\":%u,"
			    "\"args\":{\"src_file\":\"../../ipc/ipc_mojo.cc\",\"src_func\":\"Accept\","
			    "\"nested\":{\"n\":[1,2,3]}}},\n",
			    i % 97, 1000 + i, i % 1000, i % 500, 100 + i % 7, 200 + i % 13);
	}
	tm_buf_adds(&b, "{}],\"displayTimeUnit\":\"ns\"}\n");
	for (int keep = 0; keep < 2; keep++) {
		struct tm_scan sc;
		struct tm_error err;
		struct tm_scan_ctl ctl = { .keep_events = keep };
		tm_scan_init(&sc, TM_FMT_JSON);
		double t0 = now();
		enum tm_status rc = tm_scan_json_mem(b.data, b.len, 256u * 1024u, &sc, &ctl, &err);
		double dt = now() - t0;
		fprintf(stdout, "%s: %zu MB, %llu events, %.1f MB/s (%s)\n",
			keep ? "keep_events" : "scan", b.len >> 20,
			(unsigned long long)sc.n_events, (double)b.len / 1048576.0 / dt,
			rc == TM_OK && !sc.failed ? "ok" : "FAILED");
		tm_scan_fini(&sc);
	}
	tm_buf_fini(&b);
	return 0;
}
