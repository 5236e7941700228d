"""The benchmark scripts' own arithmetic and a CPU smoke run of the GPU step
(the timed runs themselves are `make bench` and benchmarks/gpu.sh)."""
import json
import os
import subprocess
import sys

import keras
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import throughput  # noqa: E402


def test_vit_b16_flops_match_the_published_count():
    # timm and the DeiT paper list ViT-B/16 at 224 px as 17.58 GMACs.
    assert throughput.vit_forward_flops(**throughput.B16) == pytest.approx(2 * 17.58e9, rel=2e-3)
    # S/16: 4.61 GMACs.
    assert throughput.vit_forward_flops(**throughput.S16) == pytest.approx(2 * 4.61e9, rel=5e-3)
    # A classifier's last block for the class token only: a B/16 block is
    # 2 * (197*768*2304 + 197*197*768*2 + 197*768*768 + 197*768*3072*2) =
    # 2.908 GFLOP; with one query, K and V of 197 tokens and the rest for 1:
    # 2 * (197*768*1536 + 768*768*2 + 197*768*2 + 768*3072*2) = 0.477 GFLOP.
    saved = throughput.INFERENCE_FLOPS - throughput.EXECUTED_FLOPS["ours"]["inference"]
    assert saved == 2907909120 - 477182976
    assert saved / throughput.INFERENCE_FLOPS == pytest.approx(0.069, abs=1e-3)


def test_table_reports_same_run_ratios():
    results = {
        "machine": "test machine", "date": "2026-11-30", "versions": {"keras": "3"}, "malloc": "glibc.malloc.hugetlb=1",
        "backends": [
            {"backend": "jax", "matmul_gflops": 100.0, "ours_inference_img_s": 3.0, "ours_inference_utilization": 0.9,
             "ours_train_img_s": 2.0, "ours_train_utilization": 0.5, "keras_hub_inference_img_s": 2.5,
             "keras_hub_train_img_s": 2.5, "memory": {"peak_rss_mb": 4096.0, "step_seconds": 10.0},
             "memory_remat": {"peak_rss_mb": 2048.0, "step_seconds": 12.0}},
            {"backend": "torch", "matmul_gflops": 100.0, "ours_inference_img_s": 2.0, "ours_train_img_s": 4.0,
             "timm_inference_img_s": 1.6, "timm_train_img_s": 5.0, "keras_hub_train_error": "ImportError: x"},
        ],
    }
    text = throughput.table(results)
    jax_row = next(line for line in text.splitlines() if line.startswith("| jax"))
    assert "3.00 (90%) | 1.20x | 1.88x" in jax_row  # vs keras-hub 2.5, vs timm 1.6 (from the torch run)
    assert "2.00 (50%) | 0.80x | 0.40x" in jax_row
    assert "4.00 → 2.00 GiB (step 10.0 → 12.0 s)" in jax_row
    assert "Failed: torch keras_hub_train: ImportError: x." in text
    assert "GLIBC_TUNABLES for every column alike: glibc.malloc.hugetlb=1; XLA_FLAGS on JAX: default." in text


def test_peers_are_timed_in_turns(monkeypatch):
    calls = []
    clock = iter(range(1000))
    monkeypatch.setattr(throughput.time, "perf_counter", lambda: next(clock))
    steps = {"ours": lambda: calls.append("ours"), "peer": lambda: calls.append("peer")}
    medians = throughput._interleaved(steps, repeats=3)
    # Two warm-up calls each, then strictly alternating timed calls.
    assert calls == ["ours", "ours", "peer", "peer"] + ["ours", "peer"] * 3
    assert medians == {"ours": 1, "peer": 1}


def test_gpu_step_runs_on_this_backend(tmp_path):
    out = tmp_path / "gpu.json"
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "gpu_step.py"), "--variant=Mu/4", "--image_size=16",
           "--batch_size=4", "--steps=2", "--no_flash", "--remat", "--no_compile", f"--out={out}"]
    env = dict(os.environ, KERAS_BACKEND=keras.backend.backend())
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["backend"] == keras.backend.backend()
    assert result["images_per_s"] > 0 and 0 < result["mfu"] < 1
