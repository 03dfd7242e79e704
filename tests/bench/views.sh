# The workbench's events list and tracks view (sourced by bench.sh; uses
# lib.sh): details are kept under 16 MiB of input, so the te20 shape at
# min(BENCH_MB, 16) MiB, every event listed once per evaluation and the
# engine's view built over it on the details thread (bench_tm view: its
# CPU), then frames of 40 track rows x 200 columns at the whole trace's
# zoom and zoomed in 100 and 10,000 times (tm_view_cells: a few binary
# searches per column).  The frame must be under 16 ms at every zoom;
# peak RSS is the events list's and the view's, beside the budget.
v_mb=$((MB < 16 ? MB : 16))
"$GEN" gen-shape te20 "$out/v-te20.pftrace" "$v_mb" || exit 1
read -r v_build v_f1 v_f100 v_f10k v_ev v_tr < <("$GEN" view 21 "$out/v-te20.pftrace")
v_rss=$( { /usr/bin/time -f '%M' "$GEN" view 3 "$out/v-te20.pftrace" >/dev/null; } 2>&1 | tail -1)
rm -f "$out/v-te20.pftrace"
echo "tracks view, te20 $v_mb MiB ($v_ev events, $v_tr tracks): view built in ${v_build} us CPU; a frame ${v_f1} / ${v_f100} / ${v_f10k} us CPU (whole / 100x / 10,000x); peak RSS ${v_rss} KiB; load $(load)"
python3 - "$v_mb" "$v_ev" "$v_build" "$v_f1" "$v_f100" "$v_f10k" "$v_rss" "$(budget $((v_mb << 20)))" "$BENCH_SUMMARY" <<'PY'
import sys
mb, ev = int(sys.argv[1]), int(sys.argv[2])
build, f1, f100, f10k = map(float, sys.argv[3:7])
rss, budget, summ = int(sys.argv[7]), int(sys.argv[8]), sys.argv[9]
worst = max(f1, f100, f10k)
with open(summ, "a") as f:
    f.write("tracks view, te20 %d MiB (%d events): a frame of 40 x 200, CPU (worst zoom)\t%.3f ms\t< 16 ms\t%s\n"
            % (mb, ev, worst / 1000, "met" if worst < 16000 else "NOT met"))
    f.write("tracks view, te20 %d MiB: the view's index, CPU (off the UI thread)\t%.1f ms\t-\t-\n"
            % (mb, build / 1000))
    f.write("tracks view, te20 %d MiB: peak RSS (events list and view)\t%d MiB\t<= %d MiB\t%s\n"
            % (mb, rss // 1024, budget, "met" if rss // 1024 <= budget else "NOT met"))
PY
