"""Streaming external memory for LLM agents (Neuromem) and the AOEB LoCoMo retrieval slice.

``SentenceEmbedder`` turns texts into vectors (MiniLM offline, hashing or TF-IDF);
``IncrementalBM25`` is a BM25 index that grows and shrinks one document at a time.
"""

from ._bm25 import BM25_STOPWORDS_EN, IncrementalBM25, bm25_tokenize
from ._embedder import SentenceEmbedder

__all__ = ["BM25_STOPWORDS_EN", "IncrementalBM25", "SentenceEmbedder", "bm25_tokenize"]

from ._streaming import StreamingMemory, keyword_text  # noqa: E402

__all__ += ["StreamingMemory", "keyword_text"]

from ._protocol import interleaved_memory_eval, round_thresholds  # noqa: E402

__all__ += ["interleaved_memory_eval", "round_thresholds"]

from ._aoeb import (  # noqa: E402
    AOEB_LOCOMO_SUBSETS,
    bm25_scorer,
    build_locomo_retrieval_task,
    evaluate_retrieval,
    score_candidates,
)

__all__ += ["AOEB_LOCOMO_SUBSETS", "bm25_scorer", "build_locomo_retrieval_task",
            "evaluate_retrieval", "score_candidates"]

from ._gated_reader import (  # noqa: E402
    GatedMemoryReader,
    make_locomo_episodes,
    make_planted_episodes,
)

__all__ += ["GatedMemoryReader", "make_locomo_episodes", "make_planted_episodes"]
