"""LoCoMo: very long-term conversations with question-answer pairs (Maharana et al., ACL 2024)."""

import json
import re
from datetime import datetime

import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, fetch_files

__all__ = ["LOCOMO_CATEGORY_NAMES", "load_locomo"]

LOCOMO_CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                         5: "adversarial"}

_LOCOMO_FILE = RemoteFile(
    "locomo10.json",
    "https://raw.githubusercontent.com/snap-research/LoCoMo/"
    "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/locomo10.json",
    "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
)

_DESCR = """\
LoCoMo (long-term conversational memory)
========================================

10 very long two-person conversations (272 sessions, 5,882 turns, some sharing an image
described by a caption) with 1,986 questions in five categories: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial (false premise; the answer is not in the
conversation). Each question lists its evidence turns (dialogue ids such as ``D1:3``).

Source: github.com/snap-research/LoCoMo, data/locomo10.json at commit 3eb6f2c.
Licence: Creative Commons Attribution-NonCommercial 4.0 (CC BY-NC 4.0). The file is downloaded
to the data home on first use and is never shipped with this package.

Citation: Maharana, Lee, Tulyakov, Bansal, Barbieri, Fang. "Evaluating Very Long-Term
Conversational Memory of LLM Agents." ACL 2024, arXiv:2402.17753.
"""

_EVIDENCE_ID = re.compile(r"^D(\d+):(\d+)$")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def _session_numbers(conv):
    nums = []
    for key in conv:
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(conv[key], list) and conv[key]:
            nums.append(int(m.group(1)))
    return sorted(nums)


def _clean_evidence(raw, known):
    """Dialogue ids of an evidence list, cleaned, and the number of tokens dropped."""
    clean, dropped = [], 0
    for item in raw:
        for token in re.split(r"[;,\s]+", str(item)):
            if not token:
                continue
            token = token.replace("D:", "D")
            m = _EVIDENCE_ID.match(token)
            if m is None:
                dropped += 1
                continue
            did = f"D{int(m.group(1))}:{int(m.group(2))}"
            if did not in known:
                dropped += 1
                continue
            if did not in clean:
                clean.append(did)
    return clean, dropped


def _parse_date(s):
    try:
        return datetime.strptime(s.strip(), _DATE_FORMAT)
    except (ValueError, AttributeError):
        return pd.NaT


def load_locomo(data_home=None, *, download_if_missing=True):
    """Load LoCoMo, ten very long conversations with evidence-annotated questions.

    Read from ``<data_home>/locomo/locomo10.json``; when missing, the file is downloaded from
    its original public address (the authors' GitHub repository, pinned commit and SHA-256).
    The data are CC BY-NC 4.0 and never shipped with the package.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    download_if_missing : bool, default=True
        If False, raise instead of downloading.

    Returns
    -------
    data : Bunch
        ``turns`` (DataFrame, 5,882 rows, chronological: conversation, conversation_index,
        session, session_date (the file's string), session_datetime, turn_index (per
        conversation), dia_id, speaker, text, blip_caption, img_url, query, ``formatted`` =
        ``"{speaker}: {text}"`` plus ``" [shares {blip_caption}]"`` when a caption exists);
        ``qa`` (DataFrame, 1,986 rows: conversation, qa_index, question, answer (str; category
        5 uses the adversarial answer), category, category_name, evidence_raw, evidence (clean
        dialogue ids), evidence_turns (turn_index values), visible_after (largest evidence
        turn index, -1 without evidence)); ``sessions`` (DataFrame: conversation, session,
        session_date, session_datetime, n_turns, speaker_a, speaker_b); ``category_names``;
        ``raw`` (the parsed JSON); ``n_dropped_evidence`` (evidence tokens that name no turn of
        their conversation); ``DESCR``.

    Raises
    ------
    OSError
        If the file is missing and cannot be downloaded; the message names the file, the data
        home and the download address.

    References
    ----------
    .. [1] Maharana, Lee, Tulyakov, Bansal, Barbieri, Fang. "Evaluating Very Long-Term
       Conversational Memory of LLM Agents." ACL 2024, arXiv:2402.17753.

    Examples
    --------
    >>> from sklearn_icml26.datasets import load_locomo
    >>> data = load_locomo()  # doctest: +SKIP
    >>> len(data.turns), len(data.qa)  # doctest: +SKIP
    (5882, 1986)
    """
    folder = fetch_files("locomo", [_LOCOMO_FILE], data_home, download_if_missing)
    with open(folder / _LOCOMO_FILE.path, encoding="utf-8") as fh:
        raw = json.load(fh)
    turns, qas, sessions = [], [], []
    n_dropped = 0
    for c, sample in enumerate(raw):
        conv = sample["conversation"]
        cid = sample["sample_id"]
        turn_of = {}
        t = 0
        for s in _session_numbers(conv):
            date = conv.get(f"session_{s}_date_time", "")
            dt = _parse_date(date)
            sessions.append({"conversation": cid, "session": s, "session_date": date,
                             "session_datetime": dt, "n_turns": len(conv[f"session_{s}"]),
                             "speaker_a": conv.get("speaker_a"),
                             "speaker_b": conv.get("speaker_b")})
            for turn in conv[f"session_{s}"]:
                caption = turn.get("blip_caption")
                text = turn.get("text", "")
                formatted = f"{turn['speaker']}: {text}"
                if caption:
                    formatted += f" [shares {caption}]"
                img = turn.get("img_url")
                if isinstance(img, list):
                    img = img[0] if img else None
                turn_of[turn["dia_id"]] = t
                turns.append({"conversation": cid, "conversation_index": c, "session": s,
                              "session_date": date, "session_datetime": dt, "turn_index": t,
                              "dia_id": turn["dia_id"], "speaker": turn["speaker"],
                              "text": text, "blip_caption": caption, "img_url": img,
                              "query": turn.get("query"), "formatted": formatted})
                t += 1
        for j, qa in enumerate(sample["qa"]):
            cat = int(qa["category"])
            answer = qa.get("adversarial_answer") if cat == 5 else qa.get("answer")
            if answer is None:
                answer = qa.get("answer", qa.get("adversarial_answer", ""))
            evidence, dropped = _clean_evidence(qa.get("evidence", []), turn_of)
            n_dropped += dropped
            ev_turns = [turn_of[d] for d in evidence]
            qas.append({"conversation": cid, "conversation_index": c, "qa_index": j,
                        "question": qa["question"], "answer": str(answer), "category": cat,
                        "category_name": LOCOMO_CATEGORY_NAMES[cat],
                        "evidence_raw": list(qa.get("evidence", [])), "evidence": evidence,
                        "evidence_turns": ev_turns,
                        "visible_after": max(ev_turns) if ev_turns else -1})
    return Bunch(turns=pd.DataFrame(turns), qa=pd.DataFrame(qas),
                 sessions=pd.DataFrame(sessions), category_names=dict(LOCOMO_CATEGORY_NAMES),
                 raw=raw, n_dropped_evidence=n_dropped, DESCR=_DESCR)
