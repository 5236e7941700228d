import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_vit")
class WarmupDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup from 0 to `peak` over `warmup_steps`, then `"linear"`
    or `"cosine"` decay to `end` at `total_steps` (the paper's schedules)."""

    def __init__(self, peak, total_steps, warmup_steps=0, decay="cosine", end=0.0):
        if decay not in ("linear", "cosine"):
            raise ValueError(f"decay must be 'linear' or 'cosine', received {decay!r}")
        if total_steps <= warmup_steps:
            raise ValueError(f"total_steps ({total_steps}) must exceed warmup_steps ({warmup_steps})")
        self.peak, self.total_steps, self.warmup_steps = float(peak), int(total_steps), int(warmup_steps)
        self.decay, self.end = decay, float(end)

    def __call__(self, step):
        step = ops.cast(step, "float32")
        warm = self.peak * step / max(self.warmup_steps, 1)
        progress = ops.clip((step - self.warmup_steps) / (self.total_steps - self.warmup_steps), 0.0, 1.0)
        if self.decay == "linear":
            frac = 1.0 - progress
        else:
            frac = 0.5 * (1.0 + ops.cos(math.pi * progress))
        decayed = self.end + (self.peak - self.end) * frac
        return ops.where(step < self.warmup_steps, warm, decayed)

    def get_config(self):
        return dict(peak=self.peak, total_steps=self.total_steps, warmup_steps=self.warmup_steps,
                    decay=self.decay, end=self.end)
