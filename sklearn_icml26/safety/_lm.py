"""Language-model plumbing of the safety module: tokenizers, MLP neurons, hooks, generation.

Everything here works on any causal LM whose forward takes ``input_ids`` and returns logits
(``out.logits`` or ``out[0]``), with MLP blocks whose down-projection is an ``nn.Linear`` (or a
GPT-2 ``Conv1D``): Hugging Face Llama, Qwen2, Gemma, Mistral, Phi-3, GPT-2 layouts, and the small
toy model used by the common tests.
"""

import contextlib
import copy
import re

import numpy as np

__all__ = ["ByteTokenizer"]

# module-name suffixes of MLP down-projections (the input of which is the neuron activation)
_DOWN_PROJ_SUFFIXES = ("mlp.down_proj", "mlp.c_proj", "mlp.fc2", "mlp.dense_4h_to_h")


class ByteTokenizer:
    """A tokenizer-free byte vocabulary for small random models (tests, demos, ``--quick``).

    Token ``0`` pads, ``1`` begins a sequence, ``2`` ends it; byte ``b`` of a text's UTF-8
    encoding is token ``b + 3`` (vocabulary of 259). Decoding replaces invalid UTF-8 by
    U+FFFD, which :class:`RefusalJudge` counts as broken output.

    Parameters
    ----------
    add_bos : bool, default=True
        Prepend the begin token when ``add_special_tokens=True``.

    Examples
    --------
    >>> from sklearn_icml26.safety import ByteTokenizer
    >>> tok = ByteTokenizer()
    >>> tok.encode("hi")
    [1, 107, 108]
    >>> tok.decode(tok.encode("hi"))
    'hi'
    """

    pad_token_id = 0
    bos_token_id = 1
    eos_token_id = 2
    vocab_size = 259
    chat_template = None

    def __init__(self, add_bos=True):
        self.add_bos = add_bos

    def __repr__(self):
        return f"ByteTokenizer(add_bos={self.add_bos})"

    def encode(self, text, add_special_tokens=True):
        """Token ids of ``text``.

        Parameters
        ----------
        text : str
            The text.
        add_special_tokens : bool, default=True
            Prepend the begin token (when ``add_bos``).

        Returns
        -------
        ids : list of int
            The ids.
        """
        ids = [b + 3 for b in text.encode("utf-8")]
        return ([self.bos_token_id] if add_special_tokens and self.add_bos else []) + ids

    def decode(self, ids, skip_special_tokens=True):
        """Text of token ids (special tokens dropped).

        Parameters
        ----------
        ids : sequence of int
            The ids.
        skip_special_tokens : bool, default=True
            Ignored: special tokens are always dropped.

        Returns
        -------
        text : str
            The decoded text.
        """
        return bytes(int(i) - 3 for i in ids if int(i) >= 3).decode("utf-8", errors="replace")


class _Tokens:
    """The tokenizer calls the estimator makes, over a HF tokenizer or a :class:`ByteTokenizer`."""

    def __init__(self, tokenizer, chat_template):
        if not (hasattr(tokenizer, "encode") and hasattr(tokenizer, "decode")):
            raise TypeError(f"tokenizer must have encode(text, add_special_tokens=...) and "
                            f"decode(ids) methods; got {type(tokenizer).__name__}")
        self.tok = tokenizer
        self.use_template = bool(chat_template) and getattr(tokenizer, "chat_template", None)
        self.eos_id = getattr(tokenizer, "eos_token_id", None)

    def prompt(self, text):
        """Ids of a prompt as the model sees it (chat template with generation prompt)."""
        if self.use_template:
            s = self.tok.apply_chat_template([{"role": "user", "content": text}],
                                             tokenize=False, add_generation_prompt=True)
            return list(self.tok.encode(s, add_special_tokens=False))
        return list(self.tok.encode(text, add_special_tokens=True))

    def plain(self, text):
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids):
        return self.tok.decode(list(ids), skip_special_tokens=True)


# ---------------------------------------------------------------------------------------------
# the neurons of a model
# ---------------------------------------------------------------------------------------------
def _layer_number(name):
    nums = re.findall(r"\.(\d+)\.", f".{name}.")
    return int(nums[-1]) if nums else -1


def find_down_projections(model, neuron_module="auto"):
    """``[(name, module, width)]`` of the MLP down-projections of ``model``, in layer order.

    The width is the number of neurons (the down-projection's input features). Raises a
    ValueError naming ``model`` when none is found.
    """
    import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, a model name/path or a callable "
                        f"returning one; got {type(model).__name__}")
    suffixes = _DOWN_PROJ_SUFFIXES if neuron_module == "auto" else (neuron_module,)
    found = []
    for name, module in model.named_modules():
        if not any(name == s or name.endswith("." + s) for s in suffixes):
            continue
        if isinstance(module, torch.nn.Linear):
            width = module.in_features
        elif type(module).__name__ == "Conv1D" and getattr(module, "weight", None) is not None:
            width = module.weight.shape[0]  # GPT-2's Conv1D stores (in, out)
        else:
            continue
        found.append((name, module, int(width)))
    if not found:
        raise ValueError(
            f"model has no MLP down-projection: no nn.Linear/Conv1D module named "
            f"{' / '.join('*.' + s for s in suffixes)} (neuron_module={neuron_module!r}); "
            f"pass neuron_module='<suffix of the down-projection modules>'")
    found.sort(key=lambda t: _layer_number(t[0]))
    return found


def mlp_input_projections(model, down_name, width):
    """The Linear/Conv1D siblings of a down-projection whose outputs are its neurons
    (gate_proj, up_proj, fc1, c_fc, ...): ``[(name, module, "row" | "col")]``."""
    import torch

    parent_name = down_name.rsplit(".", 1)[0] if "." in down_name else ""
    parent = model.get_submodule(parent_name) if parent_name else model
    out = []
    for name, module in parent.named_children():
        full = f"{parent_name}.{name}" if parent_name else name
        if full == down_name:
            continue
        if isinstance(module, torch.nn.Linear) and module.out_features == width:
            out.append((full, module, "row"))
        elif type(module).__name__ == "Conv1D" and module.weight.shape[1] == width:
            out.append((full, module, "col"))
    return out


def model_device(model):
    import torch

    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def logits_of(model, ids):
    """Logits (1, T, V) of a forward over ``ids`` (1, T)."""
    out = model(input_ids=ids)
    logits = getattr(out, "logits", None)
    if logits is None:
        logits = out[0] if isinstance(out, tuple | list) else out
    return logits


@contextlib.contextmanager
def hooked(modules_and_hooks):
    """Register forward pre-hooks ``[(module, hook)]``; always removed on exit (or on error)."""
    handles = []
    try:
        for module, hook in modules_and_hooks:
            handles.append(module.register_forward_pre_hook(hook))
        yield
    finally:
        for h in handles:
            h.remove()


def _positions_mean(x, start, stop):
    return x[0, start:stop, :].float().mean(dim=0)


def read_activations(model, layers, ids_list, spans):
    """Mean neuron activation of each prompt over its span of positions.

    ``layers``: ``[(name, module, width)]``; ``ids_list``: token-id lists; ``spans``:
    ``[(start, stop)]`` position ranges. Returns a float32 array (n_prompts, n_neurons).
    """
    import torch

    device = model_device(model)
    widths = [w for _, _, w in layers]
    out = np.empty((len(ids_list), int(sum(widths))), dtype=np.float32)
    offsets = np.concatenate([[0], np.cumsum(widths)])
    current = {}

    def make_hook(k):
        def hook(module, args):
            start, stop = current["span"]
            current[k] = _positions_mean(args[0], start, stop).cpu().numpy()
        return hook

    with torch.no_grad(), hooked([(m, make_hook(k)) for k, (_, m, _) in enumerate(layers)]):
        for i, (ids, span) in enumerate(zip(ids_list, spans, strict=True)):
            current.clear()
            current["span"] = span
            logits_of(model, torch.tensor([ids], device=device))
            for k in range(len(layers)):
                out[i, offsets[k]:offsets[k + 1]] = current[k]
    return out


def greedy_generate(model, ids, max_new_tokens, eos_id):
    """Greedy continuation ids of one prompt (no cache: short generations)."""
    import torch

    device = model_device(model)
    seq = list(ids)
    new = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = logits_of(model, torch.tensor([seq], device=device))
            nxt = int(torch.argmax(logits[0, -1]).item())
            if eos_id is not None and nxt == eos_id:
                break
            seq.append(nxt)
            new.append(nxt)
    return new


def next_token_log_probs(model, ids):
    """float64 log-softmax of the next-token logits after ``ids``."""
    import torch

    device = model_device(model)
    with torch.no_grad():
        logits = logits_of(model, torch.tensor([ids], device=device))[0, -1]
    return torch.log_softmax(logits.double(), dim=-1).cpu().numpy()


def response_nll(model, prompt_ids, response_ids):
    """Summed negative log-likelihood of ``response_ids`` after ``prompt_ids`` (a tensor)."""
    import torch

    device = model_device(model)
    seq = torch.tensor([list(prompt_ids) + list(response_ids)], device=device)
    logits = logits_of(model, seq)[0, :-1].float()
    targets = seq[0, 1:]
    lp = torch.log_softmax(logits, dim=-1).gather(1, targets[:, None])[:, 0]
    return -lp[len(prompt_ids) - 1:].sum()


def deepcopy_model(model):
    return copy.deepcopy(model)
