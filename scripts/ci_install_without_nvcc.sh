#!/usr/bin/env bash
# CI (issue 37): the README's install line works on a machine without a CUDA toolkit. A fresh venv gets
# `pip install torch==2.13.0 -e ".[nvcc]"`, then, in a mount namespace where the system's nvcc and /usr/local/cuda*
# are hidden, the README's first grading command (python -m grader 08: the stubs' TODOs, no SETUP failure) and one
# compiled and simulated case of a reference. Needs root (the mount namespace); elsewhere it says so and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    echo "install without nvcc: not root or no unshare here, not tried"; exit 0
fi
venv=$(mktemp -d)
chmod 755 "$venv"  # as a venv made by hand is (mktemp makes it private)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet torch==2.13.0 -e ".[nvcc]"
# Hide every nvcc the machine has (PATH, CUDA_HOME's usual places), then grade as a learner would.
unshare --mount --propagation private bash -euo pipefail -c '
    for path in /usr/local/cuda /usr/local/cuda-* /opt/cuda; do
        [ -d "$path" ] && mount -t tmpfs none "$path"
    done
    for found in $(which -a nvcc 2>/dev/null || true); do mount --bind /dev/null "$found"; done
    unset CUDA_HOME CUDA_PATH
    export PATH="'"$venv"'/bin:$PATH"
    if command -v nvcc >/dev/null && nvcc --version >/dev/null 2>&1 && [ "$(command -v nvcc)" != "'"$venv"'/bin/nvcc" ]; then
        echo "install without nvcc: the system nvcc is still visible"; exit 1
    fi
    code=0; python -m grader 08 > /tmp/no-nvcc-08.txt 2>&1 || code=$?
    cat /tmp/no-nvcc-08.txt | tail -5
    if [ "$code" != 1 ] || grep -q "SETUP\|No CUDA compiler" /tmp/no-nvcc-08.txt || ! grep -q "TODO" /tmp/no-nvcc-08.txt; then
        echo "install without nvcc: python -m grader 08 on the stubs exited $code, not with the TODOs alone"; exit 1
    fi
    python -m grader 08 --solutions -k gemv --case square_256
'
echo "install without nvcc: the README's commands work"
