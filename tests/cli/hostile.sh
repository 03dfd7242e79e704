#!/usr/bin/env bash
# Hostile input at the batch commands (ls, check, manifest, merge): no raw
# control, C1 or bidi character reaches the terminal (text through the one
# escaping function, JSON with \u escapes); a huge member name cannot push
# the reason out of an error; check's text report is linear in members;
# merge validates the archive it wrote; ls fails on an archive-level error.
# Fixtures in tests/cli/hostile/ (see README there).
set -u
TM=${TM_BIN:-build/asan/tracemerge}
H=$(cd "$(dirname "$0")" && pwd)/hostile
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export LC_ALL=C.UTF-8
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }

# unsafe FILE: exit 0 when FILE holds a byte or character a terminal would
# interpret (C0 other than newline, DEL, C1, bidi controls, invalid UTF-8).
unsafe() {
	python3 - "$1" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
try:
    s = b.decode("utf-8")
except UnicodeDecodeError:
    sys.exit(0)
bad = set(range(0x20)) - {0x0a}
bad |= {0x7f} | set(range(0x80, 0xa0)) | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))
bad |= {0x200e, 0x200f, 0x061c}
sys.exit(0 if any(ord(c) in bad for c in s) else 1)
PY
}

# 1. trace_processor's error texts quote trace bytes, keys, member names and
#    manifest values: printed escaped, the reason still there.
for f in json_number_quote.json json_key_quote.json zip_crc_escname.zip manifest_badref.tar longname_esc.tar; do
	for cmd in ls check manifest merge; do
		if [ $cmd = merge ]; then
			"$TM" merge --force -o "$t/out.tar" "$H/$f" >"$t/o" 2>&1
		else
			"$TM" $cmd "$H/$f" >"$t/o" 2>&1
		fi
		if unsafe "$t/o"; then
			no "escaped: $cmd $f" "$(head -c 300 "$t/o" | od -c | head -5 | tr '\n' ' ')"
		else
			ok "escaped: $cmd $f"
		fi
	done
done
"$TM" check "$H/json_number_quote.json" >"$t/o" 2>&1
grep -qF "Invalid number: expected digit after 'e' in '1e\\x1b]52;c;aGk=\\x07\\x1b[2J" "$t/o" &&
	ok "escaped error keeps trace_processor's text" || no "escaped error keeps trace_processor's text" "$(head -c 300 "$t/o")"
"$TM" check --json "$H/json_number_quote.json" >"$t/o" 2>&1
python3 - "$t/o" <<'PY' && ok "JSON keeps the exact text" || no "JSON keeps the exact text" "$(head -c 300 "$t/o")"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if "in '1e\x1b]52;c;aGk=\x07\x1b[2J," in d["error"] else 1)
PY
"$TM" manifest "$H/manifest_badref.tar" >"$t/o" 2>&1; rc=$?
[ $rc = 2 ] && grep -qF "unknown file 'zz\\x1b[2J\\x1b]52;c;aGk=\\x07\\x07\\r\\x08\\u202e'" "$t/o" &&
	ok "manifest error escaped" || no "manifest error escaped" "rc=$rc $(head -c 300 "$t/o")"

# 2. JSON output: C1 (U+009B CSI) and bidi controls (U+202E) as \u escapes
mkdir "$t/z" && printf '{"traceEvents":[]}' >"$t/z/$(printf 'n\xc2\x9b2J\xe2\x80\xae\xe2\x81\xa6.json')"
(cd "$t/z" && zip -q ../c1.zip ./*.json)
for cmd in "ls --json" "check --json"; do
	# shellcheck disable=SC2086
	"$TM" $cmd "$t/c1.zip" >"$t/o" 2>/dev/null
	if unsafe "$t/o"; then
		no "$cmd escapes C1 and bidi" "$(head -c 300 "$t/o")"
	elif python3 - "$t/o" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = [m["name"] for m in d["members"]] if "members" in d else [f["path"] for f in d["files"]]
sys.exit(0 if "n\u009b2J\u202e\u2066.json" in names else 1)
PY
	then ok "$cmd escapes C1 and bidi"; else no "$cmd escapes C1 and bidi" "name lost: $(head -c 300 "$t/o")"; fi
done
printf '{"perfetto_manifest":{"version":1,"files":[{"path":"a.json","machine":{"name":"m\xc2\x9b2J\xe2\x80\xae"}}]}}' >"$t/m.json"
printf '{"traceEvents":[]}' >"$t/a.json"
"$TM" manifest --manifest "$t/m.json" "$t/a.json" >"$t/o" 2>&1
if unsafe "$t/o"; then no "manifest output escapes C1 and bidi" "$(head -c 300 "$t/o")"
elif python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["perfetto_manifest"]["files"][0]["machine"]["name"] == "m\u009b2J\u202e" else 1)' "$t/o"
then ok "manifest output escapes C1 and bidi"; else no "manifest output escapes C1 and bidi" "$(head -c 300 "$t/o")"; fi

# 3. a 1 MiB member name (GNU long name) does not push the reason out of
#    merge's error: the name is shortened (head...tail), the reason kept.
python3 - "$t/long.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as tf:
    data = b"\x0a\x0d\x08\x01\x10\x64\x32\x07\x0a\x05\x08\x01\x10\x90\x4e"[:15]
    ti = tarfile.TarInfo("A" * ((1 << 20) - 1))
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))
PY
"$TM" merge -o "$t/long-out.tar" "$t/long.tar" >"$t/o" 2>"$t/e"; rc=$?
n=$(wc -c <"$t/e")
[ $rc = 2 ] && grep -Eq "member name of 104857[0-9] bytes does not fit a ustar header" "$t/e" && [ "$n" -lt 1024 ] &&
	grep -q "AAAA…AAAA" "$t/e" && ok "long name shortened, reason kept" || no "long name shortened, reason kept" "rc=$rc $n bytes: $(head -c 200 "$t/e")"

# 4. merge validates the TAR it wrote: the input's symlink members make
#    trace_processor abort, the written TAR drops them and opens cleanly.
"$TM" merge -o "$t/d11.tar" "$H/D11_merge_validates_input_symlink.tar" >"$t/o" 2>&1; rc=$?
"$TM" check "$t/d11.tar" >/dev/null 2>&1; crc=$?
[ $rc = 0 ] && [ $crc = 0 ] && grep -q "Validation: Nothing dropped" "$t/o" &&
	ok "merge validates what it wrote" || no "merge validates what it wrote" "merge rc=$rc, check of the output rc=$crc: $(cat "$t/o")"

# 5. ls: an archive-level fatal error is an error (exit 2, message)
"$TM" ls "$H/D11_merge_validates_input_symlink.tar" >"$t/o" 2>"$t/e"; rc=$?
[ $rc = 2 ] && grep -q "would fail to open: trace_processor aborts" "$t/e" && grep -q "byte 0x400" "$t/e" &&
	ok "ls fails on an archive-level error" || no "ls fails on an archive-level error" "rc=$rc $(cat "$t/e")"
"$TM" ls --json "$H/D11_merge_validates_input_symlink.tar" >"$t/o" 2>/dev/null; rc=$?
[ $rc = 2 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if "aborts" in d["error"] and d["error_where"] else 1)' "$t/o" &&
	ok "ls --json reports the archive-level error" || no "ls --json reports the archive-level error" "rc=$rc $(head -c 300 "$t/o")"
"$TM" ls "$H/longname_esc.tar" >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && ok "ls of a sound archive exits 0" || no "ls of a sound archive exits 0" "rc=$rc"

# 6. check's text report is linear in members: 100,000 members take about
#    what --json takes (the text loop was orders x files).  CPU seconds,
#    relative to the JSON run of the same input, with a wide margin.
python3 - "$t/many.tar.gz" <<'PY'
import gzip, io, sys, tarfile
with gzip.open(sys.argv[1], "wb", compresslevel=1) as gz:
    with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for i in range(100000):  # empty members, as in the reproducer
            tf.addfile(tarfile.TarInfo("m%06d.json" % i), io.BytesIO(b""))
PY
cpu() { # cpu seconds (user+sys) of a command, output discarded
	local f="$t/time"
	/usr/bin/env time -f '%U %S' -o "$f" "$@" >/dev/null 2>&1
	tail -n 1 "$f" | awk '{ print $1 + $2 }' # after "Command exited with non-zero status"
}
if [ -x /usr/bin/time ]; then
	j=$(cpu "$TM" check --json "$t/many.tar.gz")
	x=$(timeout 600 /usr/bin/time -f '%U %S' -o "$t/time2" "$TM" check "$t/many.tar.gz" >"$t/o" 2>&1
		tail -n 1 "$t/time2" | awk '{ print $1 + $2 }')
	lines=$(grep -c '^timeline: ' "$t/o")
	if [ "$lines" = 1 ] && awk -v j="$j" -v x="$x" 'BEGIN { exit !(x < 3 * j + 5) }'; then
		ok "check text is linear in members"
	else
		no "check text is linear in members" "text ${x}s CPU, --json ${j}s, report complete: $lines"
	fi
else
	echo "SKIP: check text is linear in members: no /usr/bin/time"
fi

# 7. stdout that cannot be written (/dev/full): non-zero exit and a message,
#    never exit 0 with a lost report
for cmd in "ls" "ls --json" "check" "check --json" "manifest"; do
	# shellcheck disable=SC2086
	"$TM" $cmd "$H/longname_esc.tar" >/dev/full 2>"$t/e"; rc=$?
	[ $rc = 2 ] && grep -q "cannot write to standard output: No space left on device" "$t/e" &&
		ok "$cmd to /dev/full fails" || no "$cmd to /dev/full fails" "rc=$rc $(cat "$t/e")"
done

# 8. merge -o onto what is not a regular file: refused, left as it was
printf '{"traceEvents":[]}' >"$t/a.json"
mkfifo "$t/fifo.tar"
ln -s /dev/null "$t/null.tar"
ln -s /proc/self/fd/1 "$t/fd1.tar"
mkdir "$t/dir.tar"
for out in fifo.tar null.tar fd1.tar dir.tar; do
	# stdout a pipe: /proc/self/fd/1 is then a FIFO too
	"$TM" merge -o "$t/$out" "$t/a.json" 2>&1 </dev/null | cat >"$t/o"; rc=${PIPESTATUS[0]}
	# (a link is left as it was: -f alone would follow fd1.tar to whatever
	# this script's own stdout is, a regular file under tests/run.sh)
	if [ $rc = 2 ] && grep -q "refusing to replace it" "$t/o" &&
		{ [ -L "$t/$out" ] || ! [ -f "$t/$out" ]; } &&
		[ -z "$(ls -A "$t" | grep "\.$out\.tmp-")" ]; then
		ok "merge -o $out refused"
	else
		no "merge -o $out refused" "rc=$rc $(cat "$t/o") $(ls -la "$t/$out")"
	fi
done
[ -p "$t/fifo.tar" ] && [ -L "$t/null.tar" ] && [ -L "$t/fd1.tar" ] && ok "special outputs untouched" ||
	no "special outputs untouched" "$(ls -la "$t")"

# 9. a merge interrupted by SIGINT, SIGTERM or SIGHUP removes its hidden temp
#    file and dies of the signal.  A sparse 2 GiB input keeps it writing
#    long enough; the signal is sent as soon as the temp file shows.
truncate -s 2G "$t/big.bin"
for sig in INT TERM HUP; do
	mkdir -p "$t/sig$sig"
	# an interactive shell's SIGINT is ignored in background jobs: reset it
	timeout -s KILL 120 python3 -c 'import os,signal,sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
		"$TM" merge --no-validate -o "$t/sig$sig/m.tar" "$t/big.bin" "$t/a.json" >/dev/null 2>"$t/e" &
	p=$!
	for _ in $(seq 400); do
		ls -A "$t/sig$sig" | grep -q '\.tmp-' && break
		sleep 0.05
	done
	kill -s "$sig" $p 2>/dev/null
	wait $p; rc=$?
	left=$(ls -A "$t/sig$sig")
	want=$((128 + $(kill -l "$sig")))
	[ $rc = $want ] && [ -z "$left" ] && grep -q "interrupted by signal" "$t/e" &&
		ok "merge interrupted by SIG$sig leaves no temp file" ||
		no "merge interrupted by SIG$sig leaves no temp file" "rc=$rc (want $want), left: $left; $(cat "$t/e")"
done
rm -f "$t/big.bin"

# Out of memory says what ran out before the abort (release build: ASan
# reserves more address space than any useful ulimit -v).
REL=${TM_BIN_REL:-build/rel/tracemerge}
oom_said=0 oom_silent=0
for v in 60000 80000 100000 120000 160000; do
	(ulimit -v $v; "$REL" check "$t/many.tar.gz" >/dev/null 2>"$t/oom") 2>/dev/null
	rc=$?
	if [ $rc = 134 ] || [ $rc = 6 ]; then
		if grep -q 'out of memory (could not allocate' "$t/oom"; then oom_said=$((oom_said + 1))
		else oom_silent=$((oom_silent + 1)); fi
	fi
done
if [ $oom_silent = 0 ] && [ $oom_said -gt 0 ]; then ok "out of memory is said before the abort"
elif [ $oom_said = 0 ] && [ $oom_silent = 0 ]; then echo "SKIP: out of memory: no limit made the run fail"
else no "out of memory is said before the abort" "$oom_silent silent aborts: $(head -c 200 "$t/oom")"; fi

# Nesting deeper than tracemerge expands: merge's validation must not say
# "all traces line up" (the prediction is incomplete), and --strict fails.
"$TM" merge -o "$t/d2.tar" "$H/D2_nested9_silent_ok.tar" >"$t/d2.out" 2>"$t/d2.err"; rc=$?
"$TM" merge --strict -o "$t/d2s.tar" "$H/D2_nested9_silent_ok.tar" >/dev/null 2>&1; rcs=$?
if [ $rc = 0 ] && [ $rcs = 1 ] && ! grep -q 'Validation: Nothing dropped' "$t/d2.out" "$t/d2.err" &&
	grep -q 'incomplete' "$t/d2.err"; then ok "merge of a too-deep archive is not 'all traces line up'"
else no "merge of a too-deep archive is not 'all traces line up'" "rc=$rc strict=$rcs $(cat "$t/d2.out" "$t/d2.err" | head -c 300)"; fi

# Where an error comes from is the report's, not a guess from its text: a
# JSON trace whose parse error quotes the key "perfetto_manifest" is not a
# "Manifest error" in the workbench, a truncated manifest (whose error does
# not say perfetto_manifest) is; check --json says which (error_in_manifest).
printf '{"traceEvents":[{"ph":"i","ts":5,"pid":1,"tid":1,"perfetto_manifest" 1}]}' >"$t/pm.json"
wb_err() { # input...: the workbench's verdict line, headless
	printf ':dump-screen %s/wb.screen\n:quit-now\n' "$t" >"$t/wb.script"
	rm -f "$t/wb.screen"
	(cd "$t" && HOME="$t" XDG_STATE_HOME="$t/st" XDG_CONFIG_HOME="$t/c" TM_CONFIG=/dev/null TM_HEADLESS=1 \
		LINES=24 COLUMNS=100 timeout 60 "$TM" --script "$t/wb.script" "$@" >/dev/null 2>&1)
	grep -m1 '^ERR ' "$t/wb.screen" 2>/dev/null
}
e1=$(wb_err "$t/pm.json")
e2=$(wb_err "$H/embedded_truncated.tar")
case $e1 in "ERR Trace parse failure: Failure parsing JSON: Expected ':' after key 'perfetto_manifest'"*)
	ok "workbench: a trace's parse error is not a manifest error";;
	*) no "workbench: a trace's parse error is not a manifest error" "$e1";; esac
case $e2 in "ERR Manifest error: Trace parse failure: Failed to parse object: "*)
	ok "workbench: a truncated manifest is a manifest error";;
	*) no "workbench: a truncated manifest is a manifest error" "$e2";; esac
j1=$("$TM" check --json "$t/pm.json" 2>/dev/null)
j2=$("$TM" check --json "$H/embedded_truncated.tar" 2>/dev/null)
if echo "$j1" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["error"] and d["error_in_manifest"] is False and d["error_is_ours"] is False else 1)' &&
	echo "$j2" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["error_in_manifest"] is True and "byte 56" in d["hint"] else 1)'
then ok "check --json: error_in_manifest"; else no "check --json: error_in_manifest" "$(echo "$j1" | head -c 200) / $(echo "$j2" | head -c 200)"; fi

# Our own failures are never passed off as trace_processor's: running out of
# file descriptors while scanning loose files (EMFILE) is tracemerge's error
# (text verdict, error_is_ours in the JSON), never a predicted failure.  The
# members of one TAR share the archive's descriptor, so the same limit leaves
# a TAR's prediction intact.
mkdir -p "$t/fd"
python3 - "$t/fd" "$t/fd.tar" <<'PY'
import io, os, sys, tarfile
# files big enough that two scan threads read at the same time
ev = b'{"traceEvents":[' + b",".join(
    b'{"ph":"i","ts":%d,"pid":1,"tid":1,"name":"x","s":"g"}' % i for i in range(4000)) + b"]}"
with tarfile.open(sys.argv[2], "w", format=tarfile.USTAR_FORMAT) as tf:
    for i in range(20):
        with open(os.path.join(sys.argv[1], "m%02d.json" % i), "wb") as f:
            f.write(ev)
        ti = tarfile.TarInfo("m%02d.json" % i)
        ti.size = len(ev)
        tf.addfile(ti, io.BytesIO(ev))
PY
hit=0 bad=""
# new descriptors take the lowest free numbers below the limit: a few above
# 0-2 leave room to start but not to open every file at once
for n in 4 4 4 5 5 6 7 8; do # (which file fails depends on the scan threads)
	(ulimit -n "$n"; exec "$TM" check --no-cache "$t"/fd/m*.json) >"$t/fd.txt" 2>&1
	(ulimit -n "$n"; exec "$TM" check --no-cache --json "$t"/fd/m*.json) >"$t/fd.json" 2>/dev/null
	grep -q 'Too many open files' "$t/fd.txt" || continue
	hit=$((hit + 1))
	head -1 "$t/fd.txt" | grep -q '^tracemerge cannot predict this import: .*Too many open files' ||
		bad="$bad [ulimit -n $n text: $(head -c 200 "$t/fd.txt")]"
	if grep -q 'Too many open files' "$t/fd.json"; then
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["error_is_ours"] is True and not d["ok"] else 1)' "$t/fd.json" 2>/dev/null ||
			bad="$bad [ulimit -n $n json: $(head -c 200 "$t/fd.json")]"
	fi
done
if [ -n "$bad" ]; then no "EMFILE is ours, not trace_processor's" "$bad"
elif [ $hit = 0 ]; then echo "SKIP: EMFILE is ours, not trace_processor's: no limit made a file fail to open"
else ok "EMFILE is ours, not trace_processor's"; fi
(ulimit -n 4; exec "$TM" check --no-cache "$t/fd.tar") >"$t/fd.txt" 2>&1; rc=$?
if [ $rc = 0 ] && ! grep -q 'Too many open files' "$t/fd.txt"; then ok "a TAR's members share its descriptor"
else no "a TAR's members share its descriptor" "rc=$rc $(head -c 200 "$t/fd.txt")"; fi

# A cap of ours (a JSON token over 64 MiB) names the archive,
# the inflated stream and the member, and is ours in the JSON too.
"$TM" check "$H/D10_limit_error_no_member_name.tar.gz" >"$t/o" 2>&1; rc=$?
"$TM" check --json "$H/D10_limit_error_no_member_name.tar.gz" >"$t/o.json" 2>/dev/null
if [ $rc = 2 ] && head -1 "$t/o" | grep -q '^tracemerge cannot predict this import: .*D10_limit_error_no_member_name.tar.gz: (decompressed): b.json: byte 0x10: JSON token or event larger than 64 MiB' &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["error_is_ours"] is True and "b.json" in d["error"] else 1)' "$t/o.json"
then ok "cap error: named, and ours"; else no "cap error: named, and ours" "rc=$rc $(head -c 300 "$t/o")"; fi

# gzip inputs: trace_processor names the inflated stream "", the report
# names the file it comes from (the row, the timeline's owner, its why, and
# where a parse error is).
printf '{"traceEvents":[{"ph":"i","ts":5,"pid":1,"tid":1,"name":"x","s":"g"}]}' >"$t/gz.json"
gzip -c "$t/gz.json" >"$t/gz.json.gz"
printf '{"traceEvents":[{"ph":"i","ts":1e}]}' | gzip -c >"$t/bad.json.gz"
"$TM" check "$t/gz.json.gz" "$t/a.json" >"$t/o" 2>&1
"$TM" check "$t/bad.json.gz" >"$t/o2" 2>&1
if grep -q '^  json       "" (inflated gz.json.gz): 1 event' "$t/o" &&
	grep -q 'owned by "" (inflated gz.json.gz)$' "$t/o" &&
	grep -q '^  (tracemerge) "" (inflated gz.json.gz) is processed first' "$t/o" &&
	grep -q '^where (tracemerge): "" (inflated bad.json.gz), byte 16 (0x10)$' "$t/o2"
then ok "gzip inputs are named in the report"; else no "gzip inputs are named in the report" "$(cat "$t/o" "$t/o2" | head -c 600)"; fi
