"""Existing distribution engines behind one flag: tf.distribute on the
TensorFlow backend, keras.distribution on JAX."""
import contextlib
import os

import keras

STRATEGIES = {
    "tensorflow": ("none", "mirrored", "tpu"),
    "jax": ("none", "data_parallel", "model_parallel"),
    "torch": ("none",),
}


class Distribution:
    """`scope()` wraps model building and compiling; `num_replicas` splits
    the global batch."""

    def __init__(self, name, scope=None, num_replicas=1):
        self.name = name
        self._scope = scope
        self.num_replicas = num_replicas

    def scope(self):
        return self._scope.scope() if self._scope is not None else contextlib.nullcontext()

    def dataset(self, make, global_batch, start_step):
        """The training stream, built by `make(batch, start_step, num_shards,
        shard_index)`. Under tf.distribute each input pipeline builds its own
        (letting the strategy rewrite a seeded pipeline would reseed its
        shuffle); the replicas of a host take consecutive per-replica batches,
        so each global step sees the same examples as on one device."""
        if self._scope is None:
            return make(global_batch, start_step)

        def per_pipeline(ctx):
            per_replica = ctx.get_per_replica_batch_size(global_batch)
            local_replicas = self.num_replicas // ctx.num_input_pipelines
            return make(per_replica, start_step * local_replicas, ctx.num_input_pipelines, ctx.input_pipeline_id)

        return self._scope.distribute_datasets_from_function(per_pipeline)


def check_strategy(strategy, backend=None):
    backend = backend or keras.backend.backend()
    allowed = STRATEGIES.get(backend, ("none",))
    if strategy not in allowed:
        raise ValueError(
            f"--strategy={strategy!r} is not available on the {backend} backend; choose one of {allowed} "
            "(mirrored/tpu need KERAS_BACKEND=tensorflow, data_parallel/model_parallel need KERAS_BACKEND=jax)"
        )


def make_distribution(strategy="none", tpu=None, model_parallel=2, coordinator=None, num_processes=None,
                      process_id=None):
    """`coordinator`, `num_processes`, `process_id`: multi-host JAX (else
    the KERAS_DISTRIBUTION_* variables, else one host)."""
    check_strategy(strategy)
    if strategy == "none":
        return Distribution("none")
    if strategy == "mirrored":
        import tensorflow as tf

        s = tf.distribute.MirroredStrategy()
        return Distribution(strategy, s, s.num_replicas_in_sync)
    if strategy == "tpu":
        return _tpu(tpu)
    _jax_multihost(coordinator, num_processes, process_id)
    devices = keras.distribution.list_devices()
    if strategy == "data_parallel":
        keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
        return Distribution(strategy, None, len(devices))
    if len(devices) % model_parallel:
        raise ValueError(f"--model_parallel={model_parallel} does not divide the {len(devices)} devices")
    mesh = keras.distribution.DeviceMesh(
        (len(devices) // model_parallel, model_parallel), ("batch", "model"), devices
    )
    keras.distribution.set_distribution(
        keras.distribution.ModelParallel(layout_map=vit_layout_map(mesh), batch_dim_name="batch")
    )
    return Distribution(strategy, None, len(devices) // model_parallel)


def vit_layout_map(mesh):
    """Shards attention heads and the MLP's hidden units over the 'model'
    axis (Megatron-style); everything else is replicated."""
    layout = keras.distribution.LayoutMap(mesh)
    layout[".*attention/(query|key|value)_kernel"] = (None, "model", None)
    layout[".*attention/(query|key|value)_bias"] = ("model", None)
    layout[".*attention/out_kernel"] = ("model", None, None)
    layout[".*mlp_dense_1/kernel"] = (None, "model")
    layout[".*mlp_dense_1/bias"] = ("model",)
    layout[".*mlp_dense_2/kernel"] = ("model", None)
    return layout


def _jax_multihost(coordinator, num_processes, process_id):
    """Multi-host JAX through keras.distribution.initialize, from flags or
    the standard variables (KERAS_DISTRIBUTION_JOB_ADDRESSES, ..._NUM_PROCESSES,
    ..._PROCESS_ID); a single host needs neither."""
    env = os.environ
    if coordinator or env.get("KERAS_DISTRIBUTION_JOB_ADDRESSES"):
        keras.distribution.initialize(
            job_addresses=coordinator or env.get("KERAS_DISTRIBUTION_JOB_ADDRESSES"),
            num_processes=num_processes or int(env.get("KERAS_DISTRIBUTION_NUM_PROCESSES", "1")),
            process_id=process_id if process_id is not None else int(env.get("KERAS_DISTRIBUTION_PROCESS_ID", "0")),
        )


def _tpu(tpu):
    import tensorflow as tf

    if not tpu:
        raise ValueError("--strategy=tpu needs --tpu=NAME (a Cloud TPU name) or --tpu=local")
    if tpu == "local" and not tf.config.list_physical_devices("TPU"):
        raise RuntimeError("--tpu=local: this machine has no TPU devices; run on a TPU VM or name a Cloud TPU")
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="" if tpu == "local" else tpu)
        if tpu != "local":
            tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except Exception as e:  # resolvers raise URLError, ValueError, OpError, ...
        raise RuntimeError(
            f"--tpu={tpu!r}: cannot reach the TPU ({type(e).__name__}: {e}); check the TPU name and that "
            "this machine is in the TPU's project and zone"
        ) from None
    s = tf.distribute.TPUStrategy(resolver)
    return Distribution("tpu", s, s.num_replicas_in_sync)
