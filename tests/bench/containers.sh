# Compressed and many-member containers (sourced by bench.sh; uses lib.sh).
# For 1, 10, 100 and 1,000 members holding BENCH_MB MiB of proto in all:
# tar.gz vs gzip -dc, tar.zst vs zstd -dc, ZIP (deflate) vs unzip -p, plain
# TAR vs cat; time per member must stay flat as members grow.
for n in ${BENCH_MEMBERS:-1 10 100 1000}; do
	d="$out/c$n"
	rm -rf "$d" && mkdir -p "$d/m" || exit 1
	"$GEN" gen-members "$d/m" "$n" "$MB" || exit 1
	(cd "$d/m" && tar -cf ../x.tar m*.pftrace && zip -q -1 ../x.zip m*.pftrace) || exit 1
	gzip -c "$d/x.tar" >"$d/x.tar.gz"
	zstd -q -f "$d/x.tar" -o "$d/x.tar.zst"
	rm -rf "$d/m"
	size=$(stat -c %s "$d/x.tar")
	budget=$(python3 -c "print('%.0f' % ($size * 0.05 / 2**20 + 32))")
	cat "$d"/x.* >/dev/null
	for kind in tar tar.gz tar.zst zip; do
		case $kind in
		tar) base=(cat "$d/x.tar") ;;
		tar.gz) base=(gzip -dc "$d/x.tar.gz") ;;
		tar.zst) base=(zstd -dc "$d/x.tar.zst") ;;
		zip) base=(unzip -p "$d/x.zip") ;;
		esac
		measure "${base[@]}"
		bw=$M_WALL bc=$M_CPU
		measure "$TM" check --no-cache "$d/x.$kind"
		tgt="<= 1.2x"
		[ "$kind" = tar ] && tgt="<= 6x"
		ratio "$kind, $n members ($(python3 -c "print('%.1f' % ($M_WALL * 1000 / $n))") ms/member)" \
			"$M_WALL" "$M_CPU" "$bw" "$bc" "$tgt" "$M_RSS" "$budget"
	done
	rm -rf "$d"
done
