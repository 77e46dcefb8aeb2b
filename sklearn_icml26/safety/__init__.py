"""Safety neurons of language models: find, test, intervene on and tune them.

:class:`SafetyNeuronFinder` scores every MLP neuron of a causal LM by its activation contrast
between harmful and harmless prompts per language, selects monolingual safety neurons
(MS-Neurons, top-k or a permutation test with Benjamini-Hochberg FDR) and the neurons shared by
high- and non-high-resource languages (SS-Neurons, with a hypergeometric overlap test);
suppresses or boosts them in context managers; measures refusal (first-token log-odds, or
generations labelled by :class:`RefusalJudge`, which has a "broken output" class); checks
causality against random neuron sets of the same layer profile; and fine-tunes only the chosen
neurons. :func:`overlap_test` and :func:`benjamini_hochberg` are its tests; ``REFUSAL_MARKERS``
is the default table of refusal phrases per language (extend it for other languages);
:class:`ByteTokenizer` serves small random models. See :ref:`safety_neurons`.
"""

from ._judge import REFUSAL_MARKERS, RefusalJudge
from ._lm import ByteTokenizer
from ._neurons import SafetyNeuronFinder
from ._stats import benjamini_hochberg, overlap_test

__all__ = [
    "ByteTokenizer",
    "REFUSAL_MARKERS",
    "RefusalJudge",
    "SafetyNeuronFinder",
    "benjamini_hochberg",
    "overlap_test",
]
