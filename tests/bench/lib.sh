# Helpers for tests/bench/*.sh (sourced by bench.sh).  Every figure is a
# ratio against a baseline measured in the same run, wall and CPU time side
# by side (CPU time is what a loaded box disturbs least).
#   BENCH_REPS (3) runs per measurement, best of them.
REPS=${BENCH_REPS:-3}

# measure CMD...: sets M_WALL M_CPU M_RSS (MiB) M_RC
measure() {
	read -r M_WALL M_CPU M_RSS M_RC < <(python3 tests/bench/run1.py "$REPS" "$@")
}

# ratio LABEL OURS_WALL OURS_CPU BASE_WALL BASE_CPU TARGET [RSS BUDGET_MIB]
# prints one line: label, both times, wall and CPU ratios, target, RSS.
ratio() {
	python3 - "$@" <<'PY'
import sys
a = sys.argv[1:]
label, ow, oc, bw, bc, tgt = a[0], float(a[1]), float(a[2]), float(a[3]), float(a[4]), a[5]
rw = ow / bw if bw > 0 else float("inf")
rc = oc / bc if bc > 0 else float("inf")
line = "%-44s ours %7.3f s (CPU %7.3f)  base %7.3f s (CPU %7.3f)  ratio %5.2fx (CPU %5.2fx)  target %s" % (
    label, ow, oc, bw, bc, rw, rc, tgt)
if len(a) > 7:
    line += "  RSS %s MiB (budget %s)" % (a[6], a[7])
print(line)
PY
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
