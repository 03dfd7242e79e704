# Edits with per-event detail kept (sourced by bench.sh; uses lib.sh): the
# workbench keeps every event's detail under 16 MiB of input (as check
# --events does).  Its own edit path evaluates the numbers only (the scans
# folded into runs: bench_tm reeval-wb), the events list follows on a thread
# of its own: that figure must be under a frame.  The events list itself
# (bench_tm reeval-events: what check --events and the workbench's thread
# compute) on the unmatched shape (one E in three without its B) and on
# te20, one edit's CPU time at a quarter of the size and at the size (at
# most 16 MiB): linear means the ratio stays near 4, a scan back to the
# start per unmatched E makes it 16.  The re-evaluation of every shape at
# BENCH_SIZES without per-event detail is in proto.sh's table.
e_hi=$((MB < 16 ? MB : 16))
e_lo=$((e_hi / 4 > 0 ? e_hi / 4 : 1))
for shape in unmatched te20; do
	for s in $e_lo $e_hi; do
		[ -s "$out/e-$shape-$s.pftrace" ] || "$GEN" gen-shape "$shape" "$out/e-$shape-$s.pftrace" "$s" || exit 1
	done
	# the workbench's figure on two files (a 1 MiB reference and the shape
	# in the rest), the second moved against the first by offsets of both
	# signs, half of it before zero with one sign (bench_tm reeval-wb)
	h=$((e_hi > 1 ? e_hi - 1 : 1))
	"$GEN" gen-proto "$out/e-$shape-a.pftrace" 1 || exit 1
	"$GEN" gen-shape "$shape" "$out/e-$shape-b.pftrace" "$h" || exit 1
	read -r wb_w _ _ wb_c _ _ < <("$GEN" reeval-wb 11 "$out/e-$shape-a.pftrace" "$out/e-$shape-b.pftrace")
	read -r ev_w _ _ ev_c _ _ < <("$GEN" reeval-wb-list 5 "$out/e-$shape-a.pftrace" "$out/e-$shape-b.pftrace")
	rm -f "$out/e-$shape-a.pftrace" "$out/e-$shape-b.pftrace"
	ld=$(load)
	echo "workbench edit, 1 MiB + $shape $h MiB (numbers; events list on a thread): ${wb_c} us CPU (wall ${wb_w} us); the events list its thread computes (dropped ones) ${ev_c} us CPU; load $ld"
	python3 - "$shape" "$h" "$wb_c" "$SUMMARY" <<'PY'
import sys
shape, h, c, summ = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
with open(summ, "a") as f:
    f.write("workbench edit, 1 MiB + %s %d MiB (details kept): CPU\t%.2f ms\t< 16 ms\t%s\n"
            % (shape, h, c / 1000, "met" if c < 16000 else "NOT met"))
PY
	read -r _ _ _ c_lo _ ev_lo < <("$GEN" reeval-events 5 "$out/e-$shape-$e_lo.pftrace")
	read -r w_hi _ _ c_hi _ ev_hi < <("$GEN" reeval-events 5 "$out/e-$shape-$e_hi.pftrace")
	python3 - "$shape" "$e_lo" "$e_hi" "$c_lo" "$c_hi" "$w_hi" "$ev_lo" "$ev_hi" "$SUMMARY" <<'PY'
import sys
shape, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c_lo, c_hi, w_hi = map(float, sys.argv[4:7])
ev_lo, ev_hi, summ = int(sys.argv[7]), int(sys.argv[8]), sys.argv[9]
grow = c_hi / c_lo if c_lo > 0 else float("inf")
want = ev_hi / ev_lo if ev_lo else 1
print("per-event detail (events list; check --events, the workbench's thread), %-9s one edit: %d MiB %.1f ms CPU, %d MiB %.1f ms CPU (wall %.1f ms), %.1fx for %.1fx the events"
      % (shape, lo, c_lo / 1000, hi, c_hi / 1000, w_hi / 1000, grow, want))
with open(summ, "a") as f:
    f.write("per-event detail, %s: edit CPU %d MiB / %d MiB\t%.1fx (%.1fx events)\t<= %.1fx (linear)\t%s\n"
            % (shape, hi, lo, grow, want, 1.5 * want, "met" if grow <= 1.5 * want else "NOT met"))
    f.write("per-event detail, %s %d MiB: events list, CPU (off the UI thread)\t%.1f ms\t-\t-\n"
            % (shape, hi, c_hi / 1000))
PY
	rm -f "$out/e-$shape-$e_lo.pftrace" "$out/e-$shape-$e_hi.pftrace"
done
