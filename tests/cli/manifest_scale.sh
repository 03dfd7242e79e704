#!/usr/bin/env bash
# Manifests with many attributes, machines, files or clocks entries must be
# parsed, validated and applied in linear work (issue 11: they were
# quadratic).  Work is counted, not timed: valgrind's instruction count of
# `check --manifest M` for N and 4N entries.  Linear work gives a ratio near 4
# minus the fixed start-up cost (2.5-3 measured); the quadratic code gave
# 10-12.  Needs valgrind and the release build (TM_BIN_REL).
set -u
TM=${TM_BIN_REL:-build/rel/tracemerge}
if ! command -v valgrind >/dev/null; then
	echo "SKIP: manifest_scale: valgrind not installed"
	exit 0
fi
if [ ! -x "$TM" ]; then
	echo "SKIP: manifest_scale: no release binary at $TM"
	exit 0
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf '{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":2}]}' >"$t/a.json"
cp "$t/a.json" "$t/b.json"

gen() { # SHAPE N OUT
	python3 - "$@" <<'PY'
import sys
f, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
head = '{"perfetto_manifest": {"version": 1, '
if f == "attrs":
    t = head + '"attributes": {' + ", ".join('"k%d": "v"' % i for i in range(n)) + "}}}"
elif f == "machines":
    t = head + '"files": [{"path": "a.pftrace", "machines": [' + ", ".join(
        '{"id": %d, "name": "m%d"}' % (i, i) for i in range(n)) + "]}]}}"
elif f == "files":
    t = head + '"files": [' + ", ".join(
        '{"path": "f%d", "machine": {"name": "m%d"}}' % (i, i) for i in range(n)) + "]}}"
else:  # clocks: every entry syncs to one machine of a multi-machine file
    ms = ", ".join('{"id": %d, "name": "m%d"}' % (i, i) for i in range(n))
    fs = ", ".join(
        '{"path": "f%d", "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "a.pftrace", '
        '"machine": "m%d", "clock": "BOOTTIME"}, "offset_ns": %d}}' % (i, i, i) for i in range(n))
    t = head + '"files": [{"path": "a.pftrace", "machines": [' + ms + "]}, " + fs + "]}}"
open(out, "w").write(t)
PY
}

work() { # MANIFEST: instructions of one check
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$TM" check --no-cache --manifest "$1" \
		"$t/a.json" "$t/b.json" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# shape and the largest ratio accepted for 4x the entries ("clocks" also
# pays for the clock graph's snapshot inserts, which are not the manifest's)
for spec in attrs:5 machines:5 files:5 clocks:7; do
	shape=${spec%%:*} max=${spec#*:}
	gen "$shape" 1000 "$t/s.json"
	gen "$shape" 4000 "$t/l.json"
	small=$(work "$t/s.json") large=$(work "$t/l.json")
	if [ -z "$small" ] || [ -z "$large" ]; then
		echo "FAIL: manifest_scale $shape: no instruction count from valgrind"
		continue
	fi
	ratio=$(python3 -c "print('%.2f' % ($large / $small))")
	if python3 -c "import sys; sys.exit(0 if $large < $max * $small else 1)"; then
		echo "PASS: manifest_scale $shape: 4x entries cost ${ratio}x instructions"
	else
		echo "FAIL: manifest_scale $shape: 4x entries cost ${ratio}x instructions (at most $max: quadratic?)"
	fi
done
