# Text formats (sourced by bench.sh; uses lib.sh): two systrace shapes
# (systrace: gen-systrace's two kinds of line; atrace: gen-atrace, the shape
# of a phone's atrace capture with a dozen kinds of event) and two Chrome JSON
# shapes (json: the short X events of gen-json; chrome: gen-chrome's DevTools
# export with args objects, long names and mixed phases) at each of
# BENCH_SIZES MiB against wc -l and cat of the same file; the target
# (>= 1 GB/s, issue 27) is judged per CPU second, wall beside it.  Two more
# formats (issue 24): perf_text (gen-perf-text, `perf script -g` samples)
# and gecko (gen-gecko, a Firefox Profiler profile of samples and markers,
# which trace_processor and tracemerge read whole: its RSS row shows it;
# tracemerge predicts none over 64 MiB, so its row is at most 48 MiB).
# BENCH_TEXT picks the shapes (default all).
for mb in $SIZES; do
	for f in ${BENCH_TEXT:-s.systrace a.atrace t.json c.chrome p.perf g.gecko}; do
		case $f in
		s.systrace) "$GEN" gen-systrace "$out/$f" "$mb" ;;
		a.atrace) "$GEN" gen-atrace "$out/$f" "$mb" ;;
		t.json) "$GEN" gen-json "$out/$f" "$mb" ;;
		c.chrome) "$GEN" gen-chrome "$out/$f" "$mb" ;;
		p.perf) "$GEN" gen-perf-text "$out/$f" "$mb" ;;
		# gecko: at most 48 MiB, under the size tracemerge predicts (64 MiB)
		g.gecko) "$GEN" gen-gecko "$out/$f" "$((mb < 48 ? mb : 48))" ;;
		*) echo "no text shape $f"; false ;;
		esac || exit 1
		p="$out/$f"
		size=$(stat -c %s "$p")
		lab=$(((size + (1 << 19)) >> 20)) # MiB as generated
		cat "$p" >/dev/null
		measure wc -l "$p"
		ww=$M_WALL wc=$M_CPU
		measure cat "$p"
		cw=$M_WALL cc=$M_CPU
		measure "$TM" check --no-cache "$p"
		ratio "${f#*.} $lab MiB vs wc -l" "$M_WALL" "$M_CPU" "$ww" "$wc" "-" "$M_RSS" "$(budget "$size")"
		ratio "${f#*.} $lab MiB vs cat" "$M_WALL" "$M_CPU" "$cw" "$cc" "-"
		python3 - "${f#*.} $lab MiB" "$size" "$M_WALL" "$M_CPU" "$SUMMARY" <<'PY'
import sys
what, size, w, c, summ = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
g = size / c / 1e9 if c > 0 else 0
print("%s: %.2f GB per CPU second, %.2f GB/s wall" % (what, g, size / w / 1e9 if w > 0 else 0))
with open(summ, "a") as f:
    f.write("%s: GB per CPU second (wall %.2f GB/s)\t%.2f\t>= 1.0\t%s\n"
            % (what, size / w / 1e9 if w > 0 else 0, g, "met" if g >= 1.0 else "NOT met"))
PY
		rm -f "$p"
	done
done
