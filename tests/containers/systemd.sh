#!/usr/bin/env bash
# The package's systemd units under a real systemd (issue 35 item 3; the systemd phase of
# tests/run.sh): an image of the containers phase's base (tests/deploy/base.sh's Debian 12
# root, which has systemd) with Debian's nats-server and the package (deploy/package.sh, or the
# .deb SENDAT_DEB names) installed, booted with `podman run --systemd=always` in a network of
# its own (loopback only). Inside: nats-server -js on 127.0.0.1:4222 as a transient unit (the
# package's consumer.env points there), keygen and init as the user sendat, then
#  - `systemctl start sendat-consumer@main` returns once the consumer sent READY=1 (Type=notify)
#    and the unit is active;
#  - `systemctl reload` re-reads the key: the consumer logs `reloaded`;
#  - `systemctl stop` drains: the unit ends with Result=success and exit 0;
#  - a bad setting (exit 2) is not restarted: the unit fails and NRestarts stays 0;
#  - `systemd-analyze security` scores both units (printed);
#  - installing the .deb again (postinst configure with the version before) try-restarts the
#    running consumer: a new MainPID, active again.
# The last line is `systemd: N/N checks passed`. Needs root; /etc/containers is never written
# (containers.conf beside this script, CONTAINERS_CONF).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF=$PWD/tests/containers/containers.conf
base_img=localhost/sendat-test-base:bookworm
img=localhost/sendat-test-systemd:latest
name=sendat-sd
mult=${SENDAT_TEST_TIMEOUT_MULTIPLIER:-1}
started=$(date +%s)
say() { echo "systemd: $*"; }
die() {
  echo "systemd: FAILED: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || die "needs root (podman)"
bash tests/containers/install.sh podman runc netavark debootstrap dpkg-dev debhelper |
  sed 's/^/systemd: /'

work=$(mktemp -d "${SENDAT_TEST_TMPDIR:-/tmp}/systemd-XXXXXX")
cleanup() {
  local rc=$?
  if podman container exists $name 2>/dev/null; then
    [ "$rc" = 0 ] || podman exec $name journalctl --no-pager -n 60 2>&1 | sed 's/^/  /' >&2 || true
    podman rm -f -t 10 $name >/dev/null 2>&1 || true
  fi
  if [ "${SENDAT_KEEP_TEST_TMP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
  exit "$rc"
}
trap cleanup EXIT
podman rm -f -t 0 $name >/dev/null 2>&1 || true

# -- the base (as the containers phase makes it) and the package
tarball=$(bash tests/deploy/base.sh) || die "no Debian 12 base (debootstrap)"
podman image exists "$base_img" || podman import -q -c 'CMD ["/bin/bash"]' "$tarball" "$base_img" >/dev/null
deb=${SENDAT_DEB:-}
if [ -z "$deb" ]; then
  deb=$(bash deploy/package.sh "$work/deb" 2>"$work/package.log" | tail -1) || {
    tail -20 "$work/package.log" >&2
    die "deploy/package.sh failed"
  }
fi
[ -f "$deb" ] || die "no package at '$deb'"
cp "$deb" "$work/sendat.deb"
cat >"$work/Containerfile" <<EOF
FROM $base_img
COPY sendat.deb /root/sendat.deb
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    nats-server /root/sendat.deb && rm -rf /var/lib/apt/lists/*
CMD ["/lib/systemd/systemd"]
EOF
t=$(date +%s)
podman build -q -t $img "$work" >"$work/build.log" 2>&1 || {
  tail -20 "$work/build.log" >&2
  die "the systemd image failed to build"
}
say "image with $(basename "$deb") and nats-server built in $(($(date +%s) - t)) s"

# -- boot
podman run -d --name $name --systemd=always --network none $img >/dev/null
inside() { podman exec $name "$@"; }
until_t=$(($(date +%s) + 60 * mult))
until state=$(inside systemctl is-system-running 2>/dev/null) && [[ $state == running || $state == degraded ]]; do
  [ "$(date +%s)" -lt "$until_t" ] || die "systemd did not finish booting (state: ${state:-none})"
  sleep 1
done
say "systemd $(inside systemctl --version | head -1 | cut -d' ' -f2) booted: $state"
[ "$state" = running ] || inside systemctl --failed --no-legend | sed 's/^/  failed at boot: /'

passed=0
checks=0
check() { # description, then what the test before it returned (0: passed)
  checks=$((checks + 1))
  if [ "$2" = 0 ]; then
    passed=$((passed + 1))
    say "ok: $1"
  else
    say "NOT ok: $1"
  fi
}
prop() { inside systemctl show -P "$2" "$1"; }
wait_for() { # seconds, command...: true once the command succeeds
  local until_t=$(($(date +%s) + $1 * mult))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$until_t" ] || return 1
    sleep 1
  done
}

# -- nats-server and the key
inside systemctl disable --now nats-server.service >/dev/null 2>&1 || true # Debian's, without -js
inside systemd-run -q --unit sendat-test-nats "$(inside sh -c 'command -v nats-server')" -js -a 127.0.0.1 -p 4222 \
  -sd /var/lib/sendat-test-nats
wait_for 20 inside bash -c 'exec 3<>/dev/tcp/127.0.0.1/4222' || die "nats-server did not listen"
inside runuser -u sendat -- sendat keygen /etc/sendat/key >/dev/null || die "keygen failed"
inside runuser -u sendat -- sendat init >"$work/init.log" 2>&1 || {
  cat "$work/init.log" >&2
  die "sendat init failed"
}
unit=sendat-consumer@main.service
journal() { inside journalctl -q -o cat -u "$unit" --since "@$1"; }

# -- Type=notify: start returns after READY=1
t=$(date +%s)
inside systemctl start $unit || true
took=$(($(date +%s) - t))
ok=0
[ "$(prop $unit ActiveState)" = active ] || ok=1
check "systemctl start $unit returned with the unit active (Type=notify: READY=1) in $took s" $ok
pid=$(prop $unit MainPID)

# -- reload re-reads the key
t=$(date +%s)
inside systemctl reload $unit || true
reloaded() { journal "$t" | grep -q reloaded && [ "$(prop $unit MainPID)" = "$pid" ]; }
ok=0
wait_for 10 reloaded || ok=1
check "systemctl reload: the consumer read its key again (its log says reloaded), same MainPID" $ok

# -- the package again: postinst try-restarts the running consumer
inside dpkg -i /root/sendat.deb >"$work/reinstall.log" 2>&1 || {
  cat "$work/reinstall.log" >&2
  die "installing the package again failed"
}
restarted() { [ "$(prop $unit ActiveState)" = active ] && [ "$(prop $unit MainPID)" != "$pid" ]; }
ok=0
wait_for 20 restarted || ok=1
check "installing the .deb again try-restarted the running consumer (MainPID $pid -> $(prop $unit MainPID))" $ok

# -- stop drains
t=$(date +%s)
inside systemctl stop $unit || true
took=$(($(date +%s) - t))
ok=0
[ "$(prop $unit Result)/$(prop $unit ExecMainStatus)" = success/0 ] && journal "$t" | grep -q stopped || ok=1
check "systemctl stop: drained (its log says stopped) and exited 0 in $took s (Result=$(prop $unit Result), status $(prop $unit ExecMainStatus))" $ok

# -- a bad setting: exit 2, not restarted
inside bash -c 'echo SENDAT_DRAIN_TIMEOUT=not-a-duration >>/etc/sendat/consumer-main.env'
inside systemctl reset-failed $unit 2>/dev/null || true
inside systemctl start $unit 2>/dev/null || true
sleep $((5 * mult)) # RestartSec is 2 s: a restart loop would have counted by now
ok=0
[ "$(prop $unit ExecMainStatus)/$(prop $unit NRestarts)" = 2/0 ] || ok=1
check "a bad setting: exit $(prop $unit ExecMainStatus), $(prop $unit ActiveState), restarted $(prop $unit NRestarts) times" $ok
inside sed -i '/^SENDAT_DRAIN_TIMEOUT=not-a-duration$/d' /etc/sendat/consumer-main.env

# -- the sandbox's score
for u in $unit sendat-serve.service; do
  score=$(inside systemd-analyze security --no-pager "$u" 2>/dev/null | tail -1 | sed 's/.*: //')
  say "systemd-analyze security $u: ${score:-none}"
done

podman rm -f -t 10 $name >/dev/null
say "took $(($(date +%s) - started)) s"
echo "systemd: $passed/$checks checks passed"
[ "$passed" = "$checks" ]
