"""Optimizers and schedules of the paper, distribution, and the run engine."""
from keras_vit.training.distribution import STRATEGIES, make_distribution, vit_layout_map
from keras_vit.training.ablation import VARIANTS, run_ablation, write_table
from keras_vit.training.experiment import DEFAULTS, run
from keras_vit.training.optimizers import (
    classification_loss,
    finetune_optimizer,
    no_decay_variables,
    pretrain_optimizer,
    sigmoid_cross_entropy,
)
from keras_vit.training.schedules import WarmupDecay
