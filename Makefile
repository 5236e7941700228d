# Two commands on a fresh machine (both create and use .venv):
#   make demo   install, then a short offline pretrain-then-fine-tune run
#   make test   install, then the whole test suite on every Keras backend
VENV := .venv
comma := ,
space := $(subst ,, )
PY := $(VENV)/bin/python
BACKENDS ?= tensorflow jax torch
export TF_CPP_MIN_LOG_LEVEL ?= 3

.PHONY: install demo test bench

$(VENV)/.installed: setup.cfg pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[jax,torch,test]"
	touch $@

install: $(VENV)/.installed

# Pretrain a small ViT at 16 px on the embedded digits, then fine-tune it
# at 24 px (position embeddings resized, new head), as the paper does.
demo: install
	KERAS_BACKEND=$${KERAS_BACKEND:-jax} $(PY) recipes/pretrain.py --workdir=runs/pretrain \
	  --image_size=16 --epochs=100 --crop_min_area=0.3 --verbose=2
	KERAS_BACKEND=$${KERAS_BACKEND:-jax} $(PY) recipes/finetune.py --workdir=runs/finetune \
	  --init=runs/pretrain --image_size=24 --epochs=20 --lr=0.03 --crop_min_area=0.3 --verbose=2

# Each backend in its own process (KERAS_BACKEND is read at import); the
# full-size builders (parameter counts only) run once, on the first backend.
test: install
	@set -e; first=1; for b in $(BACKENDS); do \
	  echo "=== KERAS_BACKEND=$$b"; \
	  if [ $$first = 1 ]; then marks=""; else marks="not large"; fi; \
	  KERAS_BACKEND=$$b $(PY) -m pytest -q -n 2 -p no:cacheprovider -m "$$marks"; \
	  first=0; \
	done

# Throughput on every backend, ours against timm and keras-hub in the same
# run, in a venv of its own (see the [bench] extra); results under bench/.
BENCH_VENV := .venv-bench
$(BENCH_VENV)/.installed: setup.cfg pyproject.toml
	test -x $(BENCH_VENV)/bin/python || python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install -q -e ".[jax,bench]"
	touch $@

bench: $(BENCH_VENV)/.installed
	$(BENCH_VENV)/bin/python benchmarks/throughput.py --backends=$(subst $(space),$(comma),$(BACKENDS)) --out=bench
