#!/usr/bin/env bash
# A CPython this machine lacks (3.13, 3.14, ...), for the per-interpreter
# tests, taken from Debian unstable's packages and installed nowhere: the
# .deb files are unpacked into DIR/root with the C library they were built
# against, and DIR/bin/pythonX.Y runs the interpreter through that C
# library's own loader, so Debian 12's system is left as it is. DIR/lib
# and DIR/include lead to the unpacked ones, so the interpreter finds its
# standard library and headers from where it is started, with no
# PYTHONHOME for its children to inherit.
#
#   scripts/debian_python.sh VERSION DIR     e.g. 3.14 /tmp/python3.14
#
# Then point CMake at it and run its tests (the interpreter is found only
# when asked for: CI machines do not have one):
#
#   cmake -DRLSCOPE_FOUND_python3.14=DIR/bin/python3.14 build
#   ctest --test-dir build -R '3[.]14'
#
# CMake keeps one interpreter per version, pyenv's before this one: where
# pyenv has the version, run a test script with --python instead, e.g.
# test/e2e/python_monitoring_e2e_test.py --rlscope build/bin/rlscope
# --python DIR/bin/python3.13.
#
# Why not build it: python.org is out of reach from here and CPython's
# repository is more than `fetch` brings; unstable's source tarballs are
# not served by the archive mirror, its binary packages are. Debian links
# some extension modules into its interpreter (_json, math, ...; see
# sys.builtin_module_names): their calls are the interpreter's own time,
# as on any build that does so.
set -euo pipefail

if (($# != 2)) || [[ ! "$1" =~ ^3\.[0-9]+$ ]]; then
  echo "usage: $0 VERSION DIR   (VERSION like 3.14; DIR is created)" >&2
  exit 2
fi
version="$1"
# The wrapper names DIR's paths in double quotes: refuse what would break it.
for path in "$2" "$(realpath -m -- "$2")"; do
  if [[ "$path" == *[\"\$\`\\]* ]]; then
    echo "$0: DIR must not contain \", \$, \` or \\: $path" >&2
    exit 2
  fi
done
dir="$(mkdir -p -- "$2" && CDPATH='' cd -- "$2" >/dev/null && pwd -P)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
for tool in curl xz dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool (apt-get install curl xz-utils dpkg)" >&2; exit 1; }
done

# The interpreter, its standard library and headers, and the shared
# libraries they load that must come from unstable too (built against its
# C library). Other libraries are this machine's; a module that needs a
# version Debian 12 lacks does not import (checked on 3.14.10: _hashlib,
# ctypes, _decimal, sqlite3 and ssl do).
packages=(
  "python${version}-minimal" "libpython${version}-minimal" "libpython${version}-stdlib" "libpython${version}-dev"
  libc6 libc-gconv-modules-extra libgcc-s1 libstdc++6 libexpat1 zlib1g libssl3t64 openssl-provider-legacy
  libzstd1 libffi8 libbz2-1.0 liblzma5 libuuid1 libsqlite3-0 libncursesw6 libtinfo6 libreadline8t64
)

# The index is fetched again once a day old: unstable's files move on.
index="$dir/Packages"
if [[ ! -s "$index" || -n "$(find "$index" -mmin +1440)" ]]; then
  echo "== the package index of Debian unstable ($mirror)"
  curl -fsS --retry 3 "$mirror/dists/sid/main/binary-amd64/Packages.xz" | xz -dc >"$index.part"
  mv "$index.part" "$index"
fi

rm -rf "$dir/root"  # No file of an earlier version left behind.
mkdir -p "$dir/debs" "$dir/root"
for package in "${packages[@]}"; do
  file=$(awk -v want="Package: $package" '$0 == want {found = 1} found && /^Filename: / {print $2; exit}' "$index")
  if [[ -z "$file" ]]; then
    echo "$0: Debian unstable has no package $package (is $version in unstable?)" >&2
    exit 1
  fi
  deb="$dir/debs/$(basename "$file")"
  if [[ ! -s "$deb" ]]; then
    curl -fsS --retry 3 -o "$deb.part" "$mirror/$file" ||
      { echo "$0: could not fetch $file (remove $index to fetch the index again)" >&2; exit 1; }
    mv "$deb.part" "$deb"
  fi
  dpkg-deb -x "$deb" "$dir/root"
done

root="$dir/root"
loader="$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
mkdir -p "$dir/bin"
ln -sfn root/usr/lib "$dir/lib"
ln -sfn root/usr/include "$dir/include"
cat >"$dir/bin/python$version" <<EOF
#!/bin/sh
# Debian unstable's CPython $version through unstable's own loader and C
# library (made by scripts/debian_python.sh).
exec "$loader" --library-path "$root/usr/lib/x86_64-linux-gnu" --argv0 "\$0" "$root/usr/bin/python$version" "\$@"
EOF
chmod +x "$dir/bin/python$version"

# Debian's pyconfig.h includes the multiarch one from the folder above
# the headers; test/CMakeLists.txt adds that folder.
"$dir/bin/python$version" -I -c "import sys, _hashlib, ctypes; print('CPython', sys.version.split()[0], 'at', sys.executable)"
echo "cmake -DRLSCOPE_FOUND_python$version=$dir/bin/python$version build"
