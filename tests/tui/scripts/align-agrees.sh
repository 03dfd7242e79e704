# Sourced by the align-*.check files (run by run_golden.sh with DIR and BIN):
# 1. each saved-N.json agrees with dump-N.screen (check-agrees.check's rules);
# 2. each saved-fN.json, the manifest written after applying the first fix
#    dump-N.screen offered, gives the verdict that fix line promised.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGREE_ONLY_SAVED=1 bash "$here/check-agrees.check" || exit 1
demo=$(ls -d "$DIR"/tmp/tracemerge-demo-* 2>/dev/null | head -1)
fail=0
n_fix=0
for man in "$DIR"/saved-f*.json; do
	[ -e "$man" ] || continue
	n=$(basename "$man" .json | sed 's/^saved-f//')
	screen="$DIR/dump-$n.screen"
	files=$(ls "$demo"/* | grep -v '/perfetto_manifest\.json$')
	got=$("$BIN" check --manifest "$man" $files 2>/dev/null | head -1)
	python3 - "$screen" "$got" <<'PY' || fail=1
import re, sys
flat = " ".join(l.strip() for l in open(sys.argv[1], encoding="utf-8").read().splitlines())
m = re.search(r"Fix \(f; checked by tracemerge\): (.*?) -> (.*?\.) \(", flat)
if not m:
    print("%s shows no fix" % sys.argv[1].rsplit("/", 1)[-1]); sys.exit(1)
if m.group(2) != sys.argv[2]:
    print("fix %s promised '%s', check says '%s'" % (m.group(1), m.group(2), sys.argv[2])); sys.exit(1)
PY
	n_fix=$((n_fix + 1))
done
exit $fail
