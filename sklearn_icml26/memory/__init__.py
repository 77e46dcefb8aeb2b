"""Streaming external memory for LLM agents (Neuromem) and the AOEB LoCoMo retrieval slice.

``SentenceEmbedder`` turns texts into vectors (MiniLM offline, hashing or TF-IDF);
``IncrementalBM25`` is a BM25 index that grows and shrinks one document at a time.
"""

from ._bm25 import BM25_STOPWORDS_EN, IncrementalBM25, bm25_tokenize
from ._embedder import SentenceEmbedder

__all__ = ["BM25_STOPWORDS_EN", "IncrementalBM25", "SentenceEmbedder", "bm25_tokenize"]

from ._streaming import StreamingMemory, keyword_text  # noqa: E402

__all__ += ["StreamingMemory", "keyword_text"]
