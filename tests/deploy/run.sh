#!/usr/bin/env bash
# tests/run.sh's deploy phase: sendat installed like any Debian service, on a fresh system.
# Builds the package (deploy/package.sh), runs lintian on it (an error fails), then in a fresh
# Debian 12 root made by debootstrap (nothing of the project inside but the .deb):
# `apt-get install ./sendat_*.deb`, `systemd-analyze verify` on the units, `sendat --version`
# against the package's version, `man sendat`, the user and /etc/sendat, `keygen` into
# /etc/sendat, `init` against a nats-server running outside on loopback (the root shares the
# network), a consumer started as sendat-consumer@main.service starts it (its User,
# Environment, EnvironmentFile and ExecStart lines read from the installed unit, and a
# NOTIFY_SOCKET that must get READY=1), one webhook delivered, the drain on the unit's stop
# signal within its TimeoutStopSec, then the package removed (key kept) and purged (nothing
# left: no file, user or group named sendat, the root's file list as before the install).
# The debootstrap base (tests/deploy/base.sh) is cached as a tarball per day in SENDAT_DEPLOY_CACHE (default
# /var/cache/sendat-test), so a later run takes a few minutes at most. Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
mult=${SENDAT_TEST_TIMEOUT_MULTIPLIER:-1}
say() { echo "deploy: $*"; }
die() {
  echo "deploy: FAILED: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
for tool in debootstrap lintian dh nats-server python3 curl systemd-analyze; do
  command -v "$tool" >/dev/null || die "$tool missing (bash deploy/install-deps.sh)"
done

work=$(mktemp -d "${SENDAT_TEST_TMPDIR:-/tmp}/deploy-XXXXXX")
root=$work/root
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if mountpoint -q "$root/proc" 2>/dev/null; then umount -l "$root/proc"; fi
  if [ "${SENDAT_KEEP_TEST_TMP:-0}" = 1 ]; then
    echo "deploy: kept $work"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT

# -- the repository names no package mirror: the one to use is read from apt's own sources
mkdir -p "$work/noapt/sources.list.d"
if msg=$(SENDAT_APT_DIR=$work/noapt bash deploy/apt-mirror.sh 2>&1); then
  die "deploy/apt-mirror.sh printed a mirror ($msg) with no apt sources configured"
fi
case $msg in *"no Debian archive"*) ;; *) die "deploy/apt-mirror.sh said: $msg" ;; esac
printf 'Types: deb\nURIs: http://127.0.0.1:9/debian/\nSuites: bookworm\n' >"$work/noapt/sources.list.d/t.sources"
[ "$(SENDAT_APT_DIR=$work/noapt bash deploy/apt-mirror.sh)" = http://127.0.0.1:9/debian ] ||
  die "deploy/apt-mirror.sh does not read a deb822 sources file"
if git grep -qE 'deb\.debian\.org|ftp\.[a-z]+\.debian\.org' 2>/dev/null; then
  die "a package mirror's host is written in the repository: $(git grep -lE 'deb\.debian\.org' | head -3)"
fi
say "mirror: read from apt's sources ($(bash deploy/apt-mirror.sh))"

# -- the package and lintian
deb=$(bash deploy/package.sh "$work/out" | tail -1)
[ -f "$deb" ] || die "deploy/package.sh printed no package"
version=$(dpkg-deb -f "$deb" Version)
say "built $(basename "$deb") (version $version)"
lintian --fail-on error --display-level '>=warning' \
  "$deb" >"$work/lintian.log" 2>&1 || {
  cat "$work/lintian.log" >&2
  die "lintian reports errors"
}
say "lintian: no errors ($(grep -c '^W:' "$work/lintian.log" || true) warnings)"

# -- a fresh Debian 12 root, from the day's cached debootstrap tarball (tests/deploy/base.sh,
# shared with the containers phase)
base=$(bash tests/deploy/base.sh) || die "no Debian 12 base (debootstrap)"
mkdir -p "$root"
tar -C "$root" -xzf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# only /proc is mounted: the root has debootstrap's own device nodes, and no bind mount of the
# host's /dev can be reached by an rm -rf of the test folder
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
snapshot() { # every path of the root but the ones apt, dpkg, logs and caches change anyway
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./sys -o -path ./run \
    -o -path ./tmp -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/cache \
    -o -path ./var/log \) -prune -o -print) |
    sort
}
in_root apt-get update -qq >"$work/apt.log" 2>&1 || die "apt-get update in the root failed"
snapshot >"$work/before.txt"
packages() { in_root dpkg-query -W -f '${db:Status-Status} ${Package}\n' | awk '$1 == "installed" { print $2 }' | sort; }
packages >"$work/packages-before.txt"

# -- install, then what the package set up
cp "$deb" "$root/tmp/"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./tmp/$(basename "$deb")" \
  >>"$work/apt.log" 2>&1 || {
  tail -30 "$work/apt.log" >&2
  die "apt-get install ./$(basename "$deb") failed"
}
rm -f "$root/tmp/$(basename "$deb")"
say "installed with apt-get install ./$(basename "$deb")"
[ "$(in_root sendat --version)" = "sendat $version" ] || die "sendat --version is not $version"
[ "$(in_root sendat-consumer --version)" = "sendat-consumer $version" ] ||
  die "sendat-consumer --version is not $version"
page=$(in_root man -P cat sendat 2>/dev/null) || page=
[[ $page == *'schedule webhooks and emails'* ]] || die "man sendat shows no page"
page=$(in_root man -P cat 8 sendat-consumer 2>/dev/null) || page=
[[ $page == *SENDAT_DRAIN_TIMEOUT* ]] || die "man 8 sendat-consumer shows no page"
[[ $(in_root getent passwd sendat) == *:/usr/sbin/nologin ]] || die "no system user sendat"
[ "$(in_root stat -c '%U:%G %a' /etc/sendat)" = "sendat:sendat 750" ] ||
  die "/etc/sendat is $(in_root stat -c '%U:%G %a' /etc/sendat), want sendat:sendat 750"
[ "$(in_root stat -c '%U:%G %a' /etc/sendat/consumer.env)" = "root:sendat 640" ] ||
  die "/etc/sendat/consumer.env is not root:sendat 640"
in_root systemd-analyze verify /lib/systemd/system/sendat-serve.service \
  /lib/systemd/system/sendat-consumer@.service >"$work/verify.log" 2>&1 || {
  cat "$work/verify.log" >&2
  die "systemd-analyze verify fails on the units"
}
say "sendat --version, man pages, user, /etc/sendat, systemd-analyze verify: as they should be"

# -- a nats-server and a webhook receiver outside the root, on loopback
nats-server -a 127.0.0.1 -p -1 -js -sd "$work/js" --ports_file_dir "$work" -l "$work/nats.log" &
pids+=($!)
python3 deploy/demo_receiver.py "$work/receiver.port" >"$work/receiver.log" &
pids+=($!)
wait_for() { # file, seconds: until the file is non-empty
  local i
  for ((i = 0; i < $2 * 10 * mult; i++)); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
wait_for "$work/receiver.port" 10 || die "the receiver did not start"
for ((i = 0; i < 100 * mult; i++)); do
  ports=$(cat "$work"/nats-server_*.ports 2>/dev/null || true)
  [ -n "$ports" ] && break
  sleep 0.1
done
url=$(echo "$ports" | grep -o 'nats://127.0.0.1:[0-9]*' | head -1)
[ -n "$url" ] || die "nats-server did not start"
hport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# -- keygen and init as the user sendat, as README says
in_root runuser -u sendat -- sendat keygen /etc/sendat/key >/dev/null ||
  die "keygen into /etc/sendat failed"
[ "$(in_root stat -c '%U %a' /etc/sendat/key)" = "sendat 600" ] || die "the key is not sendat's, 0600"
sed -i "s|^SENDAT_NATS_URL=.*|SENDAT_NATS_URL=$url|" "$root/etc/sendat/consumer.env"
sed -i "s|^SENDAT_HTTP_ADDR=.*|SENDAT_HTTP_ADDR=127.0.0.1:$hport|" "$root/etc/sendat/consumer-main.env"
in_root runuser -u sendat -- env SENDAT_NATS_URL="$url" sendat init >"$work/init.log" 2>&1 || {
  cat "$work/init.log" >&2
  die "sendat init failed"
}

# -- units started the way systemd starts them: a process of User= from Environment=,
# EnvironmentFile= (in order; "-" may be missing) and ExecStart=, with NOTIFY_SOCKET set to a
# datagram socket that must get READY=1. The notify listener logs each unit's messages.
notify=/run/sendat-notify.sock
python3 - "$root$notify" "$work/notify" <<'END' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM, 0)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    pid = int.from_bytes(anc[0][2][:4], "little") if anc else 0
    with open("%s.%d" % (sys.argv[2], pid), "a") as log:
        log.write(msg.decode() + "\n")
END
pids+=($!)
for ((i = 0; i < 50 * mult; i++)); do
  [ -S "$root$notify" ] && break
  sleep 0.1
done
[ -S "$root$notify" ] || die "the notify socket did not come"

started=0 # the pid of the last start_unit
start_unit() { # unit file name, instance, log file
  local unit=$root/lib/systemd/system/$1 instance=$2 line file user exec_start envs=()
  key() { sed -n "s/^$1=//p" "$unit"; }
  expand() { sed -e "s/%i/$instance/g" -e "s/%H/$(hostname)/g"; }
  [ "$(key Type)" = notify ] || die "$1 is not Type=notify"
  [ "$(key KillSignal)" = SIGTERM ] || die "$1 does not stop with SIGTERM"
  user=$(key User)
  while IFS= read -r line; do envs+=("$(echo "$line" | expand)"); done < <(key Environment)
  while IFS= read -r file; do
    file=$(echo "$file" | expand)
    if [ "${file#-}" != "$file" ]; then
      file=${file#-}
      [ -f "$root$file" ] || continue
    fi
    [ -f "$root$file" ] || die "$1: its EnvironmentFile $file is missing"
    while IFS= read -r line; do
      case $line in '' | '#'*) continue ;; esac
      envs+=("$line")
    done <"$root$file"
  done < <(key EnvironmentFile)
  read -r -a exec_start <<<"$(key ExecStart)"
  # chroot, env and setpriv each exec (no session process in between, as under systemd):
  # $! is the service's process itself
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin setpriv --reuid="$user" \
    --regid="$user" --init-groups --no-new-privs env "${envs[@]}" NOTIFY_SOCKET="$notify" \
    "${exec_start[@]}" >"$3" 2>&1 &
  started=$!
  pids+=("$started")
  wait_for "$work/notify.$started" 30 || {
    cat "$3" >&2
    die "$1 never sent READY=1"
  }
  grep -qx 'READY=1' "$work/notify.$started" || die "$1 sent $(cat "$work/notify.$started")"
}
stop_unit() { # unit file name, pid: the unit's signal, exit 0 within its TimeoutStopSec
  local s rc=0 i
  s=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$root/lib/systemd/system/$1")
  kill -TERM "$2"
  for ((i = 0; i < s * 10; i++)); do
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$2" 2>/dev/null && die "$1 did not stop within TimeoutStopSec=${s}s"
  wait "$2" || rc=$?
  [ "$rc" = 0 ] || die "$1 exited $rc after SIGTERM"
  say "$1 stopped by SIGTERM within ${s}s, exit 0"
}

start_unit sendat-consumer@.service main "$work/consumer.log"
consumer=$started
for ((i = 0; i < 100 * mult; i++)); do # 200 from the first pull, just after READY=1
  curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$hport/readyz" >/dev/null || die "ready, but /readyz never said so"
say "sendat-consumer@main started from the unit's lines: READY=1, then /readyz 200"

# -- one webhook, scheduled inside the root
hook="http://127.0.0.1:$(cat "$work/receiver.port")/hook"
id=$(in_root runuser -u sendat -- env SENDAT_NATS_URL="$url" SENDAT_KEY_FILE=/etc/sendat/key \
  sendat schedule --at +2s --webhook "$hook" --data '{"deploy":"test"}') ||
  die "sendat schedule failed"
wait_for "$work/receiver.log" 30 || {
  cat "$work/consumer.log" >&2
  die "the webhook of task $id never arrived"
}
grep -q 'body={"deploy":"test"}' "$work/receiver.log" || die "the webhook's body: $(cat "$work/receiver.log")"
say "webhook of task $id delivered"

# -- stop as systemd stops it: drained
stop_unit sendat-consumer@.service "$consumer"
grep -q 'event=stopped' "$work/consumer.log" || die "the consumer did not log its drain"

# -- sendat serve, started as sendat-serve.service starts it, with a token made as README says
tok=$(in_root runuser -u sendat -- env SENDAT_API_TOKENS_FILE=/etc/sendat/tokens \
  sendat token create --role reader --name deploy) || die "sendat token create failed"
aport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -i -e "s|^SENDAT_NATS_URL=.*|SENDAT_NATS_URL=$url|" \
  -e "s|^SENDAT_API_ADDR=.*|SENDAT_API_ADDR=127.0.0.1:$aport|" "$root/etc/sendat/serve.env"
start_unit sendat-serve.service "" "$work/serve.log"
serve=$started
who=$(curl -fsS -H "Authorization: Bearer $tok" "http://127.0.0.1:$aport/v1/whoami") || who=
[[ $who == *'"reader"'* ]] || die "GET /v1/whoami with the token answered '$who'"
page=$(curl -fsS "http://127.0.0.1:$aport/") || page=
[[ $page == *'<html'* ]] || die "the console is not served"
say "sendat-serve started from the unit's lines: READY=1, /v1/whoami and the console answer"
stop_unit sendat-serve.service "$serve"

# -- an upgrade (the same package as version+1, repacked) keeps the key, the tokens, the
# settings an operator changed, and the modes of /etc/sendat
up=$work/up
dpkg-deb -R "$deb" "$up"
sed -i "s/^Version: .*/Version: $version+deploytest1/" "$up/DEBIAN/control"
dpkg-deb --root-owner-group -b "$up" "$root/tmp/sendat_up.deb" >/dev/null
echo "# changed by the operator" >>"$root/etc/sendat/consumer.env"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./tmp/sendat_up.deb \
  >>"$work/apt.log" 2>&1 || die "the upgrade to $version+deploytest1 failed"
rm -f "$root/tmp/sendat_up.deb"
[ "$(in_root dpkg-query -W -f '${Version}' sendat)" = "$version+deploytest1" ] ||
  die "the upgrade did not install"
[ "$(in_root stat -c '%U %a' /etc/sendat/key /etc/sendat/tokens | sort -u)" = "sendat 600" ] ||
  die "the upgrade changed the key or the tokens"
grep -q '^# changed by the operator$' "$root/etc/sendat/consumer.env" ||
  die "the upgrade overwrote the operator's consumer.env"
[ "$(in_root stat -c '%U:%G %a' /etc/sendat)" = "sendat:sendat 750" ] ||
  die "after the upgrade /etc/sendat is $(in_root stat -c '%U:%G %a' /etc/sendat)"
say "upgraded to $version+deploytest1: key, tokens, settings and modes kept"

# -- remove keeps the key, purge leaves nothing
in_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq sendat >>"$work/apt.log" 2>&1 ||
  die "apt-get remove sendat failed"
[ -f "$root/etc/sendat/key" ] && [ -f "$root/etc/sendat/tokens" ] || die "remove took the key or tokens"
[ ! -e "$root/usr/bin/sendat" ] || die "remove left /usr/bin/sendat"
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq --autoremove sendat \
  >>"$work/apt.log" 2>&1 || die "apt-get purge sendat failed"
rm -f "$root$notify" # this test's
# /var/cache/man: man-db's formatted copies of the pages `man` showed above (its own cache,
# which its daily job prunes once the pages are gone)
left=$(cd "$root" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./sys \
  -o -path ./var/cache/man \) -prune -o -iname '*sendat*' -print)
[ -z "$left" ] || die "purge left: $left"
in_root getent passwd sendat >/dev/null && die "purge left the user sendat"
in_root getent group sendat >/dev/null && die "purge left the group sendat"
# what autoremove kept of the install's recommends (ca-certificates, openssl: other packages
# of the root recommend them too) goes as well: the root is to be as before
extra=$(packages | comm -13 "$work/packages-before.txt" -)
if [ -n "$extra" ]; then
  # shellcheck disable=SC2086
  in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq --autoremove $extra \
    >>"$work/apt.log" 2>&1 || die "apt-get purge $extra failed"
  say "purged the recommends apt kept: $(echo $extra)"
fi
snapshot >"$work/after.txt"
diff "$work/before.txt" "$work/after.txt" >"$work/left.diff" || {
  cat "$work/left.diff" >&2
  die "the root differs from before the install"
}
say "removed (key kept), purged: nothing left behind"
say "passed"
