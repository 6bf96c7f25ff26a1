#!/usr/bin/env bash
# Installs, through apt, the Debian packages the third-party programs of the
# inference-accuracy corpus need (Gymnasium: cloudpickle; Stable-Baselines3:
# pandas and matplotlib, imported by its logger). Our own programs need only
# python3-torch and python3-numpy (scripts/install_deps.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
exec "$root/scripts/install_deps.sh" python3-cloudpickle python3-pandas python3-matplotlib
