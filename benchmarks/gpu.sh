#!/usr/bin/env bash
# ViT-B/16 training throughput and MFU in bfloat16 with flash attention on one
# GPU, for each Keras backend whose framework is installed there (about 1 min
# per backend; the goal is MFU >= 45%).
#
#   bash benchmarks/gpu.sh [OUT_DIR]
#
# A machine without Keras needs its wheels beside the repo first, made where
# pip can reach PyPI and then carried along (.whl/ is git-ignored):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl \
#     keras==3.15.1 namex optree --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
set -u
cd "$(dirname "$0")/.."
out=${1:-${OUT:-bench}}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/keras_vit_site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/keras_vit_site
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=3
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
for backend in jax torch tensorflow; do

  if ! python3 -c "import $backend" 2>/dev/null; then echo "== $backend: not installed here, skipped"; continue; fi
  echo "== $backend"
  KERAS_BACKEND=$backend timeout 150 python3 benchmarks/gpu_step.py --out="$out/gpu_$backend.json" \
    || echo "== $backend: failed (exit $?)"
done
python3 - "$out" <<'PY'
import glob, json, sys
rows = [json.load(open(p)) for p in sorted(glob.glob(f"{sys.argv[1]}/gpu_*.json"))]
print("| backend | batch | step ms | img/s | model TFLOP/s | MFU | bf16 matmul TFLOP/s |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['backend']} | {r['batch_size']} | {r['step_ms']:.1f} | {r['images_per_s']:.0f} | "
          f"{r['model_tflops']:.0f} | {r['mfu']:.1%} | {r['bf16_matmul_tflops']:.0f} |")
PY
