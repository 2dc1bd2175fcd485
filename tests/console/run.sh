#!/bin/bash
# ctest `console`: the web console in a real headless Chromium (puppeteer-core). Usage:
#   run.sh BUILD_DIR SENDAT SENDAT_CONSUMER
# Installs Debian's chromium (when root and missing) and npm puppeteer-core into
# BUILD_DIR/console-node (never the repo); exits 77 (skipped) when either cannot be had.
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
export SENDAT_BIN=$2 SENDAT_CONSUMER_BIN=$3
chrome=${SENDAT_CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chrome" ] && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1
    chrome=$(command -v chromium || true)
fi
[ -n "$chrome" ] && [ -x "$chrome" ] || { echo "console: no chromium, skipped"; exit 77; }
command -v node >/dev/null || { echo "console: no node, skipped"; exit 77; }
mods=$build/console-node
if [ ! -d "$mods/node_modules/puppeteer-core" ]; then
    mkdir -p "$mods"
    npm install --silent --no-audit --no-fund --prefix "$mods" puppeteer-core@22.15.0 >/dev/null 2>&1 ||
        { echo "console: npm install puppeteer-core failed, skipped"; exit 77; }
fi
export SENDAT_CHROMIUM=$chrome NODE_PATH=$mods/node_modules SHOTS=$build/console-shots
exec timeout -k 10 240 node "$here/console_test.js"
