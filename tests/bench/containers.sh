# Compressed and many-member containers (sourced by bench.sh; uses lib.sh).
# A loose gzip and zstd trace of BENCH_MB MiB; then for 1, 10, 100 and 1,000
# members holding BENCH_MB MiB of proto in all: TAR, tar.gz, tar.zst and ZIP
# (deflate).  Baselines on the same files in the same run: igzip -dc (ISA-L),
# gzip -dc, zstd -dc, bsdtar -xOf (libarchive), unzip -p, cat.  Targets:
# - what a compressed input costs beyond the same bytes uncompressed (check
#   CPU on it minus check CPU on the plain file or TAR) <= 1.2x the fastest
#   decompressor's CPU on it: igzip -dc for gzip and for ZIP deflate (igzip
#   of a gzip -1 of the same TAR: zip -1's level), zstd -dc for zstd;
# - wall <= 0.6x CPU (both cores: inflate beside the scan, members in
#   parallel) on compressed single files and archives of >= 2 large members
#   (the 10-member ones);
# - loose .gz/.zst and archives <= 1.2x the decompressor's wall (issue 10);
#   TAR <= 6x cat's CPU; peak RSS within the budget.
# Without igzip (Debian's isal) its rows are skipped and said so.
d="$out/loose"
rm -rf "$d" && mkdir -p "$d" || exit 1
have_igzip=$(command -v igzip >/dev/null 2>&1 && echo 1)
[ -n "$have_igzip" ] || echo "igzip not found (Debian package isal): its rows are skipped"

# extra LABEL CHECK_CPU PLAIN_CPU BASE_CPU BASE_NAME: the compressed input's
# own cost against the decompressor's
extra() {
	python3 - "$SUMMARY" "$@" <<'PY'
import sys
summ, label, c, p, b, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
x = (c - p) / b if b > 0 else float("inf")
print("%-52s check CPU %7.3f - plain %7.3f = %7.3f  %s CPU %7.3f  ratio %5.2fx  target <= 1.2x"
      % (label, c, p, c - p, name, b, x))
with open(summ, "a") as f:
    f.write("%s: check CPU beyond the plain input / %s CPU\t%.2fx\t<= 1.2x CPU\t%s\n"
            % (label, name, x, "met" if x <= 1.2 else "NOT met"))
PY
}

# both LABEL WALL CPU: wall time against CPU time (both cores at work)
both() {
	python3 - "$SUMMARY" "$@" <<'PY'
import sys
summ, label, w, c = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
r = w / c if c > 0 else float("inf")
print("%-52s wall %7.3f s  CPU %7.3f s  wall/CPU %5.2fx  target <= 0.6x" % (label, w, c, r))
with open(summ, "a") as f:
    f.write("%s: check wall / check CPU\t%.2fx (%.2f / %.2f s)\t<= 0.6x\t%s\n"
            % (label, r, w, c, "met" if r <= 0.6 else "NOT met"))
PY
}

"$GEN" gen-shape te20 "$d/x.pftrace" "$MB" || exit 1
gzip -c "$d/x.pftrace" >"$d/x.pftrace.gz"
zstd -q -f "$d/x.pftrace" -o "$d/x.pftrace.zst"
size=$(stat -c %s "$d/x.pftrace")
cat "$d"/x.* >/dev/null
measure "$TM" check --no-cache "$d/x.pftrace"
plain=$M_CPU
for kind in gz zst; do
	if [ $kind = gz ]; then base=(gzip -dc "$d/x.pftrace.gz"); else base=(zstd -dc "$d/x.pftrace.zst"); fi
	measure "${base[@]}"
	bw=$M_WALL bc=$M_CPU
	measure "$TM" check --no-cache "$d/x.pftrace.$kind"
	cw=$M_WALL cc=$M_CPU
	ratio "loose .$kind, $MB MiB vs ${base[0]} -dc" "$cw" "$cc" "$bw" "$bc" "<= 1.2x wall" "$M_RSS" \
		"$(budget "$size")"
	if [ $kind = zst ]; then
		extra "loose .zst, $MB MiB" "$cc" "$plain" "$bc" "zstd -dc"
	elif [ -n "$have_igzip" ]; then
		measure igzip -dc "$d/x.pftrace.gz"
		ratio "loose .gz, $MB MiB vs igzip -dc" "$cw" "$cc" "$M_WALL" "$M_CPU" "-"
		extra "loose .gz, $MB MiB" "$cc" "$plain" "$M_CPU" "igzip -dc"
	fi
	both "loose .$kind, $MB MiB" "$cw" "$cc"
done
rm -rf "$d"

for n in ${BENCH_MEMBERS:-1 10 100 1000}; do
	d="$out/c$n"
	rm -rf "$d" && mkdir -p "$d/m" || exit 1
	"$GEN" gen-members "$d/m" "$n" "$MB" || exit 1
	(cd "$d/m" && tar -cf ../x.tar m*.pftrace && zip -q -1 ../x.zip m*.pftrace) || exit 1
	gzip -c "$d/x.tar" >"$d/x.tar.gz"
	[ -z "$have_igzip" ] || gzip -1 -c "$d/x.tar" >"$d/x1.gz"
	zstd -q -f "$d/x.tar" -o "$d/x.tar.zst"
	rm -rf "$d/m"
	size=$(stat -c %s "$d/x.tar")
	cat "$d"/x* >/dev/null
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
		cw=$M_WALL cc=$M_CPU
		ratio "$kind, $n members vs ${base[0]} ($(python3 -c "print('%.1f' % ($cw * 1000 / $n))") ms/member)" \
			"$cw" "$cc" "$bw" "$bc" "$tgt" "$M_RSS" "$(budget "$size")"
		[ $kind = tar ] && plain=$cc
		# libarchive's own reading of the same container
		measure bsdtar -xOf "$d/x.$kind"
		ratio "$kind, $n members vs bsdtar -xOf" "$cw" "$cc" "$M_WALL" "$M_CPU" "-"
		case $kind in
		tar.gz | zip)
			if [ -n "$have_igzip" ]; then
				z="$d/x.tar.gz"
				[ $kind = zip ] && z="$d/x1.gz"
				measure igzip -dc "$z"
				extra "$kind, $n members" "$cc" "$plain" "$M_CPU" "igzip -dc"
			fi
			;;
		tar.zst) extra "$kind, $n members" "$cc" "$plain" "$bc" "zstd -dc" ;;
		esac
		# both cores: compressed single members, and >= 2 large members
		if { [ "$n" = 1 ] && [ $kind != tar ]; } || [ "$n" = 10 ]; then
			both "$kind, $n members" "$cw" "$cc"
		fi
	done
	rm -rf "$d"
done
