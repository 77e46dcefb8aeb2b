"""Scoring retrieved evidence for retrieval-augmented reasoning.

:class:`SemanticInfoGainScorer` measures how much a passage moves a generator's belief over the
semantic clusters of its sampled answers (InfoReasoner's semantic information gain);
:class:`InfoGainReranker` ranks candidate passages by it; :func:`semantic_entropy` is the
entropy over clusters of equivalent answers; a :class:`SampleCache` shares sampled answers
between scorers. Answer generators: :class:`TableGenerator` (a stub of fixed samples) and
:class:`SmolLM2Generator` (a small local instruction-tuned model, whose file
:func:`fetch_smollm2` downloads). See :ref:`user_guide_retrieval`.
"""

from ._generators import SmolLM2Generator, TableGenerator, fetch_smollm2
from ._info_gain import SampleCache, SemanticInfoGainScorer
from ._reranker import InfoGainReranker
from ._semantic_entropy import semantic_entropy

__all__ = [
    "InfoGainReranker",
    "SampleCache",
    "SemanticInfoGainScorer",
    "SmolLM2Generator",
    "TableGenerator",
    "fetch_smollm2",
    "semantic_entropy",
]
