#!/usr/bin/env bash
# The systemd units and their environment files (deploy/systemd) against the binaries (ctest
# deploy_units): every SENDAT_ variable `sendat-consumer --help` names is in consumer.env or
# consumer-main.env, every one `sendat --help` and `sendat serve --help` name is in serve.env
# (SENDAT_KEY_FILE and the NATS ones), each unit restarts on failure, is Type=notify, stops
# with SIGTERM within a TimeoutStopSec that covers the consumer's drain (twice
# SENDAT_DRAIN_TIMEOUT's default and 10 s), has the sandbox options, and the package installs
# each EnvironmentFile it names. The units run for real in tests/deploy/run.sh.
# usage: check_units.sh SOURCE_DIR SENDAT SENDAT_CONSUMER
set -uo pipefail
src=$1 sendat=$2 consumer=$3
dir=$src/deploy/systemd
fail=0
bad() { echo "deploy_units: $*" >&2; fail=1; }
vars() { grep -o 'SENDAT_[A-Z_]*[A-Z]' | sort -u; }

for v in $("$consumer" --help | vars); do
  grep -q "^#\?$v=" "$dir/consumer.env" "$dir/consumer-main.env" ||
    bad "consumer.env does not name $v"
done
for v in $({ "$sendat" --help; "$sendat" serve --help; } | vars); do
  grep -q "^#\?$v=" "$dir/serve.env" || bad "serve.env does not name $v"
done
drain=$("$consumer" --help | sed -n 's/.*SENDAT_DRAIN_TIMEOUT.*default \([0-9]*\)s.*/\1/p')
[ -n "$drain" ] || bad "no default of SENDAT_DRAIN_TIMEOUT in sendat-consumer --help"
for unit in "$dir/sendat-consumer@.service" "$dir/sendat-serve.service"; do
  name=$(basename "$unit")
  for want in Type=notify Restart=on-failure KillSignal=SIGTERM NoNewPrivileges=yes \
    ProtectSystem=strict ProtectHome=yes PrivateTmp=yes CapabilityBoundingSet= \
    ReadOnlyPaths=/etc/sendat User=sendat; do
    grep -qx "$want" "$unit" || bad "$name lacks $want"
  done
  while read -r f; do
    grep -q "^deploy/systemd/$(basename "${f//%i/main}") etc/sendat$" \
      "$src/deploy/debian/sendat.install" || bad "$name: the package does not install $f"
  done < <(sed -n 's/^EnvironmentFile=-\?//p' "$unit")
done
stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$dir/sendat-consumer@.service")
[ -n "$stop" ] && [ -n "$drain" ] && [ "$stop" -ge $((2 * drain + 10)) ] ||
  bad "sendat-consumer@.service: TimeoutStopSec=${stop}s is under twice the drain (${drain}s) and 10 s"
[ $fail = 0 ] && echo "deploy_units: the units and environment files agree with the binaries"
exit $fail
