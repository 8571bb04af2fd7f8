"""The lesson's mini-GPT in plain NumPy: model, tokenizer, sampling, costs.

    from model import MiniGPT
    gpt = MiniGPT.load()
    logits, cache = gpt.llenar(gpt.tokenizer.encode("La Nela"))
    z = gpt.avanzar(token, cache)
"""
from . import cost
from .checkpoint import CheckpointError
from .gpt import Config, KVCache, MiniGPT
from .sampling import generate, probabilities, sample
from .tokenizer import Tokenizer

__all__ = ["MiniGPT", "Config", "KVCache", "Tokenizer", "CheckpointError",
           "cost", "sample", "probabilities", "generate"]
