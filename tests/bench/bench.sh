#!/usr/bin/env bash
# make bench: ratios measured on the same files in one run.
#   BENCH_MB (default 512) sizes the generated proto; TP=path/to/trace_processor_shell
#   adds its `util merge` beside ours.
set -u
B=${1:-build/rel}
TM=$B/tracemerge
GEN=$B/tools/bench_tm
MB=${BENCH_MB:-512}
out=tests/bench/out
mkdir -p "$out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$GEN" gen-proto "$out/a.pftrace" "$MB" || exit 1
"$GEN" gen-proto "$out/b.pftrace" 8 || exit 1
"$GEN" gen-json "$out/app.json" $((MB / 4)) || exit 1
gzip -kf "$out/a.pftrace"

best() { # best wall seconds of 3 runs of "$@"
	local b=999999 t
	for _ in 1 2 3; do
		t=$( { /usr/bin/env time -f %e "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
		[ -z "$t" ] && t=$(python3 -c 'import subprocess,sys,time;a=time.time();subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);print("%.3f"%(time.time()-a))' "$@")
		b=$(python3 -c "print(min($b,$t))")
	done
	echo "$b"
}
rss() { # peak RSS in MiB of "$@"
	python3 -c 'import resource,subprocess,sys
subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
print("%.1f"%(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024))' "$@"
}
size=$(stat -c %s "$out/a.pftrace")
cat "$out/a.pftrace" >/dev/null
t_cat=$(best cat "$out/a.pftrace")
t_chk=$(best "$TM" check "$out/a.pftrace")
t_gz=$(best gzip -dc "$out/a.pftrace.gz")
t_chkgz=$(best "$TM" check "$out/a.pftrace.gz")
jsize=$(stat -c %s "$out/app.json")
t_json=$(best "$TM" check "$out/app.json")
r_chk=$(rss "$TM" check "$out/a.pftrace")
events=$("$TM" check --json "$out/a.pftrace" | python3 -c 'import json,sys;print(json.load(sys.stdin)["files"][0]["events"])')
read -r re_med re_min re_drop < <("$GEN" reeval 21 "$out/b.pftrace" "$out/a.pftrace")
python3 - "$size" "$t_cat" "$t_chk" "$t_gz" "$t_chkgz" "$jsize" "$t_json" "$r_chk" "$events" "$re_med" "$re_min" <<'PY'
import sys
size,tcat,tchk,tgz,tchkgz,jsize,tjson,rss,ev,remed,remin=sys.argv[1:]
size=int(size);jsize=int(jsize);ev=int(ev)
f=float
print("proto %.0f MiB: cat %.3f s (%.2f GB/s), check %.3f s (%.2f GB/s): check/cat = %.1fx (target <= 6x)"%(
    size/2**20,f(tcat),size/f(tcat)/1e9,f(tchk),size/f(tchk)/1e9,f(tchk)/f(tcat)))
print("events: %d in %.3f s = %.1f M events/s"%(ev,f(tchk),ev/f(tchk)/1e6))
print("gzip: gzip -dc %.3f s, check %.3f s: ratio %.2fx (target <= 1.2x)"%(f(tgz),f(tchkgz),f(tchkgz)/f(tgz)))
print("json %.0f MiB: check %.3f s = %.0f MB/s (target >= 300 MB/s)"%(jsize/2**20,f(tjson),jsize/f(tjson)/1e6))
lim=size*0.05/2**20+32
print("peak RSS of check: %s MiB (target <= %.1f MiB = 5%% of size + 32 MiB)"%(rss,lim))
print("re-evaluation after an offset edit (%d events): median %.0f us, best %.0f us (target < 1000 us at 10 M events)"%(ev,f(remed),f(remin)))
PY
if [ -n "${TP:-}" ] && [ -x "$TP" ]; then
	t_tp=$(best "$TP" util merge -o "$out/tp.tar" "$out/b.pftrace" "$out/a.pftrace")
	t_us=$(best "$TM" merge -o "$out/tm.tar" "$out/b.pftrace" "$out/a.pftrace")
	echo "util merge: trace_processor $t_tp s, tracemerge $t_us s"
else
	echo "util merge comparison skipped: set TP=path/to/trace_processor_shell"
fi
# proto shapes (issue 10's table): tests/bench/proto.sh
tests/bench/proto.sh "$B"
