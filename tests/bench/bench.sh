#!/usr/bin/env bash
# make bench: issue 10's figures, each a ratio against a baseline measured on
# the same files in the same run, CPU time beside wall time, peak RSS against
# the budget (5% of the input + 32 MiB), the load average; a summary table at
# the end says met / not met per target.
#   tests/bench/bench.sh [BUILD_DIR]      (make bench BENCH_MB=32: a short run)
#   BENCH_MB (default 256) sizes every generated input;
#   BENCH_SIZES (default BENCH_MB) the proto and text sizes in MiB, e.g.
#     BENCH_SIZES="64 256 1024 2048" for every shape at 4 sizes;
#   BENCH_SECTIONS (default "proto edits views containers many big text tp");
#   BENCH_SHAPES (proto shapes, see proto.sh); BENCH_MEMBERS (default
#     "1 10 100 1000") the member counts of containers; BENCH_MANY (10000)
#     and BENCH_MANY_KIB (16) the many-members TAR; BENCH_BIG_GIB (10) the
#     big TAR's size (0 skips it); BENCH_REPS (3) runs per
#     figure; BENCH_DIR (tests/bench/out) the generated inputs (removed);
#   TP=path/to/trace_processor_shell adds its `util merge` (section tp).
# Sections: proto.sh (proto shapes, scan and one edit) runs as a script;
# edits.sh, views.sh, containers.sh, many.sh, big.sh and text.sh are sourced (lib.sh).
# The summary is also written to BENCH_DIR/summary.md.
set -u
B=${1:-build/rel}
TM=$B/tracemerge
GEN=$B/tools/bench_tm
MB=${BENCH_MB:-256}
SIZES=${BENCH_SIZES:-$MB}
out=${BENCH_DIR:-tests/bench/out}
mkdir -p "$out"
[ -x "$TM" ] && [ -x "$GEN" ] || { echo "bench: build $TM and $GEN first (make all)"; exit 1; }
export BENCH_SUMMARY=$out/summary.tsv BENCH_DIR=$out BENCH_SIZES=$SIZES
: >"$BENCH_SUMMARY"
. tests/bench/lib.sh
load0=$(load)
echo "load average: $load0; $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "BENCH_MB=$MB BENCH_SIZES=\"$SIZES\" BENCH_REPS=$REPS"
for sect in ${BENCH_SECTIONS:-proto edits views containers many big text tp}; do
	echo
	echo "== $sect (load average $(load))"
	case $sect in
	edits | views | containers | many | big | text) . "tests/bench/$sect.sh" ;;
	proto) bash tests/bench/proto.sh "$B" ;;
	tp)
		if [ -n "${TP:-}" ] && [ -x "$TP" ]; then
			"$GEN" gen-proto "$out/a.pftrace" "$MB" && "$GEN" gen-proto "$out/b.pftrace" 8 || exit 1
			measure "$TP" util merge -o "$out/tp.tar" "$out/b.pftrace" "$out/a.pftrace"
			tw=$M_WALL tc=$M_CPU
			measure "$TM" merge -o "$out/tm.tar" "$out/b.pftrace" "$out/a.pftrace"
			ratio "merge vs trace_processor util merge" "$M_WALL" "$M_CPU" "$tw" "$tc" "-"
			rm -f "$out"/a.pftrace "$out"/b.pftrace "$out"/tp.tar "$out"/tm.tar
		else
			echo "trace_processor comparison skipped: set TP=path/to/trace_processor_shell"
		fi
		;;
	*) echo "no section $sect" ;;
	esac
done
load1=$(load)
echo
echo "load average at the end: $load1"
python3 - "$BENCH_SUMMARY" "$out/summary.md" "$MB" "$SIZES" "$load0" "$load1" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
mb, sizes, l0, l1 = sys.argv[3:7]
w = [max([len(r[i]) for r in rows] + [len(h)]) for i, h in enumerate(("what", "figure", "target", "met"))]
lines = ["make bench BENCH_MB=%s BENCH_SIZES=\"%s\"; load average %s at the start, %s at the end" % (mb, sizes, l0, l1), "",
         "| %s | %s | %s | %s |" % tuple(h.ljust(w[i]) for i, h in enumerate(("what", "figure", "target", "met"))),
         "|%s|%s|%s|%s|" % tuple("-" * (x + 2) for x in w)]
for r in rows:
    lines.append("| %s | %s | %s | %s |" % tuple(c.ljust(w[i]) for i, c in enumerate(r)))
met = sum(r[3] == "met" for r in rows)
nmet = sum(r[3] == "NOT met" for r in rows)
lines += ["", "%d targets met, %d not met" % (met, nmet)]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n== summary")
print("\n".join(lines))
PY
