#!/usr/bin/env bash
# Installs, through apt, the Debian packages the third-party programs of the
# inference-accuracy corpus need (Gymnasium: cloudpickle; Stable-Baselines3:
# pandas and matplotlib, imported by its logger). Our own programs need only
# python3-torch and python3-numpy (scripts/install_deps.sh).
set -euo pipefail
packages=(python3-cloudpickle python3-pandas python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "inference corpus: all third-party dependencies are installed"
  exit 0
fi
echo "inference corpus: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then sudo=sudo; else sudo=; fi
$sudo apt-get install -y --no-install-recommends "${missing[@]}"
