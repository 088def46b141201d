#!/usr/bin/env bash
# Installs everything the project needs, idempotently: Debian packages for the Mininet
# backend (as root) and a Python venv in .venv with the pinned PyPI packages.
# Re-running is cheap: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(mininet iperf3 tcpdump iproute2 ethtool bridge-utils net-tools procps util-linux)
need=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian packages: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "setup: not root, skipping Debian packages ${need[*]} (the Mininet backend needs them)" >&2
  fi
fi

PY=${PYTHON:-python3}
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt requirements-optional.txt requirements-collective.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating .venv and installing requirements.txt (about a minute)"
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-optional.txt -c requirements.txt
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-collective.txt -c requirements.txt
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . 2>/dev/null \
    || .venv/bin/pip install -q --disable-pip-version-check --no-deps -e .
  echo "$want" > "$stamp"
fi

# Compile the numba kernels now (cached beside each module of emulation.kernels.MODULES,
# or in NUMBA_CACHE_DIR), so that the first run does not pay it silently; a second call
# only reads the cache index (about a second).
.venv/bin/python -c 'import sys; from emulation.fluid.run import ensure_kernels; ensure_kernels(sys.stdout, prefix="setup: ")'
