#!/usr/bin/env python3
"""balloon.py GB READY: leaves a GPU with GB (decimal, as a card's datasheet)
free, by holding the rest in one allocation, until it is killed.

llama.cpp has no allocator cap of its own (PyTorch's
set_per_process_memory_fraction, which engines/transformers/cardcap.py uses,
is a PyTorch setting): to emulate a smaller card for llama-server, another
process takes what the card would not have. The balloon's own CUDA context
comes out of the device's memory before its allocation is sized, so what it
leaves is what llama-server sees free, out of which llama-server's own CUDA
context then comes, as on the card.

READY gets one JSON line once the memory is held: the bytes asked, the bytes
left free (cudaMemGetInfo after the allocation: PyTorch rounds a large block to
2 MiB, so within 2 MiB of the ask), the device's total and the balloon's bytes.
"""

import json
import sys
import time

import torch


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: balloon.py GB READY")
    want = int(float(sys.argv[1]) * 1e9)
    torch.zeros(1, device="cuda")  # the context first: it is not the card's
    free, total = torch.cuda.mem_get_info()
    if want >= free:
        sys.exit(f"balloon.py: {want} B asked, only {free} B free")
    held = torch.empty(free - want, dtype=torch.uint8, device="cuda")
    left, _ = torch.cuda.mem_get_info()
    with open(sys.argv[2], "w") as f:
        json.dump({"card_bytes": want, "free_bytes": left, "device_total_bytes": total, "balloon_bytes": held.numel()}, f)
        f.write("\n")
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
