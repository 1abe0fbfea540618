#!/bin/sh
# Headless Chromium for the report's browser check (tests/report/test_browser.py).
# Installs Debian's `chromium` when it is missing and we are root; otherwise says how to.
set -eu
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "chromium is missing: install it with 'sudo apt-get install -y chromium'" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
