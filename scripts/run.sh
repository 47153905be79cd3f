#!/usr/bin/env bash
# Quick start (1): install memoryui into .venv and serve it on a demo workspace with a
# printed login.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v git >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq git
fi
. scripts/venv.sh
"$PY" -m pip install -q -e .
.venv/bin/memoryui demo
exec .venv/bin/memoryui serve --bind "${MEMORYUI_BIND:-127.0.0.1:8000}" "$@"
