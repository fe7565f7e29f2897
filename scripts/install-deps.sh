#!/usr/bin/env bash
# Installs what the tests' real workloads and peers need, from Debian:
# PyTorch and scikit-learn for /usr/bin/python3 (the pyenv python3 on PATH
# lacks them), real NBD clients for memshare's interoperability tests
# (nbdinfo/nbdcopy/nbdsh, qemu-img, Python's libnbd), and iproute2 for the
# network-namespace link tests.
set -euo pipefail

need=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || need+=(python3-torch)
/usr/bin/python3 -c 'import sklearn' 2>/dev/null || need+=(python3-sklearn)
/usr/bin/python3 -c 'import nbd' 2>/dev/null || need+=(python3-libnbd)
command -v nbdinfo >/dev/null || need+=(libnbd-bin)
command -v nbdkit >/dev/null || need+=(nbdkit)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v ip >/dev/null || need+=(iproute2)
command -v tc >/dev/null || need+=(iproute2)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing from Debian: ${need[*]}" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
/usr/bin/python3 -c 'import torch, sklearn, nbd; print("torch", torch.__version__, "sklearn", sklearn.__version__, "libnbd", nbd.NBD().get_version())'
