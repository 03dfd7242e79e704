# Compressed and many-member containers (sourced by bench.sh; uses lib.sh).
# A loose gzip and zstd trace of BENCH_MB MiB against gzip -dc / zstd -dc;
# then for 1, 10, 100 and 1,000 members holding BENCH_MB MiB of proto in all:
# tar.gz vs gzip -dc, tar.zst vs zstd -dc, ZIP (deflate) vs unzip -p, plain
# TAR vs cat.  The targets (<= 1.2x the decompressor's wall time, whatever the
# member count: time per member flat) are judged on wall time, since the
# decompression is meant to run beside the scan; CPU time is shown beside it.
d="$out/loose"
rm -rf "$d" && mkdir -p "$d" || exit 1
"$GEN" gen-shape te20 "$d/x.pftrace" "$MB" || exit 1
gzip -c "$d/x.pftrace" >"$d/x.pftrace.gz"
zstd -q -f "$d/x.pftrace" -o "$d/x.pftrace.zst"
size=$(stat -c %s "$d/x.pftrace")
rm -f "$d/x.pftrace"
for kind in gz zst; do
	if [ $kind = gz ]; then base=(gzip -dc "$d/x.pftrace.gz"); else base=(zstd -dc "$d/x.pftrace.zst"); fi
	cat "$d/x.pftrace.$kind" >/dev/null
	measure "${base[@]}"
	bw=$M_WALL bc=$M_CPU
	measure "$TM" check --no-cache "$d/x.pftrace.$kind"
	ratio "loose .$kind, $MB MiB vs ${base[0]} -dc" "$M_WALL" "$M_CPU" "$bw" "$bc" "<= 1.2x wall" "$M_RSS" \
		"$(budget "$size")"
done
rm -rf "$d"

for n in ${BENCH_MEMBERS:-1 10 100 1000}; do
	d="$out/c$n"
	rm -rf "$d" && mkdir -p "$d/m" || exit 1
	"$GEN" gen-members "$d/m" "$n" "$MB" || exit 1
	(cd "$d/m" && tar -cf ../x.tar m*.pftrace && zip -q -1 ../x.zip m*.pftrace) || exit 1
	gzip -c "$d/x.tar" >"$d/x.tar.gz"
	zstd -q -f "$d/x.tar" -o "$d/x.tar.zst"
	rm -rf "$d/m"
	size=$(stat -c %s "$d/x.tar")
	cat "$d"/x.* >/dev/null
	for kind in tar tar.gz tar.zst zip; do
		case $kind in
		tar) base=(cat "$d/x.tar") tgt="<= 6x CPU" ;;
		tar.gz) base=(gzip -dc "$d/x.tar.gz") tgt="<= 1.2x wall" ;;
		tar.zst) base=(zstd -dc "$d/x.tar.zst") tgt="<= 1.2x wall" ;;
		zip) base=(unzip -p "$d/x.zip") tgt="<= 1.2x wall" ;;
		esac
		measure "${base[@]}"
		bw=$M_WALL bc=$M_CPU
		measure "$TM" check --no-cache "$d/x.$kind"
		ratio "$kind, $n members vs ${base[0]} ($(python3 -c "print('%.1f' % ($M_WALL * 1000 / $n))") ms/member)" \
			"$M_WALL" "$M_CPU" "$bw" "$bc" "$tgt" "$M_RSS" "$(budget "$size")"
	done
	rm -rf "$d"
done
