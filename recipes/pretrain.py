"""Supervised pretraining as in the paper (Appendix B): Adam(0.9, 0.999),
decoupled weight decay, linear warmup then linear or cosine decay, global
norm clipping at 1. Defaults: a small ViT on the embedded digits, offline.

    python recipes/pretrain.py --model=ViT_B16 --dataset=imagenet2012 --data_dir=DIR \
        --image_size=224 --batch_size=4096 --steps=300000 --lr=3e-3 --weight_decay=0.3 \
        --warmup_steps=10000 --decay=cosine --strategy=tpu --tpu=NAME --workdir=WORKDIR
"""
from absl import app, flags

import common

common.define("pretrain", "runs/pretrain", image_size=16, lr=1e-3, steps_help="default: 10 epochs")
flags.DEFINE_float("weight_decay", 0.1, "Decoupled weight decay (lr-scaled, as the authors' Adam).")
flags.DEFINE_enum("decay", "linear", ["linear", "cosine"], "Decay after warmup.")

if __name__ == "__main__":
    common.tune_runtime()
    app.run(common.main_for("pretrain", ["weight_decay", "decay"]))
