"""Fine-tuning as in the paper: start from pretrained weights (a workdir, a
`.weights.h5`, an official `.npz` or a preset), usually at a higher
resolution (position embeddings resized), with a new zero-initialized head
for the dataset's classes; SGD momentum 0.9, no weight decay, warmup then
cosine decay, clipping at 1, optional Polyak averaging.

    python recipes/finetune.py --init=WORKDIR --image_size=384 --dataset=cifar10 --steps=10000 \
        --lr=0.01 --batch_size=512 --ema=0.9999
"""
from absl import app, flags

import common

common.define("finetune", "runs/finetune", image_size=24, lr=0.01, steps_help="default: 10 epochs")
flags.DEFINE_string("init", None, "Pretrained weights: a workdir, .weights.h5, .npz or preset tag.")
flags.DEFINE_float("ema", None, "Polyak averaging momentum (the paper: 0.9999).")

if __name__ == "__main__":
    common.tune_runtime()
    app.run(common.main_for("finetune", ["init", "ema"]))
