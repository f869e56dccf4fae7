#!/bin/sh
# scripts/install-deps.sh waits for another apt that holds a lock, instead of failing at once: against
# stubs of apt-get, dpkg-query and sudo on PATH (nothing is installed, no lock of this machine taken).
# apt-get update's lock (/var/lib/apt/lists/lock) and the download lock are not covered by apt's
# DPkg::Lock::Timeout: apt 2.6 fails at once with "E: Could not get lock ..." (exit 100).
# The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
PASS=0 FAIL=0
. tests/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin"
# dpkg-query: nothing is installed
printf '#!/bin/sh\nexit 1\n' >"$T/bin/dpkg-query"
# not root, so the script runs apt-get through sudo, which resets the environment as sudo's env_reset does
printf '#!/bin/sh\n[ "$1" = -u ] && echo 1000 && exit 0\nexec /usr/bin/id "$@"\n' >"$T/bin/id"
printf '#!/bin/sh\nexec env -i PATH="$PATH" STUB_DIR="$STUB_DIR" "$@"\n' >"$T/bin/sudo"
# sleep: at once (the script sleeps 5 s between tries)
printf '#!/bin/sh\nexit 0\n' >"$T/bin/sleep"
# apt-get: logs its arguments and environment; "update" fails on the lists lock while
# $T/update-locks (a count) is above 0, "install" on the download lock while $T/install-locks is;
# $T/broken makes update fail for another reason
cat >"$T/bin/apt-get" <<'STUB'
#!/bin/sh
echo "apt-get $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-} uid=$(id -u)" >>"$STUB_DIR/calls"
for a; do
	case $a in update | install) cmd=$a ;; esac
done
if [ "$cmd" = update ] && [ -e "$STUB_DIR/broken" ]; then
	echo "E: The repository 'http://deb.example bookworm Release' does not have a Release file." >&2
	exit 100
fi
n=$(cat "$STUB_DIR/$cmd-locks" 2>/dev/null || echo 0)
if [ "$n" -gt 0 ]; then
	echo $((n - 1)) >"$STUB_DIR/$cmd-locks"
	lock=/var/lib/apt/lists/lock
	[ "$cmd" = install ] && lock=/var/cache/apt/archives/lock
	echo "E: Could not get lock $lock. It is held by process 4242 (apt-get)" >&2
	echo "E: Unable to lock directory ${lock%/lock}/" >&2
	exit 100
fi
exit 0
STUB
chmod +x "$T/bin/"*
run() { PATH="$T/bin:$PATH" STUB_DIR=$T sh scripts/install-deps.sh build >"$T/out" 2>&1; }
calls() { grep -c "^apt-get .* $1 " "$T/calls"; }

# the lists lock held for two tries of update, the download lock for one of install: waited for
: >"$T/calls"
echo 2 >"$T/update-locks"
echo 1 >"$T/install-locks"
run
rc=$?
check "locks held by another apt: waited for, exit 0 (exit $rc)" test "$rc" -eq 0
check "apt-get update tried 3 times ($(calls update))" test "$(calls update)" -eq 3
check "apt-get install tried 2 times ($(calls install))" test "$(calls install)" -eq 2
check "says it waits for the lists lock, once" test "$(grep -c 'another apt holds the lock (/var/lib/apt/lists/lock): waiting for it, up to 600 s' "$T/out")" -eq 1
check "says it waits for the download lock" grep -q 'another apt holds the lock (/var/cache/apt/archives/lock): waiting' "$T/out"
check "dpkg's own lock: DPkg::Lock::Timeout=600 on every call" test "$(grep -c 'DPkg::Lock::Timeout=600' "$T/calls")" -eq 5
check "DEBIAN_FRONTEND=noninteractive reaches apt-get through sudo" test "$(grep -c 'DEBIAN_FRONTEND=noninteractive uid=1000$' "$T/calls")" -eq 5
check "every missing package asked for" grep -q '^apt-get .* install -y -qq --no-install-recommends gcc .* libdeflate-dev ' "$T/calls"

# a lock held past LOCK_WAIT: given up, saying so, apt's error shown
: >"$T/calls"
echo 5 >"$T/update-locks"
LOCK_WAIT=0 run
rc=$?
check "a lock held past LOCK_WAIT: exit non-zero (exit $rc)" test "$rc" -ne 0
check "a lock held past LOCK_WAIT: says so" grep -q 'another apt still holds the lock after 0 s' "$T/out"
check "a lock held past LOCK_WAIT: apt's error shown" grep -q 'E: Could not get lock /var/lib/apt/lists/lock' "$T/out"
check "a lock held past LOCK_WAIT: nothing installed" test "$(calls install)" -eq 0

# another failure is not waited for
: >"$T/calls"
rm -f "$T/update-locks" "$T/install-locks"
touch "$T/broken"
run
rc=$?
check "another apt-get error: exit non-zero at once (exit $rc)" test "$rc" -ne 0 -a "$(calls update)" -eq 1
check "another apt-get error: shown" grep -q 'does not have a Release file' "$T/out"

# README's Dependencies list names every package the script installs
lacking=""
for p in $(sed -n 's/^\(build\|test\)="\(.*\)"$/\2/p' scripts/install-deps.sh); do
	sed -n '/^Dependencies (Debian 12/,/^$/p' README.md | tr -c 'a-z0-9.+-' '\n' | grep -qx -- "$p" || lacking="$lacking $p"
done
check "README's Dependencies name every package of install-deps.sh (lacking:${lacking:- none})" test -z "$lacking"
finish
