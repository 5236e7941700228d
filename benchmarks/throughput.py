"""Throughput and memory of keras_vit against peers and the machine's limit,
every Keras backend in one run (`make bench` installs the peers):

    python benchmarks/throughput.py --backends=tensorflow,jax,torch --out=bench

Each measurement runs in a fresh process of its own (KERAS_BACKEND is read at
import and peak RSS is per process), one after another so that none competes
for the cores:

- matmul: the backend's float32 matmul FLOP/s (2048^3, compiled where the
  backend compiles); the utilization of each model is the FLOP/s it executes
  over this;
- ViT-B/16 inference at 224 px (batch 8), then a ViT-S/16 AdamW training step
  at 224 px (batch 16, 1000 classes): keras_vit, keras-hub's ViTBackbone with
  the same configuration on the same backend, and timm (in the torch run)
  built in one process and timed in turns, so that the ratios are same-minute
  ratios (this 2-core VM drifts by up to 10% between processes);
- peak RSS of a ViT-B/16 training step (batch 16), without and with remat;
- the training input pipeline from JPEG files on disk, images/s per core.

Writes OUT/results.json and OUT/table.md, and prints the table.
"""
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from keras_vit.xla_cpu import MEMORY_SCHEDULER_FLAG  # noqa: E402
from recipes.common import MALLOC_TUNABLES  # noqa: E402

flags.DEFINE_list("backends", ["tensorflow", "jax", "torch"], "Keras backends to measure.")
flags.DEFINE_string("out", "bench", "Folder for results.json and table.md.")
flags.DEFINE_integer("repeats", 7, "Timed repetitions of each model after warm-up, in turns with the peers "
                     "(the median is reported).")
flags.DEFINE_bool("memory", True, "Also measure peak RSS of a ViT-B/16 training step, remat off and on.")
flags.DEFINE_bool("fast_malloc", True, "Run every measurement (ours and the peers alike) with glibc's malloc on "
                  "huge pages and reusing freed buffers, as keras_vit's recipes do (recipes/common.py).")
flags.DEFINE_bool("memory_scheduler", True, "On JAX, run every measurement (ours and the peers alike) with "
                  "XLA:CPU's memory-minimizing scheduler, as keras_vit's recipes do (keras_vit/xla_cpu.py).")
flags.DEFINE_string("task", None, "Internal: run one measurement in this process and print it as JSON.")
FLAGS = flags.FLAGS

INFERENCE_BATCH, TRAIN_BATCH, MEMORY_BATCH = 8, 16, 16
B16 = dict(dim=768, mlp=3072, heads=12, layers=12)
S16 = dict(dim=384, mlp=1536, heads=6, layers=12)


def vit_forward_flops(dim, mlp, layers, image=224, patch=16, classes=1000, last_block_queries=None, **_):
    """Multiply-adds x 2 of one image through a ViT with a class token;
    `last_block_queries=1` counts what keras_vit's classifiers execute (the
    last block computes the class token's output only)."""
    grid = (image // patch) ** 2
    n = grid + 1

    def block(q):  # q query tokens attending to all n
        return 2 * n * dim * 2 * dim + 2 * q * dim * dim + 2 * 2 * q * n * dim + 2 * q * dim * dim + 2 * 2 * q * dim * mlp

    embed = 2 * grid * patch * patch * 3 * dim
    return embed + (layers - 1) * block(n) + block(last_block_queries or n) + 2 * dim * classes


# The model's FLOPs (timm's and the papers' count), and what each runs.
INFERENCE_FLOPS = vit_forward_flops(**B16)
TRAIN_FLOPS = 3 * vit_forward_flops(**S16)  # forward + backward (2x forward)
EXECUTED_FLOPS = {
    "ours": {"inference": vit_forward_flops(**B16, last_block_queries=1),
             "train": 3 * vit_forward_flops(**S16, last_block_queries=1)},
    "keras_hub": {"inference": INFERENCE_FLOPS, "train": TRAIN_FLOPS},
    "timm": {"inference": INFERENCE_FLOPS, "train": TRAIN_FLOPS},
}


# ---- measurements, each run by a worker process -----------------------------

def compiled(fn):
    """`fn` compiled as the backend compiles (XLA for jax and tensorflow; torch
    runs eagerly, as its matmul dispatches straight to the BLAS)."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return jax.jit(fn)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.function(fn, jit_compile=True)
    return fn


def task_matmul(repeats):
    import keras
    import numpy as np

    n = 2048
    a = keras.ops.convert_to_tensor(np.random.rand(n, n).astype("float32"))
    b = keras.ops.convert_to_tensor(np.random.rand(n, n).astype("float32"))
    matmul = compiled(keras.ops.matmul)
    # Operands are arguments, not captured constants, so nothing folds away.
    # The limit is a peak: the fastest of 3x the repeats, not the median.
    step = {"matmul": lambda: keras.ops.convert_to_numpy(matmul(a, b)[0, 0])}
    seconds = _times_in_turns(step, 3 * repeats)["matmul"][0]
    return {"matmul_gflops": 2 * n**3 / seconds / 1e9}


def _times_in_turns(steps, repeats):
    """Sorted seconds of each step over `repeats` rounds after two warm-up
    calls, the steps timed in turns: ours and the peers share one process
    and the same minutes, so a noisy neighbour on the machine slows all of
    them alike instead of skewing one ratio."""
    for step in steps.values():
        step()
        step()
    times = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    return {name: sorted(t) for name, t in times.items()}


def _interleaved(steps, repeats):
    """Median seconds of each step, timed in turns (`_times_in_turns`)."""
    return {name: t[repeats // 2] for name, t in _times_in_turns(steps, repeats).items()}


def _keras_inference(model):
    import numpy as np

    x = np.random.default_rng(0).random((INFERENCE_BATCH, 224, 224, 3), dtype="float32")
    return lambda: model.predict_on_batch(x)


def _keras_train_step(model, batch):
    import keras
    import numpy as np

    model.compile(keras.optimizers.AdamW(1e-4), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.default_rng(0).random((batch, 224, 224, 3), dtype="float32")
    y = np.zeros((batch,), "int32")
    return lambda: model.train_on_batch(x, y)


def _ours(config, **kwargs):
    import keras_vit

    return keras_vit.VisionTransformer(
        patch_size=16, hidden_size=config["dim"], mlp_dim=config["mlp"], num_heads=config["heads"],
        num_layers=config["layers"], input_shape=(224, 224, 3), classes=1000, **kwargs
    )


def _keras_hub(config):
    import keras
    import keras_hub

    inputs = keras.Input((224, 224, 3))
    backbone = keras_hub.models.ViTBackbone(
        image_shape=(224, 224, 3), patch_size=16, num_layers=config["layers"], num_heads=config["heads"],
        hidden_dim=config["dim"], mlp_dim=config["mlp"],
    )
    tokens = backbone(inputs)
    return keras.Model(inputs, keras.layers.Dense(1000)(tokens[:, 0]))


def _timm_inference():
    import timm
    import torch

    model = timm.create_model("vit_base_patch16_224").eval()
    x = torch.rand(INFERENCE_BATCH, 3, 224, 224)

    def step():
        with torch.inference_mode():
            model(x)

    return step


def _timm_train_step():
    import timm
    import torch

    model = timm.create_model("vit_small_patch16_224").train()
    optimizer = torch.optim.AdamW(model.parameters(), 1e-4)
    x, y = torch.rand(TRAIN_BATCH, 3, 224, 224), torch.zeros(TRAIN_BATCH, dtype=torch.long)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def _speed(kind, repeats):
    import keras

    if keras.backend.backend() == "torch":
        try:
            import timm  # noqa: F401  (before keras_hub: torchvision crashes if imported after tensorflow-text)
        except ImportError:
            pass
    batch = INFERENCE_BATCH if kind == "inference" else TRAIN_BATCH
    if kind == "inference":
        builders = {"ours": lambda: _keras_inference(_ours(B16)),
                    "keras_hub": lambda: _keras_inference(_keras_hub(B16)),
                    "timm": _timm_inference}
    else:
        builders = {"ours": lambda: _keras_train_step(_ours(S16), TRAIN_BATCH),
                    "keras_hub": lambda: _keras_train_step(_keras_hub(S16), TRAIN_BATCH),
                    "timm": _timm_train_step}
    if keras.backend.backend() != "torch":
        del builders["timm"]
    steps, out = {}, {}
    for name, build in builders.items():
        try:
            steps[name] = build()
        except Exception as e:  # a peer that is missing or broken is reported, not fatal
            if name == "ours":
                raise
            out[f"{name}_{kind}_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
    for name, seconds in _interleaved(steps, repeats).items():
        out[f"{name}_{kind}_img_s"] = batch / seconds
    return out


def task_inference(repeats):
    return _speed("inference", repeats)


def task_train(repeats):
    return _speed("train", repeats)


def _peak_memory(remat):
    import psutil

    step = _keras_train_step(_ours(B16, remat=remat), MEMORY_BATCH)
    built = psutil.Process().memory_info().rss
    step()  # compiles
    start = time.perf_counter()
    step()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"peak_rss_mb": peak / 2**20, "step_rss_growth_mb": (peak - built) / 2**20, "step_seconds": seconds}


def task_memory(repeats):
    return {"memory": _peak_memory(remat=False)}


def task_memory_remat(repeats):
    return {"memory_remat": _peak_memory(remat=True)}


def task_pipeline(repeats):
    import numpy as np
    import tensorflow as tf

    from keras_vit import data

    root = tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    for label in range(2):
        os.makedirs(os.path.join(root, str(label)))
        for i in range(64):
            jpeg = tf.io.encode_jpeg(rng.integers(0, 255, (375, 500, 3), dtype=np.uint8))
            tf.io.write_file(os.path.join(root, str(label), f"{i}.jpg"), jpeg)
    batches = iter(data.train_dataset(data.load_source(f"folder:{root}", "train"), 224, 32))
    next(batches)
    start = time.perf_counter()
    for _ in range(8):
        next(batches)
    return {"pipeline_img_s_per_core": 8 * 32 / (time.perf_counter() - start) / os.cpu_count()}


TASKS = {name[5:]: fn for name, fn in globals().items() if name.startswith("task_")}


# ---- the driver -------------------------------------------------------------

def _run_task(backend, task):
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    if FLAGS.fast_malloc:
        env["GLIBC_TUNABLES"] = MALLOC_TUNABLES
    if FLAGS.memory_scheduler and backend == "jax":
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + MEMORY_SCHEDULER_FLAG).strip()
    cmd = [sys.executable, os.path.abspath(__file__), f"--task={task}", f"--repeats={FLAGS.repeats}"]
    print(f"[{backend}] {task} ...", flush=True)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        # Recorded, not raised: one peer that fails to import must not cost
        # the rest of a quarter-hour run.
        errors = [line for line in (proc.stderr + proc.stdout).splitlines() if "Error" in line or "error" in line]
        reason = (errors or [f"exit code {proc.returncode}"])[-1].strip()
        print(f"[{backend}] {task} failed: {reason}", flush=True)
        return {f"{task}_error": reason}
    result = json.loads(lines[-1][len("RESULT "):])
    print(f"[{backend}] {task}: {result}", flush=True)
    return result


def measure(backend):
    tasks = ["matmul", "inference", "train"]
    if backend == "tensorflow":
        tasks.append("pipeline")  # tf.data: the same whichever backend trains
    if FLAGS.memory:
        tasks += ["memory", "memory_remat"]
    out = {"backend": backend}
    for task in tasks:
        out.update(_run_task(backend, task))
    peak = out["matmul_gflops"] * 1e9
    for who, executed in EXECUTED_FLOPS.items():
        for kind, flops in executed.items():
            if f"{who}_{kind}_img_s" in out:
                out[f"{who}_{kind}_utilization"] = out[f"{who}_{kind}_img_s"] * flops / peak
    return out


def machine():
    import psutil

    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, {platform.system()}"


def _versions():
    from importlib import metadata

    out = {}
    for name in ("keras", "tensorflow-cpu", "jax", "torch", "keras-hub", "timm"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def table(results):
    def f(value, fmt="{:.2f}"):
        return "–" if value is None else fmt.format(value)

    def ratio(a, b):
        return f(a / b if a and b else None, "{:.2f}x")

    rows = [
        "| backend | matmul GFLOP/s | B/16 inference img/s (util.) | vs keras-hub | vs timm "
        "| S/16 train img/s (util.) | vs keras-hub | vs timm | B/16 train step peak RSS, remat off → on "
        "| JPEG pipeline img/s/core |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    timm = next((r for r in results["backends"] if "timm_inference_img_s" in r), {})
    for r in results["backends"]:
        cells = [r["backend"], f(r.get("matmul_gflops"), "{:.0f}")]
        for kind in ("inference", "train"):
            ours = r.get(f"ours_{kind}_img_s")
            util = r.get(f"ours_{kind}_utilization")
            cells += [f"{f(ours)} ({f(util, '{:.0%}')})", ratio(ours, r.get(f"keras_hub_{kind}_img_s")),
                      ratio(ours, timm.get(f"timm_{kind}_img_s"))]
        off, on = r.get("memory"), r.get("memory_remat")
        cells.append(f"{off['peak_rss_mb'] / 1024:.2f} → {on['peak_rss_mb'] / 1024:.2f} GiB "
                     f"(step {off['step_seconds']:.1f} → {on['step_seconds']:.1f} s)" if off and on else "–")
        cells.append(f(r.get("pipeline_img_s_per_core"), "{:.0f}"))
        rows.append("| " + " | ".join(cells) + " |")
    peers = [f"keras-hub on {r['backend']} {f(r.get('keras_hub_inference_img_s'))} / "
             f"{f(r.get('keras_hub_train_img_s'))}" for r in results["backends"]]
    if timm:
        peers.append(f"timm (PyTorch) {timm['timm_inference_img_s']:.2f} / {timm['timm_train_img_s']:.2f}")
    errors = [f"{r['backend']} {k[:-6]}: {v}" for r in results["backends"] for k, v in r.items()
              if k.endswith("_error")]
    lines = [f"Machine: {results['machine']}; {results['date']}; GLIBC_TUNABLES for every column alike: "
             f"{results.get('malloc', 'default')}; XLA_FLAGS on JAX: {results.get('jax_xla_flags', 'default')}.",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ".", ""] + rows
    lines += ["", "Peers in the same run, inference / training img/s: " + "; ".join(peers) + "."]
    if errors:
        lines += ["", "Failed: " + "; ".join(errors) + "."]
    return "\n".join(lines) + "\n"


def main(_):
    if FLAGS.task:
        result = TASKS[FLAGS.task](FLAGS.repeats)
        print("RESULT " + json.dumps(result), flush=True)
        return
    results = {"machine": machine(), "versions": _versions(), "date": time.strftime("%Y-%m-%d"),
               "malloc": MALLOC_TUNABLES if FLAGS.fast_malloc else "default",
               "jax_xla_flags": MEMORY_SCHEDULER_FLAG if FLAGS.memory_scheduler else "default",
               "backends": [measure(b) for b in FLAGS.backends]}
    os.makedirs(FLAGS.out, exist_ok=True)
    with open(os.path.join(FLAGS.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    text = table(results)
    with open(os.path.join(FLAGS.out, "table.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    app.run(main)
