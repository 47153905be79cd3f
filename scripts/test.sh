#!/usr/bin/env bash
# Quick start (2): install everything the tests need into .venv (Debian's chromium, which
# Playwright drives as it is, included) and run the whole suite: lint, then pytest on both
# cores. (PostgreSQL, nginx and Caddy are installed only so tests can start throwaway
# servers of their own on 127.0.0.1: none is left running as a service; systemd only for
# `systemd-analyze verify`.)
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
need=""
command -v git >/dev/null || need="$need git"
[ -x /usr/bin/chromium ] || need="$need chromium"
command -v rg >/dev/null || need="$need ripgrep"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$need postgresql"
[ -x /usr/sbin/nginx ] || need="$need nginx"
[ -x /usr/bin/caddy ] || need="$need caddy"
command -v systemd-analyze >/dev/null || need="$need systemd"  # checks the shipped units
if [ -n "$need" ]; then
  echo "installing Debian packages:$need"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
  # The proxies are the tests' own: where installing them started them as services, stop them.
  for unit in nginx caddy; do
    case "$need " in
      *" $unit "*) if [ -d /run/systemd/system ]; then
                     $SUDO systemctl disable --now "$unit" >/dev/null 2>&1 || true
                   fi ;;
    esac
  done
fi
. scripts/venv.sh
"$PY" -m pip install -q -e ".[test,postgres]"
"$PY" -m ruff check .
"$PY" -m mypy
# --dist loadgroup: tests marked xdist_group("x") share one worker (and so one costly fixture,
# such as the e2e cluster); the rest are spread over both cores as usual.
"$PY" -m pytest -n 2 --dist loadgroup -p no:cacheprovider "$@"
