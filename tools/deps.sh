#!/usr/bin/env bash
# Install (or check for) the Debian packages tracemerge needs, per target.
#   tools/deps.sh check [build|test]    exit 0 when everything is present
#   tools/deps.sh install [build|test]  apt-get install what is missing (root, or sudo -n)
# build: what `make` and `make demo` need (compiler, make, protoc-c, the libraries).
# test (the default): the build's part and every tool the tests call: the
# fuzz regressions and the clang-check build with clang and libFuzzer,
# manifest_scale counts with valgrind, the hostile cases time with
# /usr/bin/time, the containers are written with zstd, gzip, zip and
# bsdtar, the workbench runs in tmux, the man pages lint with mandoc,
# tests/static.sh reads the tree with git and renders the man pages with groff,
# a workbench test compiles a decimal-comma locale from the locales package.
set -u
BUILD_PKGS=(build-essential pkg-config libncurses-dev libreadline-dev libarchive-dev
            libprotobuf-c-dev protobuf-c-compiler libcjson-dev zlib1g-dev libisal-dev)
TEST_PKGS=(mandoc libarchive-tools tar gzip isal zstd zip unzip python3 tmux procps time
           valgrind clang libclang-rt-dev git groff-base locales)
BUILD_CMDS=(cc make pkg-config protoc-c)
TEST_CMDS=(mandoc bsdtar tar gzip igzip zstd python3 zip unzip tmux pgrep /usr/bin/time valgrind
           clang git groff)
MODULES=(ncursesw readline libarchive libprotobuf-c libcjson zlib)

action=${1:-check}
part=${2:-test}
case $part in
build) PKGS=("${BUILD_PKGS[@]}") CMDS=("${BUILD_CMDS[@]}") ;;
test) PKGS=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}") CMDS=("${BUILD_CMDS[@]}" "${TEST_CMDS[@]}") ;;
*) echo "usage: $0 check|install [build|test]" >&2; exit 64 ;;
esac

# Prints what is missing, one name a line: packages where dpkg knows them,
# else commands and pkg-config modules.
missing() {
	local m c
	if command -v dpkg-query >/dev/null 2>&1; then
		for c in "${PKGS[@]}"; do
			[ "$(dpkg-query -W -f='${db:Status-Status}' "$c" 2>/dev/null)" = installed ] || echo "$c"
		done
		return
	fi
	for c in "${CMDS[@]}"; do command -v "$c" >/dev/null 2>&1 || echo "command $c"; done
	for m in "${MODULES[@]}"; do pkg-config --exists "$m" 2>/dev/null || echo "library $m (pkg-config)"; done
}

case $action in
check)
	[ -z "$(missing)" ]
	;;
install)
	miss=$(missing)
	[ -n "$miss" ] || exit 0
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "tracemerge needs, for make ${part/build/demo}:" $miss >&2
		echo "(the Debian package names; install their equivalents)" >&2
		exit 1
	fi
	# shellcheck disable=SC2206
	want=($miss)
	cmd=(apt-get install -y --no-install-recommends "${want[@]}")
	if [ "$(id -u)" = 0 ]; then
		pre=(env DEBIAN_FRONTEND=noninteractive)
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		pre=(sudo env DEBIAN_FRONTEND=noninteractive)
	else
		echo "tracemerge needs these Debian packages. Run, as root:" >&2
		echo "  apt-get update && ${cmd[*]}" >&2
		exit 1
	fi
	t0=$(date +%s)
	echo "deps: for make ${part/build/demo}, ${#want[@]} packages to install (and what they need): ${want[*]}" >&2
	echo "deps: apt-get update (the package lists)" >&2
	# apt's own lines, less dpkg's per-file chatter: what it downloads
	# (Get:), unpacks and sets up, a line each
	"${pre[@]}" apt-get update -q 2>&1 | grep --line-buffered -vE '^(Reading|Building) ' >&2
	echo "deps: apt-get install (download, unpack, set up)" >&2
	"${pre[@]}" "${cmd[@]}" -q -o Dpkg::Use-Pty=0 2>&1 |
		grep --line-buffered -vE '^(Selecting previously|Preparing to unpack|\(Reading database|Reading |Building )' >&2
	st=${PIPESTATUS[0]}
	miss=$(missing)
	if [ "$st" != 0 ] || [ -n "$miss" ]; then
		echo "deps: apt-get failed (status $st); still missing:" $miss >&2
		echo "deps: run, as root: apt-get update && ${cmd[*]}" >&2
		exit 1
	fi
	echo "deps: done in $(($(date +%s) - t0)) s" >&2
	;;
*)
	echo "usage: $0 check|install [build|test]" >&2; exit 64 ;;
esac
