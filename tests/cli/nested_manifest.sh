#!/usr/bin/env bash
# A manifest's files[].path against members of nested archives, for each
# nesting kind (ZIP in TAR, TAR in ZIP, a gzip'd member), as trace_processor
# resolves it (docs/semantics.md, "Manifests"):
#  - a file gets its entry by its own trace_file name when its turn comes
#    (ForwardingTraceParser::FindManifestEntry): a nested member by its bare
#    name, never by "container/name"; a gzip'd member's inflated stream is
#    named "" and gets no entry;
#  - a TraceFile-clock reference (a PIN source, a sync_to without clock) is
#    resolved when the manifest is applied (ApplyManifest,
#    find_trace_file_id), when only the manifest's siblings have rows: a
#    nested member is not found;
#  - an override on a container fails the import.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 - "$TM" "$t" <<'PY'
import gzip, io, json, os, subprocess, sys, tarfile, zipfile

tm, tmp = sys.argv[1], sys.argv[2]

def tar_bytes(members):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for n, data in members:
            ti = tarfile.TarInfo(n)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 0
            tf.addfile(ti, io.BytesIO(data))
    return b.getvalue()

def zip_bytes(members):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        for n, data in members:
            z.writestr(n, data)
    return b.getvalue()

def js(ts):
    return json.dumps({"traceEvents": [{"ph": "X", "name": "e%d" % ts, "ts": ts, "dur": 1,
                                        "pid": 1, "tid": 1}]}).encode()

def man(files):
    return json.dumps({"perfetto_manifest": {"version": 1, "files": files}}).encode()

A, B = js(10), js(20)
# (outer writer, inner name, inner bytes (holding a.json), inner member name)
KINDS = {
    "ZIP in TAR": (tar_bytes, "inner.zip", zip_bytes([("a.json", A)])),
    "TAR in ZIP": (zip_bytes, "inner.tar", tar_bytes([("a.json", A)])),
}
n = 0

def check(outer, members):
    global n
    n += 1
    path = os.path.join(tmp, "case%d" % n)
    with open(path, "wb") as f:
        f.write(outer(members))
    p = subprocess.run([tm, "check", "--json", path], capture_output=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": "no JSON: " + p.stderr.decode(errors="replace")}

def machine_of(r, name):
    for f in r.get("files", []):
        if f.get("path") == name:
            ms = f.get("machines") or []
            return [r["machines"][m].get("name") for m in ms]
    return None

def result(name, ok, why=""):
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else ": " + why))

UNRESOLVED = ("perfetto_manifest: clocks: could not resolve file 'a.json'. It must match the "
              "`path` of an entry in the `files` array.")

for kind, (outer, inner, inner_bytes) in KINDS.items():
    def case(files):
        return check(outer, [("m.json", man(files)), (inner, inner_bytes), ("b.json", B)])

    r = case([{"path": "a.json", "machine": {"name": "m1"}}])
    result(kind + ": a nested member gets the entry of its bare name",
           not r.get("error") and machine_of(r, "a.json") == ["m1"], json.dumps(r)[:400])

    r = case([{"path": inner + "/a.json", "machine": {"name": "m1"}}])
    result(kind + ": container/name matches no trace file: no effect",
           not r.get("error") and machine_of(r, "a.json") == [None], json.dumps(r)[:400])

    r = case([{"path": "b.json", "clocks": {"sync_to": {"file": "a.json"}, "offset_ns": 5}},
              {"path": "a.json"}])
    result(kind + ": a PIN to a nested member's own clock cannot be resolved",
           UNRESOLVED in (r.get("error") or ""), json.dumps(r)[:400])

    r = case([{"path": "a.json", "clocks": {"sync_to": {"file": "b.json"}, "offset_ns": 5}},
              {"path": "b.json"}])
    result(kind + ": a nested member cannot be PIN'd",
           UNRESOLVED in (r.get("error") or ""), json.dumps(r)[:400])

    r = case([{"path": inner, "machine": {"name": "m1"}}])
    result(kind + ": an override on the container fails the import",
           "overrides are not supported for trace files which are themselves archives or "
           "perfetto_manifest files: " + inner in (r.get("error") or ""), json.dumps(r)[:400])

    # the same PIN on a top-level member resolves
    r = check(outer, [("m.json", man([{"path": "b.json", "clocks": {"sync_to": {"file": "a.json"},
                                                                    "offset_ns": 5}},
                                      {"path": "a.json"}])), ("a.json", A), ("b.json", B)])
    result(kind + ": the same PIN on top-level members resolves", not r.get("error"),
           json.dumps(r)[:400])

def gz_case(files):
    return check(tar_bytes, [("m.json", man(files)), ("a.json.gz", gzip.compress(A)), ("b.json", B)])

r = gz_case([{"path": "a.json", "machine": {"name": "m1"}}])
result("gzip: the inflated stream is named \"\": no entry applies",
       not r.get("error") and machine_of(r, "") == [None], json.dumps(r)[:400])

r = gz_case([{"path": "b.json", "clocks": {"sync_to": {"file": "a.json"}, "offset_ns": 5}},
             {"path": "a.json"}])
result("gzip: a PIN to the inner name cannot be resolved", UNRESOLVED in (r.get("error") or ""),
       json.dumps(r)[:400])

r = gz_case([{"path": "b.json", "clocks": {"sync_to": {"file": "a.json.gz"}, "offset_ns": 5}},
             {"path": "a.json.gz"}])
result("gzip: a PIN to the member's own name resolves (its container row)", not r.get("error"),
       json.dumps(r)[:400])

r = gz_case([{"path": "a.json.gz", "machine": {"name": "m1"}}])
result("gzip: an override on the gzip'd member fails the import",
       "overrides are not supported for trace files which are themselves archives or "
       "perfetto_manifest files: a.json.gz" in (r.get("error") or ""), json.dumps(r)[:400])
PY
