"""Registry of the command line's demos.

Each method registers its demo here with one line: the demo's name, a one-line description, the
dataset it runs on, and the ``"module:function"`` that runs it (imported only when the demo runs,
so ``python -m sklearn_icml26`` starts fast).

A demo function has the signature ``run_demo(data_home=None, verbose=1, fast=False)`` and returns
a :class:`pandas.DataFrame` with one row per (dataset, method) and the columns of
:data:`DEMO_COLUMNS`: the headline metric of the method beside the same metric of its anchor.

Benchmarks need no registration: ``benchmarks/bench_<name>.py`` is found by its file name.
"""

from dataclasses import dataclass

__all__ = ["DEMOS", "DEMO_COLUMNS", "Demo"]

DEMO_COLUMNS = ["method", "dataset", "metric", "value", "anchor", "anchor_value", "seconds"]


@dataclass(frozen=True)
class Demo:
    """A registered demo.

    Parameters
    ----------
    name : str
        Name on the command line (``python -m sklearn_icml26 demo NAME``).
    description : str
        One line shown by ``demo --list``.
    dataset : str
        Folder of the data home the demo reads.
    target : str
        ``"module:function"`` of the demo function.
    """

    name: str
    description: str
    dataset: str
    target: str


# name -> Demo, in the order `demo` runs them; each method adds its line here
DEMOS = {}
DEMOS["ese"] = Demo("ese", "ESERegressor vs random walk and per-system Ridge, COVID-19 Victoria (319 regions)", "ese_xu2026", "sklearn_icml26.forecasting._demo:run_demo")  # noqa: E501
DEMOS["skewd"] = Demo("skewd", "SkewDCausalDiscoverer cause-effect decisions vs QCCD, Tuebingen pairs (weighted accuracy, AUDRC)", "cause_effect", "sklearn_icml26.causal_discovery._demo:run_demo")  # noqa: E501
DEMOS["longitudinal"] = Demo("longitudinal", "LongitudinalRegressionAdjuster effect per period vs Lin (HC2), BtheB and respiratory trials", "longitudinal_rct", "sklearn_icml26.treatment_effects._demo:run_demo")  # noqa: E501
DEMOS["hdtree"] = Demo("hdtree", "HDTreeLineage lineage tree vs Ward and diffusion pseudotime, Paul15 (700 of its 2,660 cells)", "single_cell", "sklearn_icml26.lineage._demo:run_demo")  # noqa: E501
DEMOS["mpf"] = Demo("mpf", "MPFSurface vs its SDF ablation on an open hemisphere (CD-L1, NC; mesh to PLY)", "mpf", "sklearn_icml26.surface._demo:run_demo")  # noqa: E501
DEMOS["holder"] = Demo("holder", "HolderTransformerRegressor (auto depth) vs MLP and theory-tuned KNN on a 2-D Hölder wavelet function (excess risk)", "none (generated)", "sklearn_icml26.approximation._demo:run_demo")  # noqa: E501
DEMOS["editing"] = Demo("editing", "HubnessBalancedCodebook edit retrieval vs NearestNeighbors, LoCoMo conv-26 (generality@5, locality)", "locomo", "sklearn_icml26.editing._demo:run_demo")  # noqa: E501
DEMOS["memory"] = Demo("memory", "StreamingMemory interleaved insert/query on LoCoMo: flat, BM25 and hybrid vs the recency baseline (final-round evidence Recall@5)", "locomo", "sklearn_icml26.memory._demo:run_demo")  # noqa: E501
DEMOS["grumem"] = Demo("grumem", "GatedMemoryReader learned update/exit gates vs the ungated read-everything loop, LoCoMo sessions (chunks read per question, evidence recall)", "locomo", "sklearn_icml26.memory._demo:run_grumem_demo")  # noqa: E501
DEMOS["violin"] = Demo("violin", "ViolinViTClassifier (VIOLIN curve masks) vs the same ViT without mask and an SVC, 10 % of the 8x8 digits (accuracy)", "none (bundled digits)", "sklearn_icml26.vision._demo:run_demo")  # noqa: E501
DEMOS["adamo"] = Demo("adamo", "OfflineQRegressor without a target network on narrow pointmass data: Adam collapses, AdamO (kappa=1, tau=1) does not (max|Q| / q_bound, greedy return)", "none (generated)", "sklearn_icml26.optim._demo:run_demo")  # noqa: E501
DEMOS["neuromamba"] = Demo("neuromamba", "NeuroMambaImputer vs KNN and interpolation on 24 h reference-analyser outages of UCI Air Quality (MAE in sd units)", "uci_air_quality", "sklearn_icml26.imputation._demo:run_demo")  # noqa: E501
DEMOS["pinnfluence"] = Demo("pinnfluence", "PINNInfluence diagnostics of a good vs a deliberately failed heat-equation PINN (relative L2, residual map, PDE loss fraction, directionality)", "none (generated)", "sklearn_icml26.pinn._demo:run_demo")  # noqa: E501
