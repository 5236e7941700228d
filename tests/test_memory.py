import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.large
def test_vit_l16_load_memory():
    """Building ViT-L/16 and loading its .npz grows peak RSS by < 2.5x the
    weights' size (no needless copies of the checkpoint)."""
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "load_memory.py"), "--model=ViT_L16"],
        check=True, capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["weights_mb"] > 1100
    assert result["growth_over_weights"] < 2.5, result
