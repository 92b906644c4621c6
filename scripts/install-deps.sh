#!/usr/bin/env bash
# Installs the system packages the test suite needs, when they are missing:
# kcat (librdkafka's CLI, a real client), zookeeper (cluster tests) and
# chromium (the web console's browser tests, e2e/console).
set -euo pipefail
need=()
command -v kcat >/dev/null 2>&1 || need+=(kcat)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v chromium >/dev/null 2>&1 || need+=(chromium fonts-liberation)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
