#!/usr/bin/env bash
# Installs the Debian packages posematch needs, only those that are missing.
# Usage: scripts/install-deps.sh [build|test|bench]   (test and bench include build)
set -euo pipefail
what=${1:-build}
pkgs=(build-essential cmake pkg-config libcjson-dev)
case "$what" in
  test) pkgs+=(clang libclang-rt-14-dev python3 valgrind) ;;
  bench) pkgs+=(libnanoflann-dev libfaiss-dev g++ python3) ;;
esac
pkgs+=(libnanoflann-dev libcmocka-dev)   # `make` also builds the bench and test binaries
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
