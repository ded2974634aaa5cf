#!/usr/bin/env bash
# The GPU bundle with nbgrader, for the instructor's autograde on a GPU (tests/test_nbgrader.py's gpu test).
# make-bundle's build with nbgrader is 69 MB, and a device call carries 64 MiB in all; this leaves out what
# an autograde never loads: debugpy and jedi (ipykernel and IPython import them only when present), z3's
# command-line binary, the second copy of libz3 (a link instead), and nbgrader's docs and tests.
#   bash scripts/nbgrader_bundle.sh [BUILT_SITE_TAR_XZ]     # from the repository root; writes .gpu-nbgrader/
# Then, on the device: source .gpu-nbgrader/env.sh && python -m pytest -m gpu tests/test_nbgrader.py
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
built=${1:-}
if [ -z "$built" ]; then  # make-bundle writes the .gpu/ of the checkout it runs in: build in a clone
  git clone -q "$root" "$work/repo"
  (cd "$work/repo" && "$root/../shared/gpu/make-bundle" --with "nbclient ipykernel nbformat nbgrader" \
    --skip "jupyterlab notebook jupyterlab-server ipywidgets widgetsnbextension jupyterlab-widgets jupyter-lsp babel json5 async-lru notebook-shim")
  built="$work/repo/.gpu/site.tar.xz"
fi
mkdir -p "$work/site"
xz -dc "$built" | tar -x -C "$work"
site="$work/site"
rm -rf "$site"/debugpy "$site"/debugpy-* "$site"/jedi "$site"/jedi-* "$site"/z3_solver-*.data \
  "$site"/nbgrader/docs "$site"/nbgrader/tests
ln -sf libz3.so.4.15 "$site/z3/lib/libz3.so"  # tilelang links the versioned name, z3's Python the plain one
mkdir -p .gpu-nbgrader
grep -qx '/.gpu-nbgrader/' .git/info/exclude 2>/dev/null || echo '/.gpu-nbgrader/' >> .git/info/exclude
tar -C "$work" -cf - site | xz -T2 -9 > .gpu-nbgrader/site.tar.xz
# Its own unpack folder: a warm device may hold the plain bundle's /tmp/site already.
sed 's#/tmp/site#/tmp/site-nbgrader#g; s#\.gpu/site\.tar\.xz#.gpu-nbgrader/site.tar.xz#' "$root/../shared/gpu/env.sh" \
  > .gpu-nbgrader/env.sh
# nbgrader runs `alembic` by name to read its database's version; a wheel unpacked by hand has no console
# scripts, so the shell gets one that runs the module.
cat >> .gpu-nbgrader/env.sh <<'SHIM'
mkdir -p /tmp/site-nbgrader-bin && printf '#!/bin/sh\nexec python3 -m alembic "$@"\n' > /tmp/site-nbgrader-bin/alembic
chmod +x /tmp/site-nbgrader-bin/alembic && export PATH="/tmp/site-nbgrader-bin:$PATH"
SHIM
size=$(stat -c %s .gpu-nbgrader/site.tar.xz)
echo ".gpu-nbgrader/site.tar.xz: $size bytes"
[ "$size" -lt 60000000 ] || { echo "too large for a device call (64 MiB in all)"; exit 1; }
