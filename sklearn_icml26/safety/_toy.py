"""A toy causal LM with the Hugging Face MLP layout (common tests, examples: no transformers)."""

import torch
from torch import nn

from ._lm import ByteTokenizer


class _ToyMLP(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class _ToyBlock(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.mix = nn.Linear(hidden, hidden, bias=False)
        self.mlp = _ToyMLP(hidden, inter)

    def forward(self, h):
        steps = torch.arange(1, h.shape[1] + 1, device=h.device, dtype=h.dtype)[None, :, None]
        h = h + self.mix(torch.cumsum(h, dim=1) / steps)  # causal mean over the prefix
        return h + self.mlp(nn.functional.rms_norm(h, (h.shape[-1],)))


class _ToyOutput:
    def __init__(self, logits):
        self.logits = logits


class ToyCausalLM(nn.Module):
    """Embedding, blocks of (causal prefix mean, SiLU-gated MLP), RMS norm, LM head."""

    def __init__(self, vocab_size=259, hidden=16, intermediate=24, n_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.layers = nn.ModuleList(_ToyBlock(hidden, intermediate) for _ in range(n_layers))
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return _ToyOutput(self.lm_head(nn.functional.rms_norm(h, (h.shape[-1],))))


def make_toy_lm(seed=0, hidden=16, intermediate=24, n_layers=2):
    """A seeded random :class:`ToyCausalLM` over :class:`ByteTokenizer` ids."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ToyCausalLM(ByteTokenizer.vocab_size, hidden, intermediate, n_layers)
        for p in model.parameters():
            nn.init.normal_(p, std=0.3)
    return model.eval()


class ToyLMFactory:
    """``make_toy_lm`` as a parameter value with a stable ``repr`` (test ids, clones).

    Parameters
    ----------
    seed : int, default=0
        Passed to :func:`make_toy_lm`.
    """

    def __init__(self, seed=0):
        self.seed = seed

    def __call__(self):
        return make_toy_lm(seed=self.seed)

    def __repr__(self):
        return f"ToyLMFactory(seed={self.seed})"
