"""Throughput of keras_vit against peers and the machine's limit, on the
current Keras backend (run once per KERAS_BACKEND):

    KERAS_BACKEND=jax python benchmarks/throughput.py --json=bench_jax.json

- the machine's float32 matmul FLOP/s (large square matmul, this backend),
- ViT-B/16 inference at 224 px (batch 8) and a ViT-S/16 training step
  (batch 16, AdamW, 1000 classes): images/s and utilization (model FLOP/s
  over the matmul rate; FLOPs counted from the config),
- the same for keras-hub's ViTBackbone (same backend) and timm (PyTorch),
  when installed,
- the training preprocessing from JPEG files, images/s per core.
"""
import json
import os
import tempfile
import time

from absl import app, flags

flags.DEFINE_string("json", None, "Write the results here too.")
flags.DEFINE_integer("repeats", 5, "Timed repetitions after warm-up.")
FLAGS = flags.FLAGS


def vit_forward_flops(image=224, patch=16, dim=768, mlp=3072, layers=12, classes=1000, cls=True):
    n = (image // patch) ** 2 + int(cls)
    embed = 2 * (image // patch) ** 2 * patch * patch * 3 * dim
    block = 2 * n * dim * 3 * dim + 2 * 2 * n * n * dim + 2 * n * dim * dim + 2 * 2 * n * dim * mlp
    return embed + layers * block + 2 * dim * classes


def _time(fn, repeats):
    fn()
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def matmul_flops(repeats):
    import keras
    import numpy as np

    n = 2048
    a = keras.ops.convert_to_tensor(np.random.rand(n, n).astype("float32"))
    b = keras.ops.convert_to_tensor(np.random.rand(n, n).astype("float32"))
    # Operands are arguments, not captured constants, so no compiler can fold
    # the product away.
    fn = _compiled(lambda a, b: keras.ops.matmul(a, b))
    return 2 * n**3 / _time(lambda: keras.ops.convert_to_numpy(fn(a, b)[0, 0]), repeats)


def _compiled(fn):
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return jax.jit(fn)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.function(fn, jit_compile=True)
    return fn


def keras_inference(model, batch, repeats):
    import numpy as np

    x = np.random.rand(batch, 224, 224, 3).astype("float32")
    model.predict_on_batch(x)
    return batch / _time(lambda: model.predict_on_batch(x), repeats)


def keras_training(model, batch, repeats):
    import keras
    import numpy as np

    model.compile(keras.optimizers.AdamW(1e-4), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.rand(batch, 224, 224, 3).astype("float32")
    y = np.zeros((batch,), "int32")
    return batch / _time(lambda: model.train_on_batch(x, y), repeats)


def keras_hub_models():
    import keras
    import keras_hub

    def backbone(dim, mlp, heads, layers):
        inputs = keras.Input((224, 224, 3))
        bb = keras_hub.models.ViTBackbone(image_shape=(224, 224, 3), patch_size=16, num_layers=layers,
                                          num_heads=heads, hidden_dim=dim, mlp_dim=mlp)
        x = bb(inputs)[:, 0]
        return keras.Model(inputs, keras.layers.Dense(1000)(x))

    return backbone(768, 3072, 12, 12), backbone(384, 1536, 6, 12)


def timm_numbers(repeats):
    import timm
    import torch

    b16 = timm.create_model("vit_base_patch16_224").eval()
    x = torch.rand(8, 3, 224, 224)
    with torch.inference_mode():
        inf = 8 / _time(lambda: b16(x), repeats)
    s16 = timm.create_model("vit_small_patch16_224").train()
    opt = torch.optim.AdamW(s16.parameters(), 1e-4)
    xs, ys = torch.rand(16, 3, 224, 224), torch.zeros(16, dtype=torch.long)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(s16(xs), ys).backward()
        opt.step()

    return inf, 16 / _time(step, repeats)


def pipeline_rate():
    import numpy as np
    import tensorflow as tf

    from keras_vit import data

    root = tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    for c in range(2):
        os.makedirs(os.path.join(root, str(c)))
        for i in range(64):
            jpg = tf.io.encode_jpeg(rng.integers(0, 255, (375, 500, 3), dtype=np.uint8))
            tf.io.write_file(os.path.join(root, str(c), f"{i}.jpg"), jpg)
    src = data.load_source(f"folder:{root}", "train")
    ds = data.train_dataset(src, 224, 32)
    it = iter(ds)
    next(it)
    start = time.perf_counter()
    for _ in range(8):
        next(it)
    return 8 * 32 / (time.perf_counter() - start) / os.cpu_count()


def main(_):
    import keras

    import keras_vit

    backend = keras.backend.backend()
    out = {"backend": backend, "cpus": os.cpu_count()}
    peak = matmul_flops(FLAGS.repeats)
    out["matmul_gflops"] = peak / 1e9
    inf_flops = vit_forward_flops()
    train_flops = 3 * vit_forward_flops(dim=384, mlp=1536)
    out["ours_b16_inference_img_s"] = keras_inference(keras_vit.ViT_B16(), 8, FLAGS.repeats)
    out["ours_s16_train_img_s"] = keras_training(keras_vit.ViT_S16(), 16, FLAGS.repeats)
    out["ours_inference_utilization"] = out["ours_b16_inference_img_s"] * inf_flops / peak
    out["ours_train_utilization"] = out["ours_s16_train_img_s"] * train_flops / peak
    try:
        hub_b16, hub_s16 = keras_hub_models()
        out["keras_hub_b16_inference_img_s"] = keras_inference(hub_b16, 8, FLAGS.repeats)
        out["keras_hub_s16_train_img_s"] = keras_training(hub_s16, 16, FLAGS.repeats)
    except ImportError as e:
        out["keras_hub"] = f"not installed ({e})"
    if backend == "torch":
        try:
            out["timm_b16_inference_img_s"], out["timm_s16_train_img_s"] = timm_numbers(FLAGS.repeats)
        except ImportError as e:
            out["timm"] = f"not installed ({e})"
    out["pipeline_img_s_per_core"] = pipeline_rate()
    for k, v in out.items():
        print(f"{k:36s} {v:.3f}" if isinstance(v, float) else f"{k:36s} {v}")
    if FLAGS.json:
        with open(FLAGS.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    app.run(main)
