"""One training run as plain data in, a workdir out: the engine behind
`recipes/pretrain.py` and `recipes/finetune.py`.

The run is preemption-safe: rerunning the same call resumes from the last
completed epoch (BackupAndRestore) with the data stream restarted at that
exact step, so it ends with the metrics of an uninterrupted run.
"""
import json
import os
import time

import keras

from keras_vit import data as vit_data
from keras_vit.models import MODELS, VisionTransformer, decode_variant, get_builder
from keras_vit.models.variants import total_stride
from keras_vit.training.distribution import check_strategy, make_distribution
from keras_vit.training.optimizers import classification_loss, finetune_optimizer, pretrain_optimizer
from keras_vit.training.report import ThroughputMeter, write_curves

DEFAULTS = dict(
    mode="pretrain", model="Mu/4", dataset=vit_data.EMBEDDED, data_dir=None, image_size=16, batch_size=64,
    steps=None, epochs=None, steps_per_epoch=None, lr=None, weight_decay=0.1, warmup_steps=None, decay="linear",
    strategy="none", tpu=None, model_parallel=2, coordinator_address=None, num_processes=None, process_id=None, mixed_precision=False, grad_accum=1, seed=0,
    workdir="runs/pretrain", init=None, dropout=0.0, loss="softmax", label_smoothing=0.0, mixup=0.0,
    randaugment=False, crop_min_area=0.05, ema=None, position_embedding="learned_1d", posemb_placement="stem", pooling=None, representation_size=None, verbose="auto",
    preempt_after_steps=None, remat=False,
)


def model_config(name):
    """Builder kwargs for a builder name ("ViT_B16") or a variant ("B/16")."""
    if name in MODELS:
        builder = get_builder(name)
        variant = getattr(builder, "variant", "")
        return builder, (decode_variant(variant) if "/" in variant else None)
    if "/" in name:
        config = decode_variant(name)
        return (lambda **kw: VisionTransformer(**config, **kw)), config
    get_builder(name)  # raises the unknown-model error with suggestions


def validate(cfg):
    """Checks every flag before anything is built; errors name the flag."""
    try:
        builder, vit_config = model_config(cfg["model"])
    except ValueError as e:
        raise ValueError(f"--model: {e}") from None
    if vit_config is not None:
        stride = total_stride(vit_config)
        if cfg["image_size"] % stride:
            raise ValueError(
                f"--image_size={cfg['image_size']} is not divisible by {stride}, the patch size of "
                f"{cfg['model']}; use {max(cfg['image_size'] // stride, 1) * stride}"
            )
    elif cfg.get("remat"):
        raise ValueError(f"--remat recomputes transformer blocks; {cfg['model']} has none (use a ViT or hybrid)")
    if cfg["batch_size"] < 1:
        raise ValueError(f"--batch_size must be positive, received {cfg['batch_size']}")
    check_strategy(cfg["strategy"])
    if cfg["mode"] == "finetune" and not cfg["init"]:
        raise ValueError("--init is required to fine-tune: a workdir, a .weights.h5/.npz file or a preset")
    if cfg["steps"] is not None and cfg["epochs"] is not None:
        raise ValueError("give --steps or --epochs, not both")
    return builder


def run(**overrides):
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown settings {sorted(unknown)}")
    cfg = dict(DEFAULTS, **overrides)
    builder = validate(cfg)
    finished = os.path.join(cfg["workdir"], "summary.json")
    if os.path.exists(finished):
        # BackupAndRestore drops its backup when a run completes: a rerun of
        # a finished workdir reports it instead of training from scratch.
        print(f"{cfg['workdir']} holds a finished run; delete it (or use another --workdir) to train again")
        with open(finished) as f:
            return json.load(f)
    keras.utils.set_random_seed(cfg["seed"])
    # Set both ways: the policy is global and outlives one run in a process.
    keras.config.set_dtype_policy("mixed_bfloat16" if cfg["mixed_precision"] else "float32")
    train_src = vit_data.load_source(cfg["dataset"], "train", cfg["data_dir"])
    val_src = vit_data.load_source(cfg["dataset"], "validation", cfg["data_dir"])
    dist = make_distribution(cfg["strategy"], cfg["tpu"], cfg["model_parallel"], cfg["coordinator_address"],
                             cfg["num_processes"], cfg["process_id"])
    if cfg["batch_size"] % dist.num_replicas:
        raise ValueError(
            f"--batch_size={cfg['batch_size']} is not divisible by the {dist.num_replicas} replicas of "
            f"--strategy={cfg['strategy']}"
        )
    per_epoch = max(train_src.num_examples // cfg["batch_size"], 1)
    steps = cfg["steps"] or (cfg["epochs"] or 10) * per_epoch
    steps_per_epoch = min(cfg["steps_per_epoch"] or per_epoch, steps)
    epochs = -(-steps // steps_per_epoch)
    steps = epochs * steps_per_epoch
    finetune = cfg["mode"] == "finetune"
    warmup = cfg["warmup_steps"] if cfg["warmup_steps"] is not None else steps // 10
    os.makedirs(cfg["workdir"], exist_ok=True)

    with dist.scope():
        kwargs = dict(input_shape=(cfg["image_size"], cfg["image_size"], 3), classes=train_src.num_classes)
        if vit_config_for(cfg["model"]):
            kwargs.update(dropout_rate=cfg["dropout"], pooling=cfg["pooling"],
                          representation_size=cfg["representation_size"],
                          position_embedding=cfg["position_embedding"], posemb_placement=cfg["posemb_placement"],
                          remat=cfg["remat"])
        if finetune:
            kwargs["weights"] = _init_path(cfg["init"])
        model = builder(**kwargs)
        if finetune:
            optimizer = finetune_optimizer(cfg["lr"] or 0.01, steps, warmup, cfg["ema"], cfg["grad_accum"])
        else:
            optimizer = pretrain_optimizer(model, cfg["lr"] or 1e-3, steps, warmup, cfg["decay"],
                                           cfg["weight_decay"], cfg["grad_accum"])
        model.compile(optimizer, classification_loss(cfg["loss"]), metrics=["accuracy"])

    backup = keras.callbacks.BackupAndRestore(os.path.join(cfg["workdir"], "backup"))
    start_epoch = _restored_epoch(backup)
    if start_epoch:
        print(f"Resuming {cfg['workdir']} at epoch {start_epoch} (step {start_epoch * steps_per_epoch})")
    train_ds = dist.dataset(lambda batch, start_step, num_shards=1, shard_index=0: vit_data.train_dataset(
        train_src, cfg["image_size"], batch, seed=cfg["seed"], start_step=start_step,
        label_smoothing=cfg["label_smoothing"], mixup=cfg["mixup"], randaugment=cfg["randaugment"],
        crop_min_area=cfg["crop_min_area"], num_shards=num_shards, shard_index=shard_index,
    ), cfg["batch_size"], start_epoch * steps_per_epoch)
    val_ds = vit_data.eval_dataset(val_src, cfg["image_size"], cfg["batch_size"])
    meter = ThroughputMeter(cfg["batch_size"])
    callbacks = [
        backup,
        keras.callbacks.ModelCheckpoint(os.path.join(cfg["workdir"], "checkpoint.weights.h5"), save_weights_only=True),
        keras.callbacks.CSVLogger(os.path.join(cfg["workdir"], "log.csv"), append=bool(start_epoch)),
        keras.callbacks.TerminateOnNaN(),
        meter,
        _EpochSeeds(cfg["seed"]),
        keras.callbacks.TensorBoard(os.path.join(cfg["workdir"], "tensorboard")),
    ]
    if cfg["preempt_after_steps"]:
        callbacks.append(_Preempt(cfg["preempt_after_steps"], start_epoch * steps_per_epoch))
    print(f"{cfg['mode']}: {cfg['model']} ({model.count_params():,} parameters) at {cfg['image_size']} px on "
          f"{train_src.name}, {steps} steps of {cfg['batch_size']} images, strategy={dist.name} "
          f"({dist.num_replicas} replica(s))")
    start = time.time()
    history = model.fit(train_ds, validation_data=val_ds, epochs=epochs, steps_per_epoch=steps_per_epoch,
                        callbacks=callbacks, verbose=cfg["verbose"])
    model.save(os.path.join(cfg["workdir"], "model.keras"))
    model.save_weights(os.path.join(cfg["workdir"], "model.weights.h5"))
    write_curves(os.path.join(cfg["workdir"], "log.csv"), os.path.join(cfg["workdir"], "curves.png"),
                 f"{cfg['mode']} {cfg['model']} @ {cfg['image_size']} px")
    final = model.evaluate(val_ds, verbose=0, return_dict=True)
    summary = dict(
        val_accuracy=float(final["accuracy"]), val_loss=float(final["loss"]), steps=steps,
        train_images_per_second=meter.images_per_second(), seconds=round(time.time() - start, 1),
        epochs_run=len(history.history.get("loss", [])), backend=keras.backend.backend(),
        strategy=dist.name, replicas=dist.num_replicas, model=cfg["model"], image_size=cfg["image_size"],
        dataset=train_src.name, mode=cfg["mode"],
    )
    with open(os.path.join(cfg["workdir"], "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))
    return summary


def vit_config_for(name):
    return "/" in name or not name.startswith("BiT_")


def _init_path(init):
    if os.path.isdir(init):
        path = os.path.join(init, "model.weights.h5")
        if not os.path.exists(path):
            raise ValueError(f"--init={init!r} is a folder without model.weights.h5 (not a finished workdir)")
        return path
    return init


def _restored_epoch(backup):
    path = getattr(backup, "_training_metadata_path", None)
    if path and os.path.exists(path):
        with open(path) as f:
            return int(json.load(f).get("epoch", 0))
    return 0


class _EpochSeeds(keras.callbacks.Callback):
    """Dropout's random state is not in the weights BackupAndRestore saves:
    deriving it from (seed, epoch) at each epoch start (per step on torch)
    makes a resumed run draw exactly the masks of an uninterrupted one."""

    def __init__(self, seed):
        super().__init__()
        self.seed = seed

    def on_epoch_begin(self, epoch, logs=None):
        states = [v for v in self.model.variables if v.name == "seed_generator_state"]
        for i, state in enumerate(states):
            state.assign(keras.ops.cast([self.seed * 1_000_003 + i, epoch * 1_000_000], state.dtype))

    def on_train_batch_begin(self, batch, logs=None):
        if keras.backend.backend() == "torch":
            # Unseeded torch dropout draws from torch's global generator,
            # which Keras also uses while building the step function: reseed
            # it per step.
            import torch

            step = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))
            torch.manual_seed(self.seed * 1_000_003 + step)


class _Preempt(keras.callbacks.Callback):
    """Testing aid: exits the process abruptly after N global steps, as a
    preempted machine would (no cleanup, no final save)."""

    def __init__(self, after_steps, start_step):
        super().__init__()
        self.after, self.step = after_steps, start_step

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
        if self.step >= self.after:
            os._exit(75)
