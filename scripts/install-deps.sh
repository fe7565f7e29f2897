#!/usr/bin/env bash
# Installs what the tests' real workloads need: Debian's PyTorch and
# scikit-learn for /usr/bin/python3 (the pyenv python3 on PATH lacks them).
set -euo pipefail
if /usr/bin/python3 -c 'import torch, sklearn' 2>/dev/null; then
  exit 0
fi
echo "installing python3-torch and python3-sklearn from Debian..." >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torch python3-sklearn >/dev/null
/usr/bin/python3 -c 'import torch, sklearn; print("torch", torch.__version__, "sklearn", sklearn.__version__)'
