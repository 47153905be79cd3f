#!/usr/bin/env bash
# Quick start (1): install memoryui and serve it on a demo workspace with a printed login.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! command -v git >/dev/null; then
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq git
fi
python3 -m pip install -q -e .
python3 manage.py demo
exec python3 manage.py serve --bind "${MEMORYUI_BIND:-127.0.0.1:8000}" "$@"
