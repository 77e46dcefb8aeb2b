"""Text featurizers shared by the estimators that take texts.

:class:`SentenceEmbedder` turns texts into L2-normalised vectors (MiniLM offline, hashing or
TF-IDF), like a vectorizer of :mod:`sklearn.feature_extraction.text`; the memory, editing and
retrieval estimators use it as their default encoder.
"""

from ._embedder import SentenceEmbedder

__all__ = ["SentenceEmbedder"]
