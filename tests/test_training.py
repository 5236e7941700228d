import csv
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
from helpers import TINY_VIT

import keras_vit
from keras_vit import training

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY_RUN = dict(model="Mu/4", image_size=8, batch_size=16, steps=8, steps_per_epoch=4, verbose=0)


def test_warmup_decay_schedules():
    lin = training.WarmupDecay(1.0, 110, 10, "linear")
    cos = training.WarmupDecay(1.0, 110, 10, "cosine")
    for s in (lin, cos):
        np.testing.assert_allclose([float(s(0)), float(s(5)), float(s(10)), float(s(110))], [0, 0.5, 1, 0], atol=1e-6)
    np.testing.assert_allclose(float(lin(60)), 0.5, atol=1e-6)
    np.testing.assert_allclose(float(cos(60)), 0.5, atol=1e-6)
    assert keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(cos)).get_config() == cos.get_config()


def test_weight_decay_exemptions():
    model = keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 16, 3), classes=3)
    exempt = {v.path for v in training.no_decay_variables(model)}
    assert any("pos_embedding" in p for p in exempt) and any(p.endswith("cls") for p in exempt)
    assert any("query_bias" in p for p in exempt) and any("gamma" in p for p in exempt)
    assert not any("kernel" in p for p in exempt)
    optimizer = training.pretrain_optimizer(model, 1e-3, 100, 10)
    optimizer.build(model.trainable_variables)
    decayed = [v for v in model.trainable_variables if optimizer._use_weight_decay(v)]
    assert decayed and all(v.name.endswith("kernel") for v in decayed)


def test_sigmoid_loss_sums_over_classes():
    y = np.array([[1.0, 0.0, 0.0]])
    logits = np.zeros((1, 3))
    np.testing.assert_allclose(float(np.mean(keras.ops.convert_to_numpy(training.sigmoid_cross_entropy(y, logits)))),
                               3 * np.log(2), rtol=1e-5)


@pytest.mark.parametrize(
    "overrides,match",
    [
        (dict(model="ViT_B17"), "--model: unknown model 'ViT_B17'"),
        (dict(model="S/16", image_size=40), "--image_size=40 is not divisible by 16"),
        (dict(strategy="tpu" if keras.backend.backend() != "tensorflow" else "data_parallel"),
         "is not available on the"),
        (dict(mode="finetune"), "--init is required"),
        (dict(model="BiT_R50x1", remat=True), "--remat recomputes transformer blocks; BiT_R50x1 has none"),
    ],
)
def test_bad_settings_fail_before_training(overrides, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        training.run(**dict(TINY_RUN, workdir=str(tmp_path), **overrides))


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="tf.distribute TPU strategy")
def test_tpu_without_tpu_fails_cleanly(tmp_path):
    with pytest.raises(RuntimeError, match="no TPU devices"):
        training.run(**dict(TINY_RUN, workdir=str(tmp_path), strategy="tpu", tpu="local"))
    with pytest.raises(RuntimeError, match="cannot reach the TPU"):
        training.run(**dict(TINY_RUN, workdir=str(tmp_path), strategy="tpu", tpu="no-such-tpu"))


def _recipe(script, *args, env=None):
    cmd = [sys.executable, os.path.join(ROOT, "recipes", script), "--verbose=0"] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, **(env or {})))


def _summary(workdir):
    with open(os.path.join(workdir, "summary.json")) as f:
        return json.load(f)


def _losses(workdir):
    with open(os.path.join(workdir, "log.csv")) as f:
        return [float(r["loss"]) for r in csv.DictReader(f)]


SMALL = ["--image_size=8", "--batch_size=16", "--steps=12", "--steps_per_epoch=4", "--dropout=0.1"]


def test_pretrain_finetune_and_resume_after_preemption(tmp_path):
    """A run killed mid-epoch and rerun ends exactly as an uninterrupted one."""
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    done = _recipe("pretrain.py", *SMALL, f"--workdir={full}")
    assert done.returncode == 0, done.stderr[-3000:]
    killed = _recipe("pretrain.py", *SMALL, f"--workdir={cut}", "--preempt_after_steps=6")
    assert killed.returncode == 75, killed.stderr[-3000:]
    assert not os.path.exists(os.path.join(cut, "summary.json"))
    resumed = _recipe("pretrain.py", *SMALL, f"--workdir={cut}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming" in resumed.stdout
    a, b = _summary(full), _summary(cut)
    assert a["steps"] == b["steps"] == 12
    np.testing.assert_allclose(b["val_loss"], a["val_loss"], rtol=1e-5)
    np.testing.assert_allclose(b["val_accuracy"], a["val_accuracy"])
    np.testing.assert_allclose(_losses(cut), _losses(full), rtol=1e-5)
    for name in ("model.keras", "model.weights.h5", "curves.png", "log.csv"):
        assert os.path.exists(os.path.join(full, name)), name
    for key in ("val_accuracy", "val_loss", "steps", "train_images_per_second"):
        assert a[key] is not None
    tuned = _recipe("finetune.py", f"--init={full}", "--image_size=12", "--batch_size=16", "--steps=4",
                    f"--workdir={tmp_path / 'ft'}", "--ema=0.99")
    assert tuned.returncode == 0, tuned.stderr[-3000:]
    assert _summary(str(tmp_path / "ft"))["image_size"] == 12


def test_bad_flag_message_names_the_flag(tmp_path):
    out = _recipe("pretrain.py", "--model=S/16", "--image_size=40", f"--workdir={tmp_path}")
    assert out.returncode != 0 and "--image_size=40" in out.stderr


_TWO_DEVICES = {
    "tensorflow": (
        "import tensorflow as tf; cpu = tf.config.list_physical_devices('CPU')[0]; "
        "tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2); ",
        "mirrored",
    ),
    "jax": ("", "data_parallel"),
}


@pytest.mark.skipif(keras.backend.backend() not in _TWO_DEVICES, reason="no distribution engine on this backend")
def test_same_losses_on_one_and_two_devices(tmp_path):
    setup, strategy = _TWO_DEVICES[keras.backend.backend()]
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"} if keras.backend.backend() == "jax" else {}
    runs = {}
    for name, strat in (("one", "none"), ("two", strategy)):
        workdir = str(tmp_path / name)
        code = (f"{setup if strat != 'none' else ''}import keras_vit.training as t; "
                f"t.run(model='Mu/4', image_size=8, batch_size=16, steps=6, steps_per_epoch=2, verbose=0, "
                f"strategy={strat!r}, workdir={workdir!r})")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=ROOT, **env))
        assert out.returncode == 0, out.stderr[-3000:]
        runs[name] = (_losses(workdir), _summary(workdir))
    assert runs["two"][1]["replicas"] == 2
    np.testing.assert_allclose(runs["two"][0], runs["one"][0], rtol=1e-4)


def _jax_two_devices(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT, XLA_FLAGS="--xla_force_host_platform_device_count=2"))


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="keras.distribution.ModelParallel is JAX's")
def test_model_parallel_matches_one_device(tmp_path):
    losses = {}
    for strat in ("none", "model_parallel"):
        workdir = str(tmp_path / strat)
        out = _jax_two_devices(
            "import keras_vit.training as t; "
            f"t.run(model='Mu/4', image_size=8, batch_size=16, steps=4, steps_per_epoch=2, verbose=0, "
            f"strategy={strat!r}, model_parallel=2, workdir={workdir!r})"
        )
        assert out.returncode == 0, out.stderr[-3000:]
        losses[strat] = _losses(workdir)
    np.testing.assert_allclose(losses["model_parallel"], losses["none"], rtol=1e-4)


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="2 host devices through XLA_FLAGS")
def test_batch_not_divisible_by_replicas(tmp_path):
    out = _jax_two_devices(
        "import keras_vit.training as t; "
        f"t.run(model='Mu/4', image_size=8, batch_size=15, steps=2, strategy='data_parallel', workdir={str(tmp_path)!r})"
    )
    assert out.returncode != 0 and "--batch_size=15 is not divisible by the 2 replicas" in out.stderr


def test_mixed_precision_and_gradient_accumulation(tmp_path):
    try:
        summary = training.run(**dict(TINY_RUN, workdir=str(tmp_path), mixed_precision=True, grad_accum=2,
                                      loss="sigmoid", label_smoothing=0.1, mixup=0.2, randaugment=True))
    finally:
        keras.config.set_dtype_policy("float32")
    assert np.isfinite(summary["val_loss"]) and summary["steps"] == 8


def test_finished_workdir_is_reported_not_retrained(tmp_path):
    first = training.run(**dict(TINY_RUN, steps=2, steps_per_epoch=2, workdir=str(tmp_path)))
    mtime = os.path.getmtime(os.path.join(tmp_path, "model.weights.h5"))
    again = training.run(**dict(TINY_RUN, steps=2, steps_per_epoch=2, workdir=str(tmp_path)))
    assert again == first and os.path.getmtime(os.path.join(tmp_path, "model.weights.h5")) == mtime


def test_mixed_precision_does_not_leak_into_the_next_run(tmp_path):
    try:
        training.run(**dict(TINY_RUN, steps=2, steps_per_epoch=2, mixed_precision=True, workdir=str(tmp_path / "a")))
        training.run(**dict(TINY_RUN, steps=2, steps_per_epoch=2, workdir=str(tmp_path / "b")))
        assert keras.config.dtype_policy().name == "float32"
    finally:
        keras.config.set_dtype_policy("float32")
