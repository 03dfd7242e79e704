#!/usr/bin/env bash
# make bench: ratios measured on the same files in one run.
#   BENCH_MB (default 256) sizes every generated input (BENCH_MB=16 runs small);
#   BENCH_SECTIONS (default "containers text proto tp") picks the sections;
#   BENCH_MEMBERS (default "1 10 100 1000") the member counts of containers;
#   BENCH_REPS (3) runs per figure; TP=path/to/trace_processor_shell adds its
#   `util merge` beside ours (section tp).
# Sections: tests/bench/containers.sh and text.sh are sourced (lib.sh's
# measure/ratio); tests/bench/proto.sh (proto shapes) runs as its own script.
# Every figure is a ratio against a baseline of the same run, wall and CPU
# time side by side, peak RSS against its budget.
set -u
B=${1:-build/rel}
TM=$B/tracemerge
GEN=$B/tools/bench_tm
MB=${BENCH_MB:-256}
out=tests/bench/out
mkdir -p "$out"
. tests/bench/lib.sh
echo "load average: $(load); $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for sect in ${BENCH_SECTIONS:-containers text proto tp}; do
	echo "== $sect (load average $(load))"
	case $sect in
	containers | text) . "tests/bench/$sect.sh" ;;
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
			echo "util merge comparison skipped: set TP=path/to/trace_processor_shell"
		fi
		;;
	*) echo "no section $sect" ;;
	esac
done
echo "load average at the end: $(load)"
