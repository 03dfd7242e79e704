#!/usr/bin/env bash
# tracemerge align on generated two-device traces with a known offset, drift
# and latency (tests/cli/align_gen.py): the bounds contain the truth, the
# quality labels, --pair, --apply's manifest is what check predicts, and the
# offset grammar's notes (inert edit, own-machine offer).
set -u
TM=${TM_BIN:-build/asan/tracemerge}
G=tests/cli/align_gen.py
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
# a clean verdict: nothing dropped and the files' ranges overlap
clean() { case "$1" in "Nothing dropped"*"do not overlap"*) return 1 ;; "Nothing dropped"*) return 0 ;; esac; return 1; }
field() { python3 -c 'import json,sys; e=json.load(sys.stdin)["estimates"][0]; print(e[sys.argv[1]])' "$1"; }

# The 36 pairs (sdk: as the Perfetto SDK writes, on sequence-scoped
# incremental clocks) are generated in one python process and their align outputs
# read in another (a process start per check was most of this script's time).
python3 - "$G" "$t" <<'PY' >"$t/truths"
import contextlib, io, runpy, sys
g, t = sys.argv[1], sys.argv[2]
for kind, mode in (("json", "both"), ("proto", "both"), ("systrace", "both"), ("proto", "sdk")):
    for seed in (1, 2, 3):
        for off, ppm in (("123456789", "0"), ("-2500000000", "40"), ("7000", "-25")):
            label = kind if mode == "both" else mode
            d = "%s/%s-%s-%s" % (t, label, seed, off)
            sys.argv = [g, d, kind, off, ppm, str(seed), mode]
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                runpy.run_path(g, run_name="__main__")
            print(d, label, seed, off, ppm, out.getvalue().strip())
PY
while read -r d _ _ _ _ _; do
	"$TM" align --json "$d"/* >"$d.align" 2>&1
done <"$t/truths"
python3 - "$t/truths" <<'PY'
import json, sys
worst, by = 0, {}
for line in open(sys.argv[1]):
    d, kind, seed, off, ppm, truth = line.split()
    truth = int(truth)
    name = "align %s seed %s offset %s drift %s ppm" % (kind, seed, off, ppm)
    js = open(d + ".align").read()
    try:
        e = json.loads(js)["estimates"][0]
        q, lo, hi, est = e["quality"], e["lo_ns"], e["hi_ns"], e["offset_ns"]
    except Exception as x:
        print("FAIL: %s: unreadable output (%s): %s" % (name, x, js))
        continue
    # exact: the bounds close on one offset (zero width)
    if q in ("accurate", "exact") and lo is not None and hi is not None and lo <= truth <= hi:
        print("PASS: %s: %d <= %d <= %d" % (name, lo, truth, hi))
    else:
        print("FAIL: %s: quality %s bounds %s..%s truth %d: %s" % (name, q, lo, hi, truth, js))
    if est is not None:
        worst = max(worst, abs(est - truth))
        by[kind] = max(by.get(kind, 0), abs(est - truth))
print("# worst |estimate - truth| over the generated set: %d ns (%s)" %
      (worst, ", ".join("%s %d" % kv for kv in by.items())))
PY

d="$t/oneway"
truth=$(python3 "$G" "$d" json 5000000 0 7 oneway)
js=$("$TM" align --json "$d"/*)
q=$(echo "$js" | field quality) hi=$(echo "$js" | field hi_ns) lo=$(echo "$js" | field lo_ns)
[ "$q" = one-sided ] && [ "$lo" = None ] && [ "$truth" -le "$hi" ] && ok "one-way messages: one-sided upper bound" || no "one-sided" "$js"

d="$t/contra"
python3 "$G" "$d" json 5000000 0 7 contra >/dev/null
q=$("$TM" align --json "$d"/* | field quality)
[ "$q" = contradictory ] && ok "impossible latencies: contradictory" || no "contradictory" "$q"

d="$t/inst"
truth=$(python3 "$G" "$d" json -7000000 0 8 instants)
js=$("$TM" align --json "$d"/*)
[ "$(echo "$js" | field quality)" = exact ] && [ "$(echo "$js" | field offset_ns)" = "$truth" ] &&
	ok "shared instants: exact, labelled exact" || no "instants" "$js"
js=$("$TM" align --json --pair b_file.json:mark1005=a_ref.json:mark1005+1ms "$d"/*)
[ "$(echo "$js" | field quality)" = declared ] && [ "$(echo "$js" | field offset_ns)" = $((truth - 1000000)) ] &&
	ok "declared pair with +D" || no "declared pair" "$js"
o=$("$TM" align --pair b_file.json:nope=a_ref.json:mark1005 "$d"/* 2>&1); rc=$?
[ $rc = 64 ] && echo "$o" | grep -q "no occurrence 1 of 'nope' in b_file.json" && ok "pair naming a missing event" || no "missing event" "$rc $o"

# Perfetto-style names: interned (name_iid) as the SDK writes them; the
# scan samples them for alignment whatever the session keeps
d="$t/interned"
truth=$(python3 "$G" "$d" proto 123456789 0 4 interned)
js=$("$TM" align --json "$d"/*)
echo "$js" | python3 -c 'import json,sys; e=json.load(sys.stdin)["estimates"][0]; assert e["same_moment"] == 20, e' &&
	ok "interned names: the 20 shared markers are seen" || no "interned markers" "$js"
# the markers give the estimate, the messages (both ways) bound it: the
# tighter bounds, and markers the messages cannot allow are contradictory
js=$("$TM" align --json "$d"/*)
q=$(echo "$js" | field quality) lo=$(echo "$js" | field lo_ns) hi=$(echo "$js" | field hi_ns) est=$(echo "$js" | field offset_ns)
{ [ "$q" = accurate ] || [ "$q" = exact ]; } && [ "$est" = "$truth" ] && [ "$lo" -le "$truth" ] && [ "$truth" -le "$hi" ] &&
	ok "markers and messages: accurate, $lo <= $est <= $hi" || no "markers and messages" "$js"
python3 "$G" "$t/skew" proto 123456789 0 4 interned-skew >/dev/null
o=$("$TM" align "$t/skew"/*)
echo "$o" | grep -q '\[contradictory\] the shared instants say so, but the messages allow at least +123\.[0-9]* ms and at most +123\.' &&
	ok "markers 5 ms off the messages: contradictory" || no "markers vs messages" "$o"
js=$("$TM" align --json --pair b_file.pftrace:mark1100=a_ref.pftrace:mark1100 "$d"/*)
[ "$(echo "$js" | field offset_ns)" = "$truth" ] && ok "interned names: a declared pair by name gives the offset" || no "interned pair" "$js"

# samples on a sequence-scoped clock are converted as the replay converts
# them: through their sequence's ClockSnapshot to the file's trace clock
truth=$(python3 "$G" "$t/seqclock" proto 123456789 0 4 seqclock)
js=$("$TM" align --json "$t/seqclock"/*)
lo=$(echo "$js" | field lo_ns) hi=$(echo "$js" | field hi_ns)
{ [ "$(echo "$js" | field quality)" = accurate ] || [ "$(echo "$js" | field quality)" = exact ]; } && [ "$lo" -le "$truth" ] && [ "$truth" -le "$hi" ] &&
	[ "$(echo "$js" | field unusable_samples)" = 0 ] &&
	ok "sequence-scoped clock: its samples are converted, $lo <= $truth <= $hi" || no "sequence-scoped clock" "$js"
# and when no snapshot relates it, the estimate says why they are not used
python3 "$G" "$t/nosnap" proto 123456789 0 4 seqclock-nosnap >/dev/null
js=$("$TM" align --json "$t/nosnap"/*)
echo "$js" | python3 -c 'import json,sys; e=json.load(sys.stdin)["estimates"][0]; assert e["unusable_samples"] > 0 and "on sequence-scoped clock 64 not used (no clock snapshot relates them to its trace clock)" in e["evidence"], e' &&
	ok "sequence-scoped clock without a snapshot: the estimate says why its samples are not used" || no "unusable samples" "$js"
# markers on the reference's embedded machine 7, 3 s behind its host: its
# remote_clock_sync converts them to the reference's clock
truth=$(python3 "$G" "$t/refm" proto 123456789 0 4 ref-machine)
js=$("$TM" align --json "$t/refm"/*)
lo=$(echo "$js" | field lo_ns) hi=$(echo "$js" | field hi_ns) est=$(echo "$js" | field offset_ns)
[ "$(echo "$js" | field same_moment)" = 20 ] && [ "$lo" -le "$truth" ] && [ "$truth" -le "$hi" ] &&
	ok "markers on the reference's second machine: $lo <= $truth <= $hi (estimate $est)" || no "reference's machine 7" "$js"
# markers on the file's machine 7 follow the timeline's machine (its remote
# clock sync ties it there), not the file's clock: no offset of the file moves them
python3 "$G" "$t/filem" proto 123456789 0 4 file-machine >/dev/null
js=$("$TM" align --json "$t/filem"/*)
echo "$js" | python3 -c 'import json,sys; e=json.load(sys.stdin)["estimates"][0]; assert e["offset_ns"] is None and "20 samples of b_file.pftrace on its machine 7 not used (their conversion reaches the timeline without passing its trace clock" in e["evidence"], e' &&
	ok "markers on the file's second machine: not used, and why" || no "file's machine 7" "$js"
# --apply on SDK traces: what check predicts, clean
d="$t/apply-sdk"
python3 "$G" "$d" proto 987654321 0 9 sdk >/dev/null
o=$("$TM" align --apply -o "$t/m-sdk.json" "$d"/* 2>&1); rc=$?
pred=$(echo "$o" | sed -n 's/^predicted with the estimates applied: //p')
chk=$("$TM" check --manifest "$t/m-sdk.json" "$d"/* 2>/dev/null | head -1)
[ $rc = 0 ] && [ "$pred" = "$chk" ] && clean "$chk" &&
	ok "align --apply (sdk): check agrees: $chk" || no "align --apply (sdk)" "rc $rc predicted '$pred' check '$chk': $o"
# the file's SDK on MONOTONIC (macOS) beside a BOOTTIME one: every event of
# it is dropped; align relates its MONOTONIC, and the markers coincide
dm="$t/sdk-mono"
truth=$(python3 "$G" "$dm" proto 123456789 0 6 sdk-mono)
before=$("$TM" check "$dm"/* 2>/dev/null | head -1)
o=$("$TM" align --apply -o "$t/m-mono.json" "$dm"/* 2>&1); rc=$?
js=$("$TM" align --json "$dm"/*)
lo=$(echo "$js" | field lo_ns) hi=$(echo "$js" | field hi_ns)
chk=$("$TM" check --manifest "$t/m-mono.json" "$dm"/* 2>/dev/null | head -1)
gap=$("$TM" check --json --events --manifest "$t/m-mono.json" "$dm"/* 2>/dev/null | python3 -c '
import json, sys
a, b = {}, {}
for e in json.load(sys.stdin)["events"]:
    if e["name"].startswith("mark"):
        (a if e["file"] == "a_ref.pftrace" else b)[e["name"]] = e["ts"]
print(max(abs(a[k] - b[k]) for k in a) if a and len(a) == len(b) else "none")')
[ "$before" = "220 events would be dropped: clock_sync_failure_no_path 220." ] && [ $rc = 0 ] &&
	[ "$(echo "$js" | field clock)" = MONOTONIC ] && [ "$lo" -le "$truth" ] && [ "$truth" -le "$hi" ] &&
	clean "$chk" && [ "$gap" = 0 ] &&
	ok "SDK on MONOTONIC: from '$before' to '$chk', markers within $gap ns" ||
	no "SDK on MONOTONIC" "before '$before' rc $rc check '$chk' gap $gap: $js $o"
# and check says what places it: the entry, not the BOOTTIME bridge that
# joined a clock the file never uses
o=$("$TM" check --manifest "$t/m-mono.json" "$dm"/* 2>&1)
echo "$o" | grep -A1 'b_file.pftrace: 220 events' | grep -q 'placed by its clocks entry' &&
	ok "SDK on MONOTONIC: placed by its clocks entry" || no "placement words" "$o"
# the same with the file's packets on its default clock 64 (primary_trace_clock),
# folded into runs between the markers: each deferred run element steps the
# clock's shadow, so the markers read the clock's values (before: contradictory)
dr="$t/sdk-runs"
truth=$(python3 "$G" "$dr" proto 123456789 0 6 sdk-runs)
js=$("$TM" align --json "$dr"/*)
"$TM" align --apply -o "$t/m-runs.json" "$dr"/* >/dev/null 2>&1; rc=$?
chk=$("$TM" check --manifest "$t/m-runs.json" "$dr"/* 2>/dev/null | head -1)
lo=$(echo "$js" | field lo_ns) hi=$(echo "$js" | field hi_ns)
{ [ "$(echo "$js" | field quality)" = accurate ] || [ "$(echo "$js" | field quality)" = exact ]; } && [ "$lo" -le "$truth" ] && [ "$truth" -le "$hi" ] && [ $rc = 0 ] &&
	clean "$chk" &&
	ok "SDK on MONOTONIC, default clock 64 in runs: $lo <= $truth <= $hi, then '$chk'" ||
	no "SDK on MONOTONIC in runs" "rc $rc check '$chk': $js"
# zero drift prints 0.000, not -0.000, in words and in JSON
o=$("$TM" align "$d"/*) js=$("$TM" align --json "$d"/*)
echo "$o$js" | grep -q -- '-0\.000' && no "negative zero drift" "$o $js" ||
	{ echo "$o" | grep -q 'drift 0\.000 ppm' && echo "$js" | grep -q '"drift_ppm":0\.000' && ok "zero drift prints 0.000" || no "zero drift" "$o $js"; }

# --apply: the manifest written is the one check predicts clean, and says so
for kind in json proto systrace; do
	d="$t/apply-$kind"
	python3 "$G" "$d" "$kind" 987654321 0 9 >/dev/null
	"$TM" check "$d"/* >/dev/null 2>&1; before=$?
	o=$("$TM" align --apply -o "$t/m-$kind.json" "$d"/* 2>&1); rc=$?
	pred=$(echo "$o" | sed -n 's/^predicted with the estimates applied: //p')
	chk=$("$TM" check --manifest "$t/m-$kind.json" "$d"/* 2>/dev/null | head -1); crc=$?
	if [ $rc = 0 ] && [ "$pred" = "$chk" ] && clean "$chk"; then
		ok "align --apply ($kind): check agrees: $chk"
	else
		no "align --apply ($kind)" "rc $rc before $before predicted '$pred' check '$chk': $o"
	fi
done
grep -q '"name": "b_file"' "$t/m-proto.json" && ok "protos on one machine: the file gets its own" || no "own machine" "$(cat "$t/m-proto.json")"

# the offset grammar's notes
d="$t/apply-proto"
o=$("$TM" check --offset b_file.pftrace=5ms "$d"/* 2>&1)
echo "$o" | grep -q 'Fix: --machine b_file.pftrace=b_file (predicted: Nothing dropped; the files. time ranges overlap' &&
	ok "--offset on one machine offers a machine of its own" || no "own-machine offer" "$o"
o=$("$TM" check --machine b_file.pftrace=b --offset b_file.pftrace=5ms "$d"/* 2>&1)
echo "$o" | grep -q 'Fix:' && no "no offer once on its own machine" "$o" || ok "no offer once on its own machine"
o=$("$TM" manifest --machine b_file.pftrace=b --offset b_file.pftrace=5ms "$d"/* 2>/dev/null)
echo "$o" | grep -q '"clock": "BOOTTIME"' && ok "--offset RELATEs a proto's BOOTTIME (no PIN)" || no "relate" "$o"
o=$("$TM" check --offset b_file.pftrace=0 --offset b_file.pftrace=5ms "$d"/* 2>&1)
echo "$o" | grep -q 'b_file.pftrace=5ms changes no predicted number: the merged trace fails to open with or without it (Trace parse failure' &&
	[ "$(echo "$o" | grep -c 'Fix: --machine b_file.pftrace=b_file')" = 2 ] &&
	ok "an offset inert because the trace fails either way says so, offer kept" || no "inert on failure" "$o"
d="$t/inst"
o=$("$TM" check --offset 'b_file.json=0@a_ref.json' "$d"/* 2>&1)
echo "$o" | grep -q 'changes no predicted number: offset 0' && ok "inert offset says why" || no "inert" "$o"

# every Fix check offers is what check predicts once it is applied
check_fixes() { # label args...
	local label=$1; shift
	local out n=0 bad=0
	out=$("$TM" check "$@" 2>/dev/null)
	while IFS= read -r fix && IFS= read -r pred; do
		fix=${fix#  Fix: } pred=${pred#    predicted: }
		n=$((n + 1))
		# options first, inputs last: the fix's options go after the test's own
		local opts=() ins=() a
		for a in "$@"; do case $a in --*|*=*) opts+=("$a");; *) if [ "${opts[-1]:-}" = --offset ] || [ "${opts[-1]:-}" = --machine ] || [ "${opts[-1]:-}" = --manifest ]; then opts+=("$a"); else ins+=("$a"); fi;; esac; done
		# shellcheck disable=SC2086
		got=$("$TM" check "${opts[@]}" $fix "${ins[@]}" 2>/dev/null | head -1)
		[ "$got" = "$pred" ] || { bad=1; no "$label: fix $n" "'$fix' predicted '$pred', check says '$got'"; }
	done < <(echo "$out" | grep -A1 '^  Fix: ' | grep -v '^--$')
	[ $n -gt 0 ] && [ $bad = 0 ] && ok "$label: $n fixes, each what check predicts after it" || { [ $n = 0 ] && no "$label" "no fix offered: $out"; }
}
d="$t/apply-proto"
check_fixes "own machine" --offset b_file.pftrace=5ms "$d"/a_ref.pftrace "$d"/b_file.pftrace
check_fixes "PIN on a proto" --offset b_file.pftrace:PIN=5ms "$d"/a_ref.pftrace "$d"/b_file.pftrace
d="$t/inst"
check_fixes "before zero" --offset b_file.json=-9s@a_ref.json "$d"/a_ref.json "$d"/b_file.json

# --solve: from "lines up" by accident (two BOOTTIMEs assumed aligned) to
# the estimated offset on machines of their own; check agrees with it
d="$t/apply-proto"
o=$("$TM" align --solve -o "$t/solved.json" "$d"/* 2>&1); rc=$?
chk=$("$TM" check --manifest "$t/solved.json" "$d"/* 2>/dev/null | head -1)
if [ $rc = 0 ] && echo "$o" | grep -q '^predicted: Nothing dropped; the files. time ranges overlap' && clean "$chk" &&
	echo "$o" | grep -q '^+ *"offset_ns": 98765' && echo "$o" | grep -q 'a machine of its own'; then
	ok "align --solve: estimate + own machine, check agrees"
else
	no "align --solve" "rc $rc check '$chk': $o"
fi
# --solve -o follows the one rule for output files: a FIFO is refused, not
# opened and written into (or replaced)
mkfifo "$t/solve.fifo"
o=$(timeout 20 "$TM" align --solve -o "$t/solve.fifo" "$d"/* 2>&1); rc=$?
if [ $rc = 2 ] && [ -p "$t/solve.fifo" ] && echo "$o" | grep -q 'refusing to replace it'; then
	ok "align --solve -o refuses a FIFO"
else
	no "align --solve -o refuses a FIFO" "rc $rc: $(echo "$o" | tail -2)"
fi

# The demo: app.json's offset is unknown (the manifest's -10 ms is a sign
# slip); align finds +10 ms from the "tap" both saw and the request flow
# (Chrome JSON flow v2 bind_id -> the phone's terminating_flow_ids).
mkdir -p "$t/demotmp"
TMPDIR="$t/demotmp" TM_KEEP_DEMO=1 TM_HEADLESS=1 "$TM" --demo --script /dev/null >/dev/null 2>&1
demo=$(ls -d "$t"/demotmp/tracemerge-demo-* 2>/dev/null | head -1)
o=$("$TM" align --json "$demo"/* 2>&1)
if echo "$o" | python3 -c '
import json, sys
e = [x for x in json.load(sys.stdin)["estimates"] if x["file"] == "app.json"][0]
assert e["offset_ns"] == 10000000 and e["quality"] == "exact", e
assert e["messages_to_ref"] == 1 and e["same_moment"] == 1, e'; then
	ok "demo: align finds app.json's +10 ms from the tap and the flow"
else
	no "demo: align finds app.json's offset" "$o"
fi
# an offset on a clock the file does not have: inert, and the note names
# the clock (not "a shorter clock path"); a reference outside the input is
# refused
o=$("$TM" check --manifest "$demo/perfetto_manifest.json" --offset watch.pftrace:MONOTONIC=5ms \
	$(ls "$demo"/* | grep -v perfetto_manifest) 2>&1)
echo "$o" | grep -q 'changes no predicted number: watch.pftrace has no MONOTONIC clock' &&
	ok "--offset on a clock the file lacks says so" || no "inert: missing clock" "$o"
o=$("$TM" check --offset watch.pftrace=5ms@nosuch.json "$demo"/* 2>&1)
echo "$o" | grep -q "'nosuch.json' is not a file of the input" &&
	ok "--offset @REF outside the input is refused" || no "unknown reference" "$o"
# check --json lists the proven fixes; each fix's manifest, checked, is
# what the fix predicts (drops and ok), and the first is the estimate
"$TM" check --json "$demo"/* >"$t/demo-check.json" 2>/dev/null
n=$(python3 - "$t/demo-check.json" "$t/fix" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for i, f in enumerate(r["fixes"]):
    json.dump(f["manifest"], open("%s-%d.json" % (sys.argv[2], i), "w"))
    open("%s-%d.want" % (sys.argv[2], i), "w").write("%d %s\n" % (f["dropped"], str(f["ok"]).lower()))
print(len(r["fixes"]) if r["fixes"] and "=+10ms@" in r["fixes"][0]["what"] else 0)
PY
)
bad=0
for ((i = 0; i < ${n:-0}; i++)); do
	got=$("$TM" check --json --manifest "$t/fix-$i.json" $(ls "$demo"/* | grep -v perfetto_manifest) 2>/dev/null |
		python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["dropped"], str(r["ok"]).lower())')
	[ "$got" = "$(cat "$t/fix-$i.want")" ] || { bad=1; no "check --json fix $i" "fix says $(cat "$t/fix-$i.want"), check says $got"; }
done
[ "${n:-0}" -gt 0 ] && [ $bad = 0 ] && ok "check --json: $n fixes, the estimate first, each what check predicts" ||
	{ [ "${n:-0}" = 0 ] && no "check --json fixes" "$(head -c 600 "$t/demo-check.json")"; }

# Estimates from coincidences (issue 25): two Chrome traces years apart
# whose only common names are ones every Chrome trace has get no estimate,
# and solve offers nothing; one shared marker agrees with any offset (not
# enough evidence, shown, never offered); 20 shared markers at a known shift
# give it exactly, labelled exact (zero-width bounds).
python3 tests/cli/apart_gen.py "$t/apart"
o=$("$TM" align "$t/apart/old.json" "$t/apart/new.json" 2>&1)
echo "$o" | grep -q "old.json vs new.json: no estimate (not enough evidence): .*1 name both saw that every trace of its producer has (not evidence)" &&
	! echo "$o" | grep -q -- "--offset" &&
	ok "unrelated Chrome traces: not enough evidence" || no "unrelated Chrome traces: not enough evidence" "$o"
o=$("$TM" align --solve -o "$t/apart.json" "$t/apart/old.json" "$t/apart/new.json" 2>&1)
echo "$o" | grep -q "solve (tracemerge): 0 edits" && ! grep -q clocks "$t/apart.json" &&
	ok "unrelated Chrome traces: solve offers nothing" || no "unrelated Chrome traces: solve offers nothing" "$o"
python3 - "$t/one" "$t/twenty" <<'PY'
import json, os, sys
def tr(p, t0, marks, own):
    ev = [{"name": m, "ph": "i", "s": "g", "ts": t0 + 7919 * k, "pid": 1, "tid": 1} for k, m in enumerate(marks)]
    ev += [{"name": n, "ph": "X", "ts": t0 + 1000 * (i + 1), "dur": 500, "pid": 1, "tid": 1} for i, n in enumerate(own)]
    with open(p, "w") as f:
        json.dump({"traceEvents": ev}, f)
one, twenty = sys.argv[1], sys.argv[2]
os.makedirs(one); os.makedirs(twenty)
tr(one + "/a.json", 12_000_000_000, ["Marker"], ["x"])
tr(one + "/b.json", 897_525_650_000, ["Marker"], ["y"])
marks = ["mark%02d" % i for i in range(20)]
tr(twenty + "/a.json", 5_000_000, marks, ["x"])
tr(twenty + "/b.json", 5_000_000 - 123_456, marks, ["y"])  # b = a - 123.456 ms
PY
o=$("$TM" align "$t/one/a.json" "$t/one/b.json" 2>&1)
j=$("$TM" align --json "$t/one/a.json" "$t/one/b.json" 2>/dev/null |
	python3 -c 'import json,sys; e=json.load(sys.stdin)["estimates"][0]; print(e["quality"], e["offerable"])')
echo "$o" | grep -q "b.json vs a.json: not enough evidence: one match (1 name both saw, 0 flow/async ids, 0 send/receive pairs) agrees with any offset; not offered (it would be -885525.65 s)" &&
	! echo "$o" | grep -q -- "--offset" && [ "$j" = "not enough evidence False" ] &&
	ok "one shared marker: not enough evidence, not offered" || no "one shared marker" "$j $o"
o=$("$TM" align --solve -o "$t/one.json" "$t/one/a.json" "$t/one/b.json" 2>&1)
echo "$o" | grep -q "solve (tracemerge): 0 edits" && ok "one shared marker: solve offers nothing" ||
	no "one shared marker: solve offers nothing" "$o"
o=$("$TM" align "$t/twenty/a.json" "$t/twenty/b.json" 2>&1)
echo "$o" | grep -q "b.json vs a.json: +123.456 ms \[exact\] bounds +123.456 ms .. +123.456 ms" &&
	echo "$o" | grep -q "20 instants both saw (20 names)" && echo "$o" | grep -q -- "--offset b.json=+123.456ms@a.json" &&
	ok "20 shared markers: the exact shift, labelled exact" || no "20 shared markers: exact" "$o"

# --pair's #N counts in time order, as the pair picker shows it, past 32 too:
# b.json holds its 50 "tap"s newest first, a.json oldest first, b = a - 5 ms.
python3 - "$t" <<'PY'
import json, os, sys
t = sys.argv[1]
os.makedirs(t + "/order")
def tr(path, base, n, reverse):
    evs = [{"ph": "i", "s": "g", "name": "tap", "pid": 1, "tid": 1, "ts": base + 1000 * i} for i in range(n)]
    if reverse:
        evs.reverse()
    json.dump({"traceEvents": evs}, open(path, "w"))
tr(t + "/order/a.json", 100_000, 50, False)
tr(t + "/order/b.json", 95_000, 50, True)
os.makedirs(t + "/many")
tr(t + "/many/a.json", 100_000, 150, False)
tr(t + "/many/b.json", 95_000, 150, False)
PY
for n in 3 40; do
	js=$("$TM" align --json --pair "b.json:tap#$n=a.json:tap#$n" "$t/order/a.json" "$t/order/b.json" 2>&1)
	[ "$(echo "$js" | field quality 2>/dev/null)" = declared ] && [ "$(echo "$js" | field offset_ns 2>/dev/null)" = 5000000 ] &&
		ok "--pair #$n counts in time order" || no "--pair #$n in time order" "$js"
done
o=$("$TM" align --pair "b.json:tap#60=a.json:tap#1" "$t/order/a.json" "$t/order/b.json" 2>&1)
echo "$o" | grep -q "no occurrence 60 of 'tap' in b.json (it has 50)" && ok "--pair past the last occurrence" ||
	no "--pair past the last occurrence" "$o"
o=$("$TM" align --pair "b.json:tap#140=a.json:tap#140" "$t/many/a.json" "$t/many/b.json" 2>&1)
echo "$o" | grep -q "occurrence 140 of 'tap' in b.json: the file has 150, but tracemerge keeps the times of the first 128 only" &&
	ok "--pair past the occurrences kept says so" || no "--pair past the occurrences kept" "$o"
