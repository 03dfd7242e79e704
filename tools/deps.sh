#!/usr/bin/env bash
# Install (or check for) the Debian packages tracemerge needs to build and test.
#   tools/deps.sh check    exit 0 when everything is present
#   tools/deps.sh install  apt-get install what is missing (root, or sudo -n)
set -u
PKGS=(build-essential pkg-config libncurses-dev libreadline-dev libarchive-dev
      libprotobuf-c-dev protobuf-c-compiler libcjson-dev zlib1g-dev mandoc
      libarchive-tools tar gzip python3 tmux zip unzip procps)
MODULES=(ncursesw readline libarchive libprotobuf-c libcjson zlib)
CMDS=(cc make pkg-config protoc-c mandoc bsdtar tar gzip python3 zip unzip)

have_all() {
	local m c
	for c in "${CMDS[@]}"; do command -v "$c" >/dev/null 2>&1 || { echo "missing command: $c"; return 1; }; done
	for m in "${MODULES[@]}"; do pkg-config --exists "$m" 2>/dev/null || { echo "missing library: $m (pkg-config)"; return 1; }; done
	return 0
}

case "${1:-check}" in
check)
	have_all >/dev/null
	;;
install)
	if have_all >/dev/null; then exit 0; fi
	cmd=(apt-get install -y --no-install-recommends "${PKGS[@]}")
	if [ "$(id -u)" = 0 ]; then
		pre=()
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		pre=(sudo)
	else
		echo "tracemerge needs these Debian packages. Run, as root:" >&2
		echo "  apt-get update && ${cmd[*]}" >&2
		exit 1
	fi
	echo "installing build and test dependencies with apt-get ..." >&2
	"${pre[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		"${pre[@]}" env DEBIAN_FRONTEND=noninteractive "${cmd[@]}" -qq >/dev/null || {
		echo "apt-get failed; run: apt-get update && ${cmd[*]}" >&2; exit 1; }
	have_all
	;;
*)
	echo "usage: $0 check|install" >&2; exit 64 ;;
esac
