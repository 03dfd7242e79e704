#!/usr/bin/env bash
# Static checks: the engine layer stays free of terminal code, the man pages lint clean.
set -u
SAN=${1:-build/asan}
if grep -rlE --include='*.[ch]' '#include <(n?curses|readline)' engine >/dev/null 2>&1; then
	echo "FAIL: layers: engine/ includes curses or readline"
else
	echo "PASS: layers: no curses/readline include in engine/"
fi
# The engine's stages call only downward and no two files call each other
# round (tools/layers.sh: includes, the objects' symbols, cycles).
"$(dirname "$0")/../tools/layers.sh" "$SAN"
bad=$(nm -u "$SAN/libtmengine.a" 2>/dev/null | awk '{print $2}' |
	grep -E '^(initscr|newterm|wgetch|readline|rl_[a-z_]+|printf|puts|putchar|exit|fputs|fprintf|vprintf)$' | sort -u | tr '\n' ' ')
if [ -n "$bad" ]; then echo "FAIL: layers: engine calls $bad"; else echo "PASS: layers: engine does not print, exit or use the terminal"; fi
# The library exports only tm_ names (protoc-c's perfetto__ names and the
# compiler's __ names aside), so it links next to anything.
bad=$(nm -g --defined-only "$SAN/libtmengine.a" 2>/dev/null | awk 'NF == 3 {print $3}' |
	grep -vE '^(tm_|perfetto__|__)' | sort -u | tr '\n' ' ')
if [ -n "$bad" ]; then echo "FAIL: symbols: unprefixed exports: $bad"; else echo "PASS: symbols: the engine exports only tm_ names"; fi
# References resolve inside the repository: comments cite trace_processor's
# sources or docs/semantics.md, never a document outside it.
# (git grep in a checkout; the files on disk, build/ aside, in a copy of the
# tree without .git, so a copy never passes on nothing)
cite_re='engine-semantics|§|ui-features|design\.md|style\.md|perf-anchors|shared/hostile|hostile/D[0-9]'
src_top=$(cd "$(dirname "$0")/.." && pwd)
if git -C "$src_top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	cites=$(git -C "$src_top" grep -lE "$cite_re" -- engine tui tests tools man README.md docs Makefile ':!tests/static.sh' | tr '\n' ' ')
else
	cites=$(cd "$src_top" && grep -rlE "$cite_re" --exclude=static.sh --exclude-dir=out engine tui tests tools man README.md docs Makefile | tr '\n' ' ')
fi
if [ -n "$cites" ]; then echo "FAIL: references: outside documents cited in $cites"; else echo "PASS: references: no source cites a document outside the repository"; fi
for m in man/*.[15]; do
	[ -f "$m" ] || continue
	if out=$(mandoc -Tlint -Wwarning "$m" 2>&1) && [ -z "$out" ]; then
		echo "PASS: man: $m lints clean"
	else
		echo "FAIL: man: $m: $(echo "$out" | head -3 | tr '\n' ' ')"
	fi
done
# The pages as man-db shows them on an 80-column terminal (groff): a line
# groff cannot break is a warning on the reader's screen.
if command -v groff >/dev/null 2>&1; then
	for m in man/*.[15]; do
		[ -f "$m" ] || continue
		if out=$(groff -Tutf8 -mdoc -ww -z -rLL=78n "$m" 2>&1) && [ -z "$out" ]; then
			echo "PASS: man: $m renders without a groff warning at 80 columns"
		else
			echo "FAIL: man: $m: $(echo "$out" | head -3 | tr '\n' ' ')"
		fi
	done
else
	echo "SKIP: man: groff: no groff (apt-get install groff-base)"
fi
# The tree read by clang with the project's -Werror warnings (make
# clang-check, syntax only): gcc alone let a comment-annotated fall-through
# through that clang rejects.
if command -v "${CLANG:-clang}" >/dev/null 2>&1; then
	if out=$(make -s --no-print-directory -C "$(dirname "$0")/.." clang-check 2>&1); then
		echo "PASS: clang: the tree builds warning-free under clang -Werror (syntax)"
	else
		echo "FAIL: clang: $(echo "$out" | grep -m3 -E 'error|warning' | tr '\n' ' ')"
	fi
else
	echo "SKIP: clang: no clang"
fi
