# recipe.sh: the committed model's training recipe, sourced by run-real-h200.sh (RETRAIN=1) and
# engines/llamacpp/device-retrain.sh (its recipe search starts from it). train.py is
# deterministic: on an H200 with the same software these two stages remake the committed weights
# bit for bit (reference-weights.sha256; stage 1: stage1-weights.sha256). Found by the recipe
# search of 2026-12-02 (reference/h200/extract-llama-15m-retrain-2): eight layers at k-quant
# widths, 3,200 steps over 1,400 corpora, the amount weighted from the start.
# shellcheck shell=bash disable=SC2034 # sourced: the scripts that source it read these
# Stage 1, from scratch (a flag given after these overrides it: argparse keeps the last value).
RECIPE_STAGE1=(--shape h512d8 --tokenizer engines/transformers/retrain/tokenizer.json --seeds 1000:2400
  --long-skip-chunks 40 --steps 3200 --lm-weight 0.3 --date-weight 10 --amount-weight 3 --seed 2 --heldout-limit 0)
# Stage 2, from stage 1's weights (--init): 400 new corpora, long documents from the start, the
# amount and the null date weighted more.
RECIPE_STAGE2=(--shape h512d8 --seeds 2400:2800 --steps 1500 --warmup 50 --lr 5e-4 --min-lr 1e-5 --long-skip-chunks 0
  --lm-weight 0.3 --date-weight 10 --date-null-weight 5 --amount-weight 5 --seed 1 --heldout-limit 0)
# The corpora both stages read, and the held-out 999: seeds 999 to RECIPE_LAST_SEED.
RECIPE_LAST_SEED=2799
