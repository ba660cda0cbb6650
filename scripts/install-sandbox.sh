#!/usr/bin/env bash
# Installs what the node sandbox needs (bubblewrap, and passt for pasta) from the distribution's
# packages, when missing, and strace, with which the tests watch what the
# agent CLIs connect to, and pytest for the system python3, with which the
# ci-python template's test runs (the machine may not reach PyPI). Used by
# .ci/run; operators install bubblewrap (docs/serve.md, Sandbox).
set -euo pipefail
pkgs=()
command -v bwrap >/dev/null || pkgs+=(bubblewrap)
# pasta connects each run's network namespace to public addresses
# (sandbox.network: public, the default).
command -v pasta >/dev/null || pkgs+=(passt)
command -v strace >/dev/null || pkgs+=(strace)
# PYENV_VERSION=system: where python3 is a pyenv shim, the system python,
# which the package installs into (the test falls back to it the same way).
if command -v python3 >/dev/null && ! python3 -m pytest --version >/dev/null 2>&1 &&
  ! PYENV_VERSION=system python3 -m pytest --version >/dev/null 2>&1; then
  if command -v apk >/dev/null; then pkgs+=(py3-pytest); else pkgs+=(python3-pytest); fi
fi
if [ "${#pkgs[@]}" = 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-sandbox: not root and no sudo: install bubblewrap yourself" >&2; exit 1; }
  sudo="sudo"
fi
if command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null
elif command -v dnf >/dev/null; then
  $sudo dnf install -y -q "${pkgs[@]}"
elif command -v apk >/dev/null; then
  $sudo apk add -q "${pkgs[@]}"
else
  echo "install-sandbox: no known package manager: install bubblewrap yourself" >&2
  exit 1
fi
bwrap --version
command -v pasta >/dev/null || { echo "install-sandbox: pasta is still missing" >&2; exit 1; }
