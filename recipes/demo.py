"""A short pretrain-then-fine-tune run that works offline on 2 CPU cores.

Data: scikit-learn's handwritten digits (1,797 real 8x8 scans, shipped inside
the package, so nothing is downloaded), upsampled to the pretraining and
fine-tuning resolutions and scaled to [-1, 1] as the ViT checkpoints expect.
Pretrains a small ViT at 16 px, then fine-tunes it at 24 px as the paper does
(position embeddings resized on load, new zero-initialized head, SGD with
momentum and cosine decay), and writes curves and a summary to --workdir.
"""
import json
import os
import time

from absl import app, flags

flags.DEFINE_string("workdir", "runs/demo", "Where weights, curves and summary.json go.")
flags.DEFINE_integer("pretrain_epochs", 30, "Epochs at the pretraining resolution.")
flags.DEFINE_integer("finetune_epochs", 10, "Epochs at the fine-tuning resolution.")
flags.DEFINE_integer("pretrain_size", 16, "Pretraining image size (multiple of the patch).")
flags.DEFINE_integer("finetune_size", 24, "Fine-tuning image size (multiple of the patch).")
flags.DEFINE_integer("seed", 0, "Random seed.")
FLAGS = flags.FLAGS


def digits(size, seed):
    import numpy as np
    from sklearn.datasets import load_digits

    data = load_digits()
    images = data.images.astype("float32") / 16.0 * 2.0 - 1.0
    import keras

    images = keras.ops.convert_to_numpy(
        keras.ops.image.resize(images[..., None], (size, size), interpolation="bilinear")
    )
    images = np.repeat(images, 3, axis=-1)
    order = np.random.default_rng(seed).permutation(len(images))
    split = int(0.8 * len(images))
    train, val = order[:split], order[split:]
    return (images[train], data.target[train]), (images[val], data.target[val])


def main(_):
    import keras
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import keras_vit

    keras.utils.set_random_seed(FLAGS.seed)
    os.makedirs(FLAGS.workdir, exist_ok=True)
    config = dict(patch_size=4, hidden_size=64, mlp_dim=128, num_heads=4, num_layers=4)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    (x, y), (vx, vy) = digits(FLAGS.pretrain_size, FLAGS.seed)
    model = keras_vit.VisionTransformer(**config, input_shape=x.shape[1:], classes=10, dropout_rate=0.1)
    steps = FLAGS.pretrain_epochs * (len(x) // 64)
    schedule = keras.optimizers.schedules.CosineDecay(0.0, steps, warmup_target=1e-3, warmup_steps=steps // 10)
    model.compile(keras.optimizers.AdamW(schedule, weight_decay=0.1, global_clipnorm=1.0), loss, metrics=["accuracy"])
    print(f"Pretraining {model.count_params():,} parameters at {FLAGS.pretrain_size} px on {len(x)} images")
    start = time.time()
    pre = model.fit(x, y, batch_size=64, epochs=FLAGS.pretrain_epochs, validation_data=(vx, vy), verbose=2)
    weights = os.path.join(FLAGS.workdir, "pretrain.weights.h5")
    model.save_weights(weights)

    (x, y), (vx, vy) = digits(FLAGS.finetune_size, FLAGS.seed)
    model = keras_vit.VisionTransformer(**config, input_shape=x.shape[1:], classes=10, weights=weights)
    steps = FLAGS.finetune_epochs * (len(x) // 64)
    schedule = keras.optimizers.schedules.CosineDecay(0.0, steps, warmup_target=0.01, warmup_steps=steps // 10)
    model.compile(keras.optimizers.SGD(schedule, momentum=0.9, global_clipnorm=1.0), loss, metrics=["accuracy"])
    print(f"Fine-tuning at {FLAGS.finetune_size} px (position embeddings resized)")
    fine = model.fit(x, y, batch_size=64, epochs=FLAGS.finetune_epochs, validation_data=(vx, vy), verbose=2)
    model.save(os.path.join(FLAGS.workdir, "model.keras"))
    model.save_weights(os.path.join(FLAGS.workdir, "model.weights.h5"))

    curves = {k: pre.history[k] + fine.history[k] for k in ("accuracy", "val_accuracy")}
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, v in curves.items():
        ax.plot(range(1, len(v) + 1), v, label=k)
    ax.axvline(FLAGS.pretrain_epochs + 0.5, color="gray", ls="--", label="fine-tune starts")
    ax.set_xlabel("epoch")
    ax.set_ylabel("accuracy")
    ax.legend()
    fig.savefig(os.path.join(FLAGS.workdir, "curves.png"), dpi=100)
    summary = {
        "backend": keras.backend.backend(),
        "pretrain_val_accuracy": pre.history["val_accuracy"][-1],
        "val_accuracy": fine.history["val_accuracy"][-1],
        "val_loss": fine.history["val_loss"][-1],
        "seconds": round(time.time() - start, 1),
    }
    with open(os.path.join(FLAGS.workdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    app.run(main)
