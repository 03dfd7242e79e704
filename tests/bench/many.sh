# Many members (sourced by bench.sh; uses lib.sh): a TAR of BENCH_MANY
# (10,000) proto traces of BENCH_MANY_KIB (16) KiB against a tenth as many
# members of the same size (CPU per member: linear means the same) and
# against one member of the same total bytes (RSS per member beyond it: a few
# hundred bytes at most); tar -xOf is the baseline.  Then `check` of the
# smaller TAR from a warm scan cache against --no-cache (lib.sh warm_cache).
many=${BENCH_MANY:-10000}
kib=${BENCH_MANY_KIB:-16}
few=$((many / 10 > 2 ? many / 10 : 2))
for n in $few $many 1; do
	d="$out/many$n"
	rm -rf "$d" && mkdir -p "$d/m" || exit 1
	"$GEN" gen-members "$d/m" "$n" "$((n == 1 ? many * kib : n * kib))k" || exit 1
	(cd "$d/m" && find . -name 'm*.pftrace' | sort | tar -cf ../x.tar -T -) || exit 1
	rm -rf "$d/m"
done
declare -A cpu rss
for n in $few $many 1; do
	f="$out/many$n/x.tar"
	cat "$f" >/dev/null
	measure tar -xOf "$f"
	bw=$M_WALL bc=$M_CPU
	measure "$TM" check --no-cache "$f"
	cpu[$n]=$M_CPU rss[$n]=$M_RSS
	size=$(stat -c %s "$f")
	if [ "$n" = "$many" ]; then
		ratio "TAR, $n members of $kib KiB vs tar -xOf" "$M_WALL" "$M_CPU" "$bw" "$bc" "-" "$M_RSS" "$(budget "$size")"
	else
		ratio "TAR, $n members vs tar -xOf" "$M_WALL" "$M_CPU" "$bw" "$bc" "-"
	fi
done
python3 - "$few" "$many" "${cpu[$few]}" "${cpu[$many]}" "${rss[1]}" "${rss[$many]}" "$SUMMARY" <<'PY'
import sys
few, many = int(sys.argv[1]), int(sys.argv[2])
c_few, c_many, r_one, r_many = map(float, sys.argv[3:7])
per = (c_many / many) / (c_few / few) if c_few > 0 else float("inf")
grow = (r_many - r_one) * 2**20 / many
print("CPU per member, %d vs %d members: %.2fx; RSS %.0f MiB for %d members, %.0f MiB for one member of the same bytes: %.0f B per member"
      % (many, few, per, r_many, many, r_one, grow))
with open(sys.argv[7], "a") as f:
    f.write("%d members: CPU per member / at %d members\t%.2fx\t<= 1.2x (linear)\t%s\n"
            % (many, few, per, "met" if per <= 1.2 else "NOT met"))
    f.write("%d members: RSS per member over one member of the same bytes\t%.0f B\t<= 500 B\t%s\n"
            % (many, grow, "met" if grow <= 500 else "NOT met"))
PY
warm_cache "TAR, $few members of $kib KiB" "$out/many$few/x.tar"
rm -rf "$out/many$few" "$out/many$many" "$out/many1"
