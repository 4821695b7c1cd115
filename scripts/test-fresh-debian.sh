#!/usr/bin/env bash
# make test-fresh (optional, needs root and mount rights): the README's promise, checked. A
# minimal Debian 12 (debootstrap --variant=minbase: no compiler, no cmake, no python) gets only
# `make`, then runs the two quick-start commands on a clone of this repository's HEAD:
# `make demo` and `make test`. The real clips, when present beside the repository, are mounted
# read-only at the same place beside the clone.
#   scripts/test-fresh-debian.sh [DIR]   (DIR: the chroot, default /tmp/posematch-fresh, replaced)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/tmp/posematch-fresh}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ "$(id -u)" -ne 0 ]; then
  echo "test-fresh: needs root (debootstrap, chroot, bind mounts)" >&2
  exit 1
fi
if ! command -v debootstrap > /dev/null; then
  echo "test-fresh: installing debootstrap" >&2
  apt-get update -qq > /dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap > /dev/null
fi

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" 2> /dev/null || umount -l "${mounts[i]}" || true; done
}
trap cleanup EXIT
bind() { # SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}

# A chroot with mounts still in it must not be removed (rm would reach the host through them).
if [ -e "$dir" ]; then
  if grep -q " $dir/" /proc/mounts; then
    echo "test-fresh: $dir still has mounts; unmount them first" >&2
    exit 1
  fi
  rm -rf "$dir"
fi
echo "test-fresh: debootstrap bookworm (minbase) into $dir" >&2
debootstrap --variant=minbase bookworm "$dir" "$mirror" > "$dir.debootstrap.log" 2>&1 \
  || { echo "test-fresh: debootstrap failed, see $dir.debootstrap.log" >&2; exit 1; }
cp /etc/resolv.conf "$dir/etc/resolv.conf"
bind /proc "$dir/proc"
bind /sys "$dir/sys"
bind /dev "$dir/dev"
bind /dev/pts "$dir/dev/pts"

# The clone sits where the repository sits, so that ../shared/mocap is found as it is here.
repo_in=/work/$(basename "$root")
git clone -q "$root" "$dir$repo_in"
shared=$(cd "$root/.." && pwd)/shared
if [ -d "$shared/mocap" ]; then
  bind "$shared" "$dir/work/shared" ro
else
  echo "test-fresh: no $shared/mocap: the clone runs without real clips" >&2
fi

chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash -c "set -e
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make > /dev/null
    cd $repo_in
    start=\$(date +%s)
    make demo
    demo=\$(( \$(date +%s) - start ))
    start=\$(date +%s)
    make test
    echo \"test-fresh: make demo \${demo} s, make test \$(( \$(date +%s) - start )) s on a fresh Debian 12 with only make added\""
