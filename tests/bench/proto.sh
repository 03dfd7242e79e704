#!/usr/bin/env bash
# make bench, proto shapes (issue 10's table, and issue 27's realistic track
# and ftrace-percpu): for each shape and size, `check` against two baselines
# in the same run - cat (the page-cache ceiling) and bench_tm walk (a plain
# varint walker: every field of every packet once, one level into the
# messages a scanner reads, strings skipped) - as paired ratios
# of CPU time (user+sys; tests/bench/pair.py) with wall time beside them, peak
# RSS against the budget (5% of the input + 32 MiB), and the CPU time of one
# re-evaluation after an offset edit that drops events (bench_tm reeval, the
# workbench's evaluation path), wall time beside it; te20 also reopened from
# a warm scan cache against --no-cache (lib.sh warm_cache).
#   tests/bench/proto.sh [BUILD_DIR]
#   BENCH_MB (default 256) or BENCH_SIZES="64 256 1024 2048" (MiB);
#   BENCH_SHAPES="te20 te37 interned seqs ftrace compact unmatched track ftrace-percpu";
#   BENCH_REPS (3);
#   BENCH_SUMMARY: a file the summary rows are appended to (bench.sh);
#   BENCH_DIR (default tests/bench/out) holds the generated inputs, removed at
#   the end unless BENCH_KEEP=1.
set -u
B=${1:-build/rel}
TM=$B/tracemerge
GEN=$B/tools/bench_tm
SIZES=${BENCH_PROTO_SIZES:-${BENCH_SIZES:-${BENCH_MB:-256}}}
SHAPES=${BENCH_SHAPES:-te20 te37 interned seqs ftrace compact unmatched track ftrace-percpu}
REPS=${BENCH_REPS:-3}
out=${BENCH_DIR:-tests/bench/out}
mkdir -p "$out"
[ -x "$TM" ] && [ -x "$GEN" ] || { echo "proto bench: build $TM and $GEN first"; exit 1; }
. tests/bench/lib.sh

echo "proto shapes: load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $(nproc) cpus"
"$GEN" gen-proto "$out/ref.pftrace" 8 || exit 1
printf '%-13s %5s %6s %8s %8s %8s %8s %8s %8s %7s %7s %9s %9s  %s\n' shape MiB 'B/pkt' 'Mevents' \
	'GB/s cpu' 'cpu/cat' 'cpu/walk' 'wall/cat' 'wall/wk' 'RSS' 'budget' 'edit cpu' 'edit wall' 'load'
for mb in $SIZES; do
	for shape in $SHAPES; do
		f="$out/$shape-$mb.pftrace"
		[ -s "$f" ] || "$GEN" gen-shape "$shape" "$f" "$mb" || exit 1
		size=$(stat -c %s "$f")
		packets=$("$GEN" walk "$f" | cut -d' ' -f1)
		read -r c_chk c_cat w_chk w_cat peak r_cat < <(python3 tests/bench/pair.py "$REPS" "$TM check --no-cache $f" "cat $f")
		read -r _ c_walk w_chk2 w_walk _ r_walk < <(python3 tests/bench/pair.py "$REPS" "$TM check --no-cache $f" "$GEN walk $f")
		read -r e_wall _ _ e_cpu _ events < <("$GEN" reeval 11 "$out/ref.pftrace" "$f")
		python3 - "$shape" "$size" "$packets" "$events" "$c_chk" "$w_chk" "$w_cat" "$peak" \
			"$r_cat" "$r_walk" "$w_chk2" "$w_walk" "$e_cpu" "$e_wall" "$(cut -d' ' -f1 /proc/loadavg)" \
			"${BENCH_SUMMARY:-/dev/null}" <<'PY'
import sys
shape, size, packets, events = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
c_chk, w_chk, w_cat, peak, r_cat, r_walk, w_chk2, w_walk, e_cpu, e_wall = map(float, sys.argv[5:15])
load, summ = sys.argv[15], sys.argv[16]
r = lambda a, b: "%.1fx" % (a / b) if b > 0 else "n/a"
budget = size * 0.05 / 2**20 + 32
over = [] if peak <= budget else ["RSS over budget"]
if r_walk > 1.3:
    over.append("cpu/walk > 1.3")
if e_cpu > 16000:
    over.append("edit > 16 ms")
print("%-13s %5.0f %6.1f %8.1f %8.2f %8s %8s %8s %8s %7.1f %7.1f %8.0fus %8.0fus  %s%s" % (
    shape, size / 2**20, size / max(packets, 1), events / 1e6, size / c_chk / 1e9 if c_chk else 0,
    "%.1fx" % r_cat, "%.1fx" % r_walk, r(w_chk, w_cat), r(w_chk2, w_walk), peak, budget, e_cpu, e_wall,
    load, "  (" + ", ".join(over) + ")" if over else ""))
what = "proto %s %.0f MiB" % (shape, size / 2**20)
ok = lambda b: "met" if b else "NOT met"
rows = [(what + ": check CPU / walker CPU", "%.2fx" % r_walk, "<= 1.3x", ok(r_walk <= 1.3)),
        (what + ": check CPU / cat CPU", "%.1fx" % r_cat, "<= 6x (wall %s)" % r(w_chk, w_cat), ok(r_cat <= 6)),
        (what + ": peak RSS", "%.0f MiB" % peak, "<= %.0f MiB" % budget, ok(peak <= budget))]
if shape in ("te20", "te37"):
    g = size / c_chk / 1e9 if c_chk else 0
    rows.append((what + ": GB per CPU second", "%.2f" % g, ">= 1.3", ok(g >= 1.3)))
# the target is 16 ms at 50 M events: below 50 M the time is scaled up
# linearly (an edit's cost grows at least with the events it replays)
scaled = e_cpu * max(1.0, 50e6 / max(events, 1))
rows.append((what + ": one edit's re-evaluation, CPU (%.1f M events)" % (events / 1e6),
             "%.0f us (%.1f ms at 50 M)" % (e_cpu, scaled / 1000), "< 16 ms at 50 M", ok(scaled < 16000)))
with open(summ, "a") as f:
    for row in rows:
        f.write("\t".join(row) + "\n")
PY
	done
done
echo "targets: cpu/walk <= 1.3x, cpu/cat <= 6x, TrackEvent >= 1.3 GB/s, RSS within budget, edit < 16 ms at 50 M events"
# te20 reopened from a warm scan cache against --no-cache (lib.sh warm_cache)
for mb in $SIZES; do
	case " $SHAPES " in *" te20 "*) warm_cache "proto te20 $mb MiB" "$out/te20-$mb.pftrace" ;; esac
done
# Not one of issue 10's shapes: bench_tm's clears (a clear and 500 names
# interned again every 1000 packets of a sequence).  Only its peak RSS is
# judged, against the same budget: it guards the interned names table, which
# grew with clears x names until 8dee844 (455.8 MiB at 256 MiB).
# BENCH_CLEARS=0 skips it.
if [ "${BENCH_CLEARS:-1}" != 0 ]; then
	for mb in $SIZES; do
		f=$out/clears-$mb.pftrace
		"$GEN" gen-shape clears "$f" "$mb" >/dev/null || exit 1
		cat "$f" >/dev/null
		measure "$TM" check --no-cache "$f"
		bud=$(budget "$(stat -c %s "$f")")
		echo "clears $mb MiB: check --no-cache CPU $M_CPU s, peak RSS $M_RSS MiB (budget $bud)"
		python3 - "$mb" "$M_RSS" "$bud" "$M_RC" "$SUMMARY" <<'PY'
import sys
mb, rss, bud, rc, summ = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
ok = rss <= bud and rc in ("0", "1")
with open(summ, "a") as f:
    f.write("proto clears %s MiB (our own row): peak RSS\t%.0f MiB\t<= %.0f MiB\t%s\n"
            % (mb, rss, bud, "met" if ok else "NOT met"))
PY
		rm -f "$f"
	done
fi
echo "ratios are medians of paired runs (A B A B ...); RSS is the largest peak of check"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end"
[ "${BENCH_KEEP:-0}" = 1 ] || rm -f "$out"/*.pftrace
