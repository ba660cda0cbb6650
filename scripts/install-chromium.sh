#!/usr/bin/env bash
# Installs Debian's chromium, when missing, for the run page's browser test
# (runpage: TestBrowserRendersRunPage), which skips without it. Used by
# .ci/run; it takes under a minute on a 2-core machine.
set -euo pipefail
if command -v chromium >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-chromium: no apt-get: install chromium yourself to run the browser test" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-chromium: not root and no sudo: install chromium yourself" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq chromium >/dev/null
