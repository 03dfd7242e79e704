# Helpers for tests/bench/*.sh (sourced).  Every figure is a ratio against a
# baseline measured in the same run, wall and CPU time side by side (CPU time
# is what a loaded box disturbs least).
#   BENCH_REPS (3) runs per measurement, best of them.
#   BENCH_SUMMARY: the file the summary table's rows go to (bench.sh sets it).
REPS=${BENCH_REPS:-3}
SUMMARY=${BENCH_SUMMARY:-/dev/null}

# measure CMD...: sets M_WALL M_CPU M_RSS (MiB) M_RC
measure() {
	read -r M_WALL M_CPU M_RSS M_RC < <(python3 tests/bench/run1.py "$REPS" "$@")
}

# verdict WHAT FIGURE TARGET MET: one row of the summary table (MET: met,
# not met, or - for a figure without a target)
verdict() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$SUMMARY"
}

# ratio LABEL OURS_WALL OURS_CPU BASE_WALL BASE_CPU TARGET [RSS BUDGET_MIB]
# prints one line: label, both times, wall and CPU ratios, target, RSS.
# TARGET "<= Nx wall" or "<= Nx CPU" is judged on that ratio and goes to the
# summary (with the RSS against its budget); "-" is shown only.
ratio() {
	python3 - "$SUMMARY" "$@" <<'PY'
import sys
summ, a = sys.argv[1], sys.argv[2:]
label, ow, oc, bw, bc, tgt = a[0], float(a[1]), float(a[2]), float(a[3]), float(a[4]), a[5]
rw = ow / bw if bw > 0 else float("inf")
rc = oc / bc if bc > 0 else float("inf")
line = "%-52s ours %7.3f s (CPU %7.3f)  base %7.3f s (CPU %7.3f)  ratio %5.2fx (CPU %5.2fx)  target %s" % (
    label, ow, oc, bw, bc, rw, rc, tgt)
rows = []
if tgt.startswith("<="):
    lim, what = float(tgt.split()[1].rstrip("x")), tgt.split()[2]
    fig = rw if what == "wall" else rc
    rows.append((label + " (" + what + ")", "%.2fx" % fig, tgt, "met" if fig <= lim else "NOT met"))
if len(a) > 7:
    rss, bud = float(a[6]), float(a[7])
    line += "  RSS %.0f MiB (budget %.0f)" % (rss, bud)
    rows.append((label + ": peak RSS", "%.0f MiB" % rss, "<= %.0f MiB" % bud,
                 "met" if rss <= bud else "NOT met"))
print(line)
with open(summ, "a") as f:
    for r in rows:
        f.write("\t".join(r) + "\n")
PY
}

# budget BYTES: the RSS budget in MiB (5% of the input + 32 MiB)
budget() { python3 -c "print('%.0f' % ($1 * 0.05 / 2**20 + 32))"; }

load() { cut -d' ' -f1-3 /proc/loadavg; }

# warm_cache LABEL FILE: `check` loading FILE's saved scan (a warm cache in a
# directory of the bench's own) against `check --no-cache` on the same file,
# as the median of paired CPU ratios (pair.py), judged "<= 0.1x CPU": a cache
# must cost far less than the scan it saves.  The scan is saved once, then
# every run must load it: the saved file keeps its inode (a load only touches
# it; a save renames a new file over it), else the row says "not loaded".
warm_cache() {
	# absolute: a relative XDG_CACHE_HOME is ignored (scancache.c, as the
	# XDG base directory spec says), and BENCH_DIR defaults to a relative one
	local label=$1 f=$2 c age ino0 ino1 cw cn ww wn r
	c=$(realpath -m "$out")/scancache
	rm -rf "$c"
	# an input changed within 2 s is not saved (scancache.c, racy)
	age=$(($(date +%s) - $(stat -c %Z "$f")))
	[ "$age" -ge 3 ] || sleep $((3 - age))
	XDG_CACHE_HOME="$c" "$TM" check "$f" >/dev/null 2>&1
	ino0=$(stat -c %i "$c"/tracemerge/*.tmscan 2>/dev/null)
	read -r cw cn ww wn _ r < <(XDG_CACHE_HOME="$c" python3 tests/bench/pair.py "$REPS" \
		"$TM check $f" "$TM check --no-cache $f")
	ino1=$(stat -c %i "$c"/tracemerge/*.tmscan 2>/dev/null)
	rm -rf "$c"
	if [ -z "$ino0" ] || [ "$ino0" != "$ino1" ]; then
		echo "$label: warm cache vs --no-cache: the saved scan was not loaded"
		verdict "$label: warm scan cache / --no-cache (CPU)" "not loaded" "<= 0.1x CPU" "NOT met"
		return
	fi
	python3 - "$label" "$cw" "$cn" "$ww" "$wn" "$r" "$SUMMARY" <<'PY'
import sys
label, (cw, cn, ww, wn, r), summ = sys.argv[1], map(float, sys.argv[2:7]), sys.argv[7]
print("%-52s warm %7.3f s CPU (wall %7.3f)  --no-cache %7.3f s CPU (wall %7.3f)  paired CPU ratio %5.2fx  target <= 0.1x"
      % (label + ", warm cache", cw, ww, cn, wn, r))
with open(summ, "a") as f:
    f.write("%s: warm scan cache / --no-cache (CPU)\t%.2fx\t<= 0.1x CPU\t%s\n"
            % (label, r, "met" if r <= 0.1 else "NOT met"))
PY
}
