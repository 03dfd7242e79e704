#!/usr/bin/env bash
# Members trace_processor names "" (checked against trace_processor v58.2):
# a TAR entry whose name is empty is a trace_file row named "" like a
# gzip member's inflated stream, parsed as any other member, and a
# manifest path "" names it.  tracemerge labels the two apart: the entry
# is not an inflated stream.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: member_names: $1"; }
no() { echo "FAIL: member_names: $1: $2"; }

python3 - "$t" <<'PY'
import gzip, sys
t = sys.argv[1]

def hdr(name, size, typ=b"0"):
    h = bytearray(512)
    h[0:len(name[:100])] = name[:100]
    h[100:108] = b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[156:157] = typ
    h[257:265] = b"ustar  \0"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)

def pad(b):
    return b + b"\0" * ((512 - len(b) % 512) % 512)

a = b'{"traceEvents":[{"name":"a","ph":"X","ts":1000,"dur":2,"pid":1,"tid":2}]}'
c = b'{"traceEvents":[{"name":"c","ph":"X","ts":5000,"dur":2,"pid":1,"tid":2}]}'
man = b'{"perfetto_manifest": {"version": 1, "files": [{"path": "", "machine": {"name": "M1"}}]}}'
with open(t + "/empty.tar", "wb") as f:
    f.write(hdr(b"perfetto_manifest.json", len(man)) + pad(man) + hdr(b"", len(a)) + pad(a) +
            hdr(b"b.json", len(c)) + pad(c) + b"\0" * 1024)
with open(t + "/lone.json.gz", "wb") as f:
    f.write(gzip.compress(a))
# GNU tar's long name: the 'L' record's size bytes, its NUL included
long = b"l" * 110 + b".json"
for v, path in (("nul", long + b"\\u0000"), ("plain", long)):
    m = b'{"perfetto_manifest": {"version": 1, "files": [{"path": "%s", "machine": {"name": "M1"}}]}}' % path
    with open(t + "/long-%s.tar" % v, "wb") as f:
        f.write(hdr(b"perfetto_manifest", len(m)) + pad(m) +
                hdr(b"././@LongLink", len(long) + 1, b"L") + pad(long + b"\0") +
                hdr(long, len(a)) + pad(a) + b"\0" * 1024)
PY

# trace_processor: the "" entry's slice on M1 (the manifest's path ""),
# b.json's on the host; both parsed
"$TM" check --no-cache "$t/empty.tar" >"$t/o" 2>&1
if grep -q '^  json       "" (an entry with no name in empty.tar): 1 event, 0 dropped,.* on machine 0 "M1"' "$t/o" &&
	grep -q '^  json       b.json: 1 event, 0 dropped,.* on machine 1$' "$t/o" && ! grep -q inflated "$t/o"; then
	ok "an entry named \"\" is not an inflated stream (check)"
else
	no "an entry named \"\" is not an inflated stream (check)" "$(head -c 600 "$t/o")"
fi
"$TM" ls "$t/empty.tar" >"$t/o" 2>&1
if grep -q ' json  *[0-9]*  "" (an entry with no name in empty.tar)$' "$t/o"; then
	ok "an entry named \"\" is not an inflated stream (ls)"
else
	no "an entry named \"\" is not an inflated stream (ls)" "$(head -c 600 "$t/o")"
fi
"$TM" ls "$t/lone.json.gz" >"$t/o" 2>&1
if grep -q ' json  *[0-9?]*  "" (inflated lone.json.gz)$' "$t/o"; then
	ok "a gzip member's stream is labelled inflated (ls)"
else
	no "a gzip member's stream is labelled inflated (ls)" "$(head -c 600 "$t/o")"
fi

# A GNU long name keeps its NUL (tar_trace_reader.cc): trace_processor
# v58.2 puts the member on M1 when the manifest's path ends in "\u0000"
# (machine table: M1 only), and leaves it on the host when it does not
# (M1 and the host).
"$TM" check --json --no-cache "$t/long-nul.tar" >"$t/o" 2>&1
"$TM" check --json --no-cache "$t/long-plain.tar" >"$t/p" 2>&1
m_of() { python3 -c 'import json,sys; print(" ".join(str(m["raw_id"]) for m in json.load(open(sys.argv[1]))["machines"]))' "$1" 2>/dev/null; }
if [ "$(m_of "$t/o")" = "4294967296" ] && [ "$(m_of "$t/p")" = "4294967296 0" ]; then
	ok "a manifest path ending in \\u0000 names a GNU long name"
else
	no "a manifest path ending in \\u0000 names a GNU long name" "nul: $(m_of "$t/o"); plain: $(m_of "$t/p"); $(head -c 300 "$t/o")"
fi
# and the manifest written back keeps it
"$TM" manifest "$t/long-nul.tar" >"$t/o" 2>&1
if grep -q '"path": *"l*\.json\\u0000"' "$t/o"; then
	ok "the manifest written keeps a path's \\u0000"
else
	no "the manifest written keeps a path's \\u0000" "$(head -c 400 "$t/o")"
fi
