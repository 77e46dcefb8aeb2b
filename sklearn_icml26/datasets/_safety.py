"""Multilingual safety prompts (PolyRefuse, MultiJail), read from a copy in the data home.

The files hold harmful instructions (offensive text). They are never shipped or downloaded by
the package: the loader reads a copy the user placed in ``<data_home>/multilingual_safety/``
and checks each file against its pinned SHA-256.
"""

import hashlib
import json

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, fetch_files, read_registry

__all__ = ["load_multilingual_safety"]

_FOLDER = "multilingual_safety"
_REGISTRY = "multilingual_safety.txt"
POLYREFUSE_LANGUAGES = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "ru", "th",
                        "yo", "zh")
MULTIJAIL_LANGUAGES = ("en", "zh", "it", "vi", "ar", "ko", "th", "bn", "sw", "jv")

_DESCR = """\
Multilingual safety prompts
===========================

PolyRefuse (Wang et al., "Refusal Direction is Universal Across Safety-Aligned Languages",
NeurIPS 2025; Apache-2.0; github.com/mainlp/Multilingual-Refusal at commit 985169d): harmful
instructions (AdvBench, TDC, HarmBench and similar) and harmless ones (Alpaca), translated into
13 languages, with train / val / test splits (no harmless zh test file). English train and val
come from the untranslated splits (the English harmless files are much larger).

MultiJail (Deng et al., "Multilingual Jailbreak Challenges in Large Language Models", ICLR 2024;
MIT; github.com/DAMO-NLP-SG/multilingual-safety-for-LLMs, data/MultiJail.csv at commit 577ac51):
315 harmful prompts in 10 languages (en, zh, it, vi high-resource; ar, ko, th medium; bn, sw,
jv low-resource). Harmful only.

The prompts contain offensive text. The package never ships or downloads them: place the files in
<data_home>/multilingual_safety/{polyrefuse,multijail}/ (see the registry for the names).
"""


def _files(prefix):
    return [p for p in read_registry(_REGISTRY) if p.startswith(prefix)]


def _polyrefuse_path(kind, split, lang):
    if lang == "en" and split in ("train", "val"):
        return f"polyrefuse/{kind}_{split}_en.json"
    return f"polyrefuse/{kind}_{split}_translated_{lang}.json"


def _check_hash(folder, path):
    digest = hashlib.sha256((folder / path).read_bytes()).hexdigest()
    pinned = read_registry(_REGISTRY)[path]
    if digest != pinned:
        raise OSError(f"{folder / path} has SHA-256 {digest}, not the pinned {pinned}; the "
                      "loader reads only the published version of the file")


def load_multilingual_safety(source="polyrefuse", *, split="train", languages=None,
                             data_home=None):
    """Load multilingual harmful / harmless prompts from the user's copy in the data home.

    The files hold harmful instructions: they are never shipped or downloaded by the package.
    Reads ``<data_home>/multilingual_safety/polyrefuse/*.json`` or
    ``<data_home>/multilingual_safety/multijail/MultiJail.csv`` and checks every file read
    against its pinned SHA-256.

    Parameters
    ----------
    source : {"polyrefuse", "multijail"}, default="polyrefuse"
        PolyRefuse (harmful and harmless, with splits) or MultiJail (harmful only).
    split : {"train", "val", "test"}, default="train"
        PolyRefuse split (ignored for MultiJail).
    languages : list of str or None, default=None
        Languages to load; ``None`` loads every language of the source (for PolyRefuse,
        those with files in the split).
    data_home : str or path-like, default=None
        See :func:`~sklearn_icml26.datasets.get_data_home`.

    Returns
    -------
    data : Bunch
        ``data`` (list of str, the prompts), ``target`` (ndarray of int, 1 = harmful,
        0 = harmless), ``language`` (ndarray of str), ``frame`` (DataFrame with columns
        ``prompt``, ``language``, ``harmful``, ``category`` (PolyRefuse) or ``id``,
        ``source``, ``tags`` (MultiJail), ``split``) and ``DESCR``.

    Raises
    ------
    ValueError
        If ``source``, ``split`` or a language is unknown.
    OSError
        If a file is missing from the data home (named with the folder to copy it to) or
        differs from its pinned SHA-256.

    References
    ----------
    .. [1] Wang et al. "Refusal Direction is Universal Across Safety-Aligned Languages",
       NeurIPS 2025.
    .. [2] Deng, Zhang, Pan, Bing. "Multilingual Jailbreak Challenges in Large Language
       Models", ICLR 2024, arXiv:2310.06474.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_multilingual_safety
    >>> data = load_multilingual_safety(languages=["en", "th"])  # doctest: +SKIP
    >>> sorted(set(data.language))  # doctest: +SKIP
    ['en', 'th']
    """
    if source not in ("polyrefuse", "multijail"):
        raise ValueError(f"source must be 'polyrefuse' or 'multijail'; got {source!r}")
    known = POLYREFUSE_LANGUAGES if source == "polyrefuse" else MULTIJAIL_LANGUAGES
    if languages is None:
        languages = list(known)
    elif isinstance(languages, str):
        languages = [languages]
    unknown = sorted(set(languages) - set(known))
    if unknown:
        raise ValueError(f"languages: {unknown} are not in {source} (it has {sorted(known)})")
    if source == "multijail":
        path = "multijail/MultiJail.csv"
        folder = fetch_files(_FOLDER, [RemoteFile(path, None, read_registry(_REGISTRY)[path])],
                             data_home, download_if_missing=False)
        _check_hash(folder, path)
        raw = pd.read_csv(folder / path, encoding="utf-8-sig")
        frames = [pd.DataFrame({"prompt": raw[lang].astype(str), "language": lang,
                                "harmful": 1, "id": raw["id"], "source": raw["source"],
                                "tags": raw["tags"], "split": "test"}) for lang in languages]
    else:
        if split not in ("train", "val", "test"):
            raise ValueError(f"split must be 'train', 'val' or 'test'; got {split!r}")
        pinned = set(_files("polyrefuse/"))
        wanted = [(kind, lang, _polyrefuse_path(kind, split, lang))
                  for lang in languages for kind in ("harmful", "harmless")]
        wanted = [w for w in wanted if w[2] in pinned]  # e.g. no harmless zh test file
        folder = fetch_files(_FOLDER, [RemoteFile(p, None, read_registry(_REGISTRY)[p])
                                       for _, _, p in wanted], data_home,
                             download_if_missing=False)
        frames = []
        for kind, lang, path in wanted:
            _check_hash(folder, path)
            with open(folder / path, encoding="utf-8") as fh:
                items = json.load(fh)
            frames.append(pd.DataFrame({"prompt": [str(it["instruction"]) for it in items],
                                        "language": lang, "harmful": int(kind == "harmful"),
                                        "category": [it.get("category") for it in items],
                                        "split": split}))
    frame = pd.concat(frames, ignore_index=True)
    return Bunch(data=frame["prompt"].tolist(), target=frame["harmful"].to_numpy(np.int64),
                 language=frame["language"].to_numpy(object), frame=frame, DESCR=_DESCR)
