#!/usr/bin/env bash
# The engine's stages call only downward: reads every #include "x.h" of
# engine/ and, given a build (default build/rel), every symbol an engine
# object uses from another, and fails on
#   - a file including a header of a stage above its own,
#   - an object using a symbol defined in a stage above its own,
#   - a cycle between files (includes, or calls between objects).
# The stages, bottom to top (engine/tracemerge.h, the public header, is
# below them all):
STAGES="util stream scan input manifest replay session align"
# Known exceptions, each to be removed by the change that fixes it (a new
# one fails; one fixed and still listed is reported, so the list shrinks);
# one per line, "engine/A/x.c->engine/B/y.h".  None today.
KNOWN=""
# Usage: tools/layers.sh [BUILD_DIR]   (prints PASS/FAIL lines; exit 1 on FAIL)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
build=${1:-build/rel}
fail=0
known_hit=
is_known() { # a->b: listed in KNOWN (noted)
	if printf '%s\n' "$KNOWN" | grep -qxF "$1"; then
		case " $known_hit " in *" $1 "*) ;; *) known_hit="$known_hit $1" ;; esac
		return 0
	fi
	return 1
}
declare -A rank
i=1
for s in $STAGES; do rank[$s]=$i; i=$((i + 1)); done
stage_of() { # engine/STAGE/file -> STAGE ("" at engine/ top)
	local p=${1#engine/}
	case $p in */*) echo "${p%%/*}" ;; *) echo "" ;; esac
}
rank_of() { local s; s=$(stage_of "$1"); [ -z "$s" ] && echo 0 || echo "${rank[$s]:-99}"; }
# every engine file is in a known stage
for f in $(find engine -name '*.[ch]' | sort); do
	s=$(stage_of "$f")
	if [ -n "$s" ] && [ -z "${rank[$s]:-}" ]; then
		echo "FAIL: layers: $f is in no known stage (tools/layers.sh STAGES)"; fail=1
	fi
done
declare -A where
for f in $(find engine -name '*.h'); do where[$(basename "$f")]=$f; done
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
# includes
bad=
for f in $(find engine -name '*.[ch]' | sort); do
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		hp=${where[$(basename "$h")]:-}
		[ -n "$hp" ] || continue # generated (trace.pb-c.h) or a system header
		[ "$hp" = "$f" ] && continue
		echo "$f $hp" >>"$edges"
		if [ "$(rank_of "$hp")" -gt "$(rank_of "$f")" ] && ! is_known "$f->$hp"; then
			bad="$bad $f->$hp"
		fi
	done
done
if [ -n "$bad" ]; then echo "FAIL: layers: includes of a stage above:$bad"; fail=1
else echo "PASS: layers: every include is of the file's stage or one below"; fi
# calls (symbols used across objects)
if ls "$build"/engine/*/*.o >/dev/null 2>&1; then
	defs=$(mktemp); uses=$(mktemp)
	for o in $(find "$build/engine" -name '*.o' | sort); do
		src=engine/${o#"$build"/engine/}; src=${src%.o}.c
		[ -f "$src" ] || continue # a stale object of a moved file
		nm --defined-only -g "$o" | awk -v f="$src" 'NF == 3 {print $3, f}' >>"$defs"
		nm -u "$o" | awk -v f="$src" '{print $2, f}' >>"$uses"
	done
	sort -o "$defs" "$defs"; sort -o "$uses" "$uses"
	calls=$(join "$uses" "$defs" | awk '$2 != $3 {print $2, $3, $1}' | sort -u)
	rm -f "$defs" "$uses"
	bad=
	while read -r a b sym; do
		[ -n "$a" ] || continue
		echo "$a $b" >>"$edges"
		if [ "$(rank_of "$b")" -gt "$(rank_of "$a")" ] && ! is_known "$a->$b"; then
			bad="$bad $a->$b($sym)"
		fi
	done <<<"$calls"
	if [ -n "$bad" ]; then echo "FAIL: layers: calls into a stage above:$bad"; fail=1
	else echo "PASS: layers: every call goes to the caller's stage or one below"; fi
else
	echo "SKIP: layers: calls: no objects under $build/engine (make first)"
	calls_skipped=1
fi
# cycles between files (tsort names the files of each loop)
if loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null) && [ -z "$loops" ]; then
	echo "PASS: layers: no cycle between engine files"
else
	echo "FAIL: layers: cycle between files: $(echo "$loops" | grep -v 'input contains a loop' | sed 's/^tsort: //' | tr '\n' ' ')"
	fail=1
fi
stale=
[ -z "${calls_skipped:-}" ] && while read -r k; do
	[ -n "$k" ] || continue
	case " $known_hit " in *" $k "*) ;; *) stale="$stale $k" ;; esac
done <<<"$KNOWN"
[ -z "$known_hit" ] || echo "note: layers: known exceptions still there:$known_hit"
if [ -n "$stale" ]; then echo "FAIL: layers: fixed, remove from KNOWN:$stale"; fail=1; fi
exit $fail
