"""The lesson's mini-GPT in plain NumPy: model, tokenizer, sampling, costs.

    from model import MiniGPT
    gpt = MiniGPT.load()
    logits, cache = gpt.llenar(gpt.tokenizer.encode("La Nela"))
    z = gpt.avanzar(token, cache)

What only some pages need is imported when asked for, never here (the browser
loads this package at start): model.quantize (the quantized cache),
model.batch (B conversations at once), model.speculative (draft and check),
model.timing (the clock), model.bench and model.bench_extras (command line),
and the rest of the chapter: model.scheduler (static and continuous batching,
on the mini-GPT and simulated), model.paged (a paged cache with shared
prefixes), model.wquant (quantized weights, measured by agreement).
"""
from . import cost
from .checkpoint import CheckpointError
from .config import Config
from .gpt import KVCache, MiniGPT, is_position_error
from .sampling import candidates, generate, probabilities, sample
from .tokenizer import Tokenizer

__all__ = ["MiniGPT", "Config", "KVCache", "Tokenizer", "CheckpointError", "is_position_error",
           "cost", "sample", "probabilities", "candidates", "generate"]
