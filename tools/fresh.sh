#!/usr/bin/env bash
# The README's steps on a freshly bootstrapped Debian 12 (bookworm) root: CI
# (.ci/run) and a developer proving a change before resolving run this.
#
#   tools/fresh.sh            a clean clone of HEAD (what is committed)
#   tools/fresh.sh --tree     the working tree as it is on disk (tracked and
#                             untracked files, not ignored ones, no build/)
#   tools/fresh.sh [--tree] COMMAND...   that instead of make test, e.g.
#                             make deps-build all (what make demo installs
#                             is enough to build)
#
# As root (or through sudo -n): installs debootstrap on the host if it is
# missing, keeps a tarball of the bare system (debootstrap --variant=minbase
# from deb.debian.org, nothing of the project's in it) in
# $FRESH_CACHE (/var/cache/tracemerge-ci; rebuilt after FRESH_BASE_DAYS=7
# days), unpacks it into a new directory, copies the source in and runs, as
# root inside the root, the README's first steps: apt-get install make git,
# git clone, make test (which installs the rest through tools/deps.sh).
# /proc, /dev, /dev/pts and /dev/shm are bound in, in a private mount and PID
# namespace: nothing mounted there is visible to the host, and every mount
# and process ends with the run, even when it is killed; the trap unmounts
# them, checks with findmnt that nothing is left, and removes the root.
# Downloaded .deb files are kept in $FRESH_CACHE/archives between runs
# (FRESH_DEB_CACHE=0: not): linked into the root's own apt cache before, the
# new ones linked back after, so that runs at once never share apt's lock;
# apt still installs every package in every run.
#
# The output ends with make test's line "N passed, N failed, N skipped"; the
# exit status is make test's (1 when the root could not be set up).
set -u
# All of it in one block, read whole before it runs: editing this file while
# a run is under way (it takes minutes) cannot change what that run does.
{
top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${FRESH_CACHE:-/var/cache/tracemerge-ci}
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
t0=$(date +%s)
say() { echo "fresh: $*" >&2; }
die() { say "$*"; echo "0 passed, 1 failed"; exit 1; }

# ---------- inside the namespaces: mounts, chroot, the README's steps ----------
if [ "${1:-}" = --inner ]; then
	root=$2
	# nothing the caller had open reaches the tests (tests/cli/hostile.sh
	# counts descriptors under ulimit -n 4): only 0, 1 and 2 go in
	for f in /proc/self/fd/*; do
		f=${f##*/}
		[ "$f" -gt 2 ] && [ "$f" != 255 ] && eval "exec $f>&-" 2>/dev/null
	done
	mounted=()
	unmount_all() {
		local i
		for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
			umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}"
		done
		mounted=()
	}
	trap unmount_all EXIT
	trap 'exit 130' INT TERM
	bind() { # what where
		mkdir -p "$2" && mount --bind "$1" "$2" && mounted+=("$2") || exit 1
	}
	# the root a mount point of its own, so that inside it `unshare -m
	# --propagation private` (tests/cli/hostile_full.sh) can remount / private
	bind "$root" "$root"
	# a private /proc for the new PID namespace, the host's devices
	mkdir -p "$root/proc" && mount -t proc proc "$root/proc" && mounted+=("$root/proc") || exit 1
	bind /dev "$root/dev"
	bind /dev/pts "$root/dev/pts"
	bind /dev/shm "$root/dev/shm"
	env -i HOME=/root TERM=xterm LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		chroot "$root" /bin/bash /root/steps.sh
	exit $?
fi

# ---------- on the host ----------
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		exec sudo -n env FRESH_CACHE="$CACHE" "$0" "$@"
	fi
	die "needs root (debootstrap, chroot, mount): run it as root or with sudo"
fi
mode=head
[ "${1:-}" != --tree ] || { mode=tree; shift; }
case "${1:-}" in
-*) echo "usage: $0 [--tree] [COMMAND...]" >&2; exit 64 ;;
esac
run="make test"
[ $# = 0 ] || run=$(printf '%q ' "$@")
run=${run% }
for c in unshare chroot findmnt mount tar; do
	command -v $c >/dev/null 2>&1 || die "the host has no $c (util-linux, coreutils, tar)"
done
if ! command -v debootstrap >/dev/null 2>&1 || [ ! -f /usr/share/keyrings/debian-archive-keyring.gpg ]; then
	say "installing debootstrap on the host"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends debootstrap debian-archive-keyring ||
		{ apt-get update; apt-get install -y --no-install-recommends debootstrap debian-archive-keyring; } ||
		die "could not install debootstrap on the host"
fi

mkdir -p "$CACHE" || die "cannot create $CACHE"
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
base=$CACHE/$SUITE-$arch-minbase.tar.gz

work=
cpid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$cpid" ] && kill -0 "$cpid" 2>/dev/null; then
		kill -TERM "$cpid" 2>/dev/null
		sleep 1
		kill -KILL "$cpid" 2>/dev/null
		wait "$cpid" 2>/dev/null
	fi
	if [ -n "$work" ] && [ -d "$work" ]; then
		# the mounts live in the run's own namespace; should one show here,
		# unmount it, and never remove a tree that still has one
		local m left
		for m in $(findmnt -rn -o TARGET | grep -F "$work/" | sort -r); do umount -l "$m" 2>/dev/null; done
		left=$(findmnt -rn -o TARGET | grep -F "$work/")
		if [ -n "$left" ]; then
			say "still mounted, $work left in place: $left"
		else
			rm -rf --one-file-system "$work"
		fi
	fi
	return $rc
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# ---------- the bare system, bootstrapped once a week ----------
exec 8>"$CACHE/lock"
flock 8
if [ ! -s "$base" ] || [ -n "$(find "$base" -mtime +"${FRESH_BASE_DAYS:-7}" 2>/dev/null)" ]; then
	say "bootstrapping Debian $SUITE from $MIRROR into $base (once; a few minutes)"
	work=$(mktemp -d "$CACHE/base.XXXXXX") || die "mktemp in $CACHE"
	# in a mount namespace of its own: the /proc and /sys it mounts in the
	# target go with it, whatever happens
	unshare --mount --propagation private debootstrap --variant=minbase --arch="$arch" \
		"$SUITE" "$work/root" "$MIRROR" >"$work/log" 2>&1 || {
		tail -n 20 "$work/log" >&2; die "debootstrap failed (log above)"; }
	rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*_Packages
	tar -C "$work/root" --numeric-owner -czf "$work/base.tar.gz" . || die "cannot write the base tarball"
	mv "$work/base.tar.gz" "$base"
	rm -f "$CACHE/archives/"*.deb # a new base: the old downloads go too
	rm -rf --one-file-system "$work"
	work=
fi
exec 8>&-

# ---------- a new root for this run ----------
work=$(mktemp -d "${FRESH_WORK:-/var/tmp}/tracemerge-fresh.XXXXXX") || die "mktemp"
root=$work/root
mkdir "$root" && tar -C "$root" --numeric-owner -xzf "$base" || die "cannot unpack $base"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main
EOF
# no service starts from a package's install script inside the root
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 755 "$root/usr/sbin/policy-rc.d"

# the source: a clean clone of HEAD (cloned again inside, as the README
# says), or the working tree as it is
src=$root/root/tracemerge
if [ "$mode" = head ]; then
	git -C "$top" rev-parse --verify -q HEAD >/dev/null || die "$top is not a git checkout (use --tree)"
	git init -q --bare "$root/root/tracemerge.git" &&
		git -C "$top" push -q "$root/root/tracemerge.git" HEAD:refs/heads/main &&
		git -C "$root/root/tracemerge.git" symbolic-ref HEAD refs/heads/main || die "cannot copy HEAD of $top"
	clone="git clone /root/tracemerge.git tracemerge"
	what="HEAD $(git -C "$top" log -1 --format='%h %s')"
else
	mkdir -p "$src"
	if git -C "$top" rev-parse --verify -q HEAD >/dev/null 2>&1; then
		(cd "$top" && git ls-files -z -co --exclude-standard |
			tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$src" -xf - ||
			die "cannot copy the working tree"
	else
		tar -C "$top" --exclude=./build -cf - . | tar -C "$src" -xf - || die "cannot copy $top"
	fi
	clone=": the working tree is copied in"
	what="the working tree of $top"
fi

# The README's steps from nothing (keep them in step with README.md's
# "First steps on a fresh Debian 12").
cat >"$root/root/steps.sh" <<EOF
set -u
cd /root
echo "fresh: \$(. /etc/os-release; echo \$PRETTY_NAME), $what"
apt-get update && apt-get install -y make git || exit 1
$clone || exit 1
cd tracemerge
TIMEFORMAT='fresh: $run took %0R s (CPU: %0U s user, %0S s system)'
time $run
EOF

archives=
if [ "${FRESH_DEB_CACHE:-1}" = 1 ]; then
	archives=$CACHE/archives
	mkdir -p "$archives" "$root/var/cache/apt/archives"
	find "$archives" -maxdepth 1 -name '*.deb' -exec cp -l -n -t "$root/var/cache/apt/archives" {} + 2>/dev/null ||
		find "$archives" -maxdepth 1 -name '*.deb' -exec cp -n -t "$root/var/cache/apt/archives" {} +
fi
say "root $root ready after $(($(date +%s) - t0)) s; running the README's steps"
t1=$(date +%s)
log=$work/out
exec 3> >(tee "$log")
teepid=$!
unshare --mount --propagation private --pid --fork --kill-child \
	"$top/tools/fresh.sh" --inner "$root" </dev/null >&3 2>&1 3>&- &
cpid=$!
wait "$cpid"
rc=$?
cpid=
exec 3>&-
wait "$teepid" 2>/dev/null
t2=$(date +%s)
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
[ -z "$archives" ] || find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' \
	-exec cp -l -n -t "$archives" {} + 2>/dev/null ||
	find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -n -t "$archives" {} +
cleanup
left=$(findmnt -rn -o TARGET | grep -F "$work/")
[ -z "$left" ] || rc=1
say "$run and the steps before it took $((t2 - t1)) s; the whole run $(($(date +%s) - t0)) s; nothing left mounted: $([ -z "$left" ] && echo yes || echo NO)"
if [ "$run" = "make test" ]; then
	echo "${summary:-0 passed, 1 failed}"
else
	echo "fresh: $run: exit status $rc"
fi
exit $rc
}
