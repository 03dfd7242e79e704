# A big TAR (sourced by bench.sh; uses lib.sh): BENCH_BIG_GIB (10) GiB of
# proto traces, one 1 GiB TrackEvent member (te20) stored BENCH_BIG_GIB
# times under different names, scanned once by `check`; the figure is its
# peak RSS against the budget (5% of the input + 32 MiB), with `cat` of the
# same TAR beside it. BENCH_BIG_GIB=0 skips it (it needs that much disk).
big=${BENCH_BIG_GIB:-10}
if [ "$big" -gt 0 ]; then
	d="$out/big"
	rm -rf "$d" && mkdir -p "$d/m" || exit 1
	"$GEN" gen-shape te20 "$d/one.pftrace" 1024 || exit 1
	for i in $(seq 1 "$big"); do ln -s ../one.pftrace "$d/m/part$(printf %03d "$i").pftrace"; done
	# -h and --hard-dereference store the target's bytes in every member
	(cd "$d/m" && tar --hard-dereference -chf ../big.tar part*.pftrace) || exit 1
	rm -rf "$d/m" "$d/one.pftrace"
	size=$(stat -c %s "$d/big.tar")
	REPS_SAVED=$REPS REPS=1
	measure cat "$d/big.tar"
	bw=$M_WALL bc=$M_CPU
	measure "$TM" check --no-cache "$d/big.tar"
	REPS=$REPS_SAVED
	if [ "$M_RC" != 0 ]; then
		echo "check of the big TAR exited with $M_RC"
		verdict "TAR of $big GiB: check's exit status" "$M_RC" "0" "NOT met"
	fi
	ratio "TAR of $big GiB ($big members of 1 GiB) vs cat" "$M_WALL" "$M_CPU" "$bw" "$bc" "-" "$M_RSS" "$(budget "$size")"
	rm -rf "$d"
fi
