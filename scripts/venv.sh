# Sourced by scripts/run.sh and scripts/test.sh: the checkout's own virtual environment,
# .venv, made once and reused, so nothing is installed into the system's Python.
# Debian's python3 ships without ensurepip until python3-venv is installed: then it is.
if [ ! -x .venv/bin/python ]; then
  if ! python3 -m venv .venv; then
    rm -rf .venv
    echo "installing Debian's python3-venv (python3 -m venv needs it)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
    python3 -m venv .venv
  fi
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
PY="$PWD/.venv/bin/python"
