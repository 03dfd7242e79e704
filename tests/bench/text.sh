# Text formats (sourced by bench.sh; uses lib.sh): systrace and Chrome JSON
# of BENCH_MB MiB against wc -l and cat of the same file; target >= 0.75 GB/s.
"$GEN" gen-systrace "$out/s.systrace" "$MB" || exit 1
"$GEN" gen-json "$out/t.json" "$MB" || exit 1
for f in s.systrace t.json; do
	p="$out/$f"
	size=$(stat -c %s "$p")
	cat "$p" >/dev/null
	measure wc -l "$p"
	ww=$M_WALL wc=$M_CPU
	measure cat "$p"
	cw=$M_WALL cc=$M_CPU
	measure "$TM" check --no-cache "$p"
	gbs=$(python3 -c "print('%.2f GB/s, %.2f GB/CPU-s' % ($size / $M_WALL / 1e9, $size / $M_CPU / 1e9))")
	ratio "${f#*.} $MB MiB vs wc -l ($gbs)" "$M_WALL" "$M_CPU" "$ww" "$wc" ">= 0.75 GB/s" "$M_RSS" \
		"$(python3 -c "print('%.0f' % ($size * 0.05 / 2**20 + 32))")"
	ratio "${f#*.} $MB MiB vs cat" "$M_WALL" "$M_CPU" "$cw" "$cc" "-"
	rm -f "$p"
done
