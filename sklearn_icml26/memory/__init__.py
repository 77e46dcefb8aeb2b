"""External memory for LLM agents: streaming memory (Neuromem) and a gated reader (GRUMem).

:class:`StreamingMemory` stores a conversation as it streams in and retrieves evidence for a
question; :class:`GatedMemoryReader` learns to read memory chunks with a gated recurrent state;
:class:`IncrementalBM25` is a BM25 index that grows and shrinks one document at a time.
:func:`interleaved_memory_eval` runs the interleaved insert/query protocol on a memory, and
:func:`build_locomo_retrieval_task` with :func:`score_candidates` the AOEB LoCoMo retrieval
slice (score it with :func:`sklearn_icml26.metrics.evaluate_retrieval`). Texts are embedded by
:class:`sklearn_icml26.feature_extraction.SentenceEmbedder`. See :ref:`user_guide_memory` and
:ref:`user_guide_grumem`.
"""

from ._aoeb import build_locomo_retrieval_task, score_candidates
from ._bm25 import IncrementalBM25
from ._gated_reader import GatedMemoryReader
from ._protocol import interleaved_memory_eval
from ._streaming import StreamingMemory

__all__ = [
    "GatedMemoryReader",
    "IncrementalBM25",
    "StreamingMemory",
    "build_locomo_retrieval_task",
    "interleaved_memory_eval",
    "score_candidates",
]
