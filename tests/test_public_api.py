"""The public API is chosen: each module's ``__all__`` is frozen here, name by name.

Adding, moving or removing a public name is a deliberate edit of ``PUBLIC_API`` below (and of
the user guide). What is public: estimators, Displays, dataset loaders and generators (in
``datasets``), metrics (in ``metrics``) and the few tools a user calls. Each name has one home:
no object is exported by two modules, and the top level holds only the field modules,
``__version__`` and ``show_versions`` (as in scikit-learn).
"""

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import sklearn_icml26
from sklearn_icml26.utils import all_estimators

PACKAGE = Path(sklearn_icml26.__file__).parent

PUBLIC_API = {
    "approximation": [
        "BlockBounds",
        "HolderTransformerRegressor",
        "holder_depth_slopes",
        "holder_risk_rates",
        "holder_transformer_block_bounds",
    ],
    "base": [
        "DivergenceGuard",
        "EpochLogger",
        "FitContext",
        "TorchEstimatorMixin",
        "make_optimizer",
        "seeded_torch",
    ],
    "causal_discovery": [
        "CauseEffectDisplay",
        "DecisionRateDisplay",
        "SkewDCausalDiscoverer",
        "SkewNormalLSNMRegressor",
        "score_pairs",
    ],
    "datasets": [
        "clear_data_home",
        "get_data_home",
        "load_air_quality",
        "load_basic_motions",
        "load_btheb",
        "load_cause_effect_baseline_scores",
        "load_cause_effect_pairs",
        "load_ese_covid_victoria",
        "load_ese_exchange_rates",
        "load_ese_synthetic",
        "load_krumsiek11",
        "load_locomo",
        "load_mpf_shape",
        "load_multilingual_safety",
        "load_paul15",
        "load_respiratory",
        "load_seasonal_panel",
        "make_bar_images",
        "make_branching_trajectory",
        "make_digits_on_canvas",
        "make_edit_stream",
        "make_hierarchical_blobs",
        "make_holder_regression",
        "make_interacting_systems",
        "make_layered_sheets",
        "make_local_pattern_images",
        "make_locomo_episodes",
        "make_longitudinal_rct",
        "make_lsnm_pairs",
        "make_memory_stream",
        "make_offline_rl_dataset",
        "make_pde_collocation",
        "make_planted_episodes",
        "make_sensor_outages",
        "make_skewed_lsnm_dag",
        "make_skewed_lsnm_pair",
        "make_thin_shell",
    ],
    "editing": ["HubnessBalancedCodebook"],
    "feature_extraction": ["SentenceEmbedder"],
    "forecasting": [
        "ESERegressor",
        "EquilibriumSharesDisplay",
        "ForecastDisplay",
        "PerSystemRegressor",
        "last_window",
        "sliding_window",
    ],
    "imputation": ["NeuroMambaImputer"],
    "lineage": [
        "HDTreeLineage",
        "LineageTreeDisplay",
        "PseudotimeDisplay",
        "annotate_anndata",
        "make_count_pipeline",
    ],
    "memory": [
        "GatedMemoryReader",
        "IncrementalBM25",
        "StreamingMemory",
        "build_locomo_retrieval_task",
        "interleaved_memory_eval",
        "score_candidates",
    ],
    "metrics": [
        "audrc",
        "average_precision_at_k",
        "chamfer_distance",
        "cluster_accuracy",
        "decision_rate_curve",
        "dendrogram_from_children",
        "dendrogram_purity",
        "evaluate_offline_rl_policy",
        "evaluate_retrieval",
        "f_score",
        "hubness_measures",
        "k_occurrence",
        "layer_separation",
        "leaf_purity",
        "locomo_f1",
        "ndcg_at_k",
        "neg_relative_rmse_scorer",
        "normal_consistency",
        "oracle_span_f1",
        "precision_at_k",
        "pseudotime_correlation",
        "random_walk_forecast",
        "rank_documents",
        "recall_at_k",
        "reciprocal_rank_at_k",
        "relative_rmse",
        "sample_mesh",
        "sample_polylines",
        "token_f1",
        "weighted_accuracy",
    ],
    "optim": ["AdamO", "OfflineQRegressor", "td_spectral_radius"],
    "pinn": [
        "Condition",
        "PDEProblem",
        "PINNInfluence",
        "PINNRegressor",
        "drift_diffusion_1d",
        "heat_1d",
    ],
    "retrieval": [
        "InfoGainReranker",
        "SampleCache",
        "SemanticInfoGainScorer",
        "SmolLM2Generator",
        "TableGenerator",
        "fetch_smollm2",
        "semantic_entropy",
    ],
    "safety": [
        "ByteTokenizer",
        "REFUSAL_MARKERS",
        "RefusalJudge",
        "SafetyNeuronFinder",
        "benjamini_hochberg",
        "overlap_test",
    ],
    "sandbox": [
        "Change",
        "EnvironmentCache",
        "SandboxError",
        "SandboxLimits",
        "SandboxResult",
        "SandboxUnavailableError",
        "TaskSandbox",
        "check_sandbox_support",
        "cleanup_stale",
        "run_in_sandbox",
        "sandbox_available",
    ],
    "surface": ["MPFSurface", "SurfaceDisplay", "read_point_cloud", "write_mesh"],
    "treatment_effects": [
        "LinearGaussianTransition",
        "LongitudinalEffectDisplay",
        "LongitudinalRegressionAdjuster",
        "panel_to_arrays",
    ],
    "utils": ["all_estimators"],
    "vision": [
        "ViolinAttention",
        "ViolinViTClassifier",
        "curve_positions",
        "space_filling_curve_order",
        "violin_mask",
    ],
}

TOP_LEVEL = sorted([*PUBLIC_API, "__version__", "show_versions"])

# public names that start like a generator or loader but are not data: they stay in their field
NOT_DATA = {
    "base.make_optimizer": "builds a torch optimizer for estimator authors",
    "lineage.make_count_pipeline": "builds a preprocessing Pipeline",
    "retrieval.fetch_smollm2": "downloads the model file of SmolLM2Generator",
}
# public names that are not classes or functions (documented in their module's docstring)
DATA_NAMES = {"safety.REFUSAL_MARKERS"}


def _public(sub):
    return importlib.import_module(f"sklearn_icml26.{sub}")


def test_top_level_holds_field_modules_version_and_show_versions():
    assert sorted(sklearn_icml26.__all__) == TOP_LEVEL
    assert sorted(sklearn_icml26._SUBMODULES) == sorted(PUBLIC_API)
    assert sorted(dir(sklearn_icml26)) == TOP_LEVEL
    assert sklearn_icml26.show_versions.__doc__
    with pytest.raises(AttributeError):
        sklearn_icml26.ESERegressor  # noqa: B018 (estimators live in their field module)


def test_every_field_module_is_frozen():
    on_disk = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert on_disk == sorted(set(PUBLIC_API) - {"base"}), (
        "a new field module: add it to _SUBMODULES and PUBLIC_API")


@pytest.mark.parametrize("sub", sorted(PUBLIC_API))
def test_all_is_frozen_sorted_and_documented(sub):
    module = _public(sub)
    names = list(module.__all__)
    assert names == PUBLIC_API[sub], f"sklearn_icml26.{sub}.__all__ changed"
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    doc = module.__doc__ or ""
    assert len(doc.strip().splitlines()) > 1, f"sklearn_icml26.{sub} has a placeholder docstring"
    for name in names:
        assert not name.startswith("_")
        obj = getattr(module, name)
        if f"{sub}.{name}" in DATA_NAMES:
            assert name in doc, f"{sub}.{name} is data: describe it in the module docstring"
            continue
        assert inspect.isclass(obj) or inspect.isfunction(obj), f"{sub}.{name}"
        assert obj.__module__.startswith("sklearn_icml26."), f"{sub}.{name}"
        assert inspect.getdoc(obj) and obj.__doc__ is not None, f"{sub}.{name} has no docstring"


def test_no_name_is_public_twice():
    homes = {}
    for sub, names in PUBLIC_API.items():
        module = _public(sub)
        for name in names:
            obj = getattr(module, name)
            key = id(obj) if inspect.isclass(obj) or inspect.isfunction(obj) else (sub, name)
            homes.setdefault(key, []).append(f"{sub}.{name}")
    twice = [paths for paths in homes.values() if len(paths) > 1]
    assert not twice, twice
    flat = [name for names in PUBLIC_API.values() for name in names]
    assert len(flat) == len(set(flat)), "one name exported by two modules"


def test_loaders_and_generators_live_in_datasets():
    stray = [f"{sub}.{name}" for sub, names in PUBLIC_API.items() if sub != "datasets"
             for name in names if name.startswith(("load_", "make_", "fetch_"))]
    assert sorted(stray) == sorted(NOT_DATA)
    assert all(n.startswith(("load_", "make_", "get_", "clear_")) for n in PUBLIC_API["datasets"])


def test_every_estimator_and_display_is_public_once():
    public = {name: sub for sub, names in PUBLIC_API.items() for name in names}
    for name, cls in all_estimators():
        assert name in public, f"estimator {name} is not in any __all__"
        assert getattr(_public(public[name]), name) is cls
    for sub in PUBLIC_API:
        module_dir = PACKAGE / sub
        for path in module_dir.glob("_*.py") if module_dir.is_dir() else []:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name.endswith("Display"):
                    assert public.get(node.name) == sub, f"{sub}.{node.name} is not public"


@pytest.mark.parametrize("sub", sorted(set(PUBLIC_API) - {"base"}))
def test_one_init_style(sub):
    """Docstring, then ``from ._x import ...`` lines, then one sorted ``__all__`` list."""
    source = (PACKAGE / sub / "__init__.py").read_text(encoding="utf-8")
    body = ast.parse(source).body
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    rest = body[1:]
    imports = [n for n in rest if isinstance(n, ast.ImportFrom)]
    assigns = [n for n in rest if isinstance(n, ast.Assign)]
    others = [n for n in rest if not isinstance(n, ast.ImportFrom | ast.Assign)]
    assert rest[: len(imports)] == imports, "imports come first"
    assert all(n.level >= 1 for n in imports), "relative imports only"
    assert len(assigns) == 1 and assigns[0].targets[0].id == "__all__"
    assert isinstance(assigns[0].value, ast.List), "__all__ is one literal list"
    listed = [e.value for e in assigns[0].value.elts]
    imported = [a.name for n in imports for a in n.names if not a.name.startswith("_")]
    assert sorted(listed) == sorted(imported), "import exactly what __all__ lists"
    # the one exception: the sandbox registers its joblib backend lazily (no import side effect)
    assert all(isinstance(n, ast.Expr) for n in others) and (not others or sub == "sandbox")


def test_api_reference_lists_exactly_the_public_names(tmp_path):
    """doc/conf.py's page writer, run on its own: every public name once, nothing else."""
    conf = Path(__file__).resolve().parents[1] / "doc" / "conf.py"
    tree = ast.parse(conf.read_text(encoding="utf-8"))
    func = next(n for n in tree.body
                if isinstance(n, ast.FunctionDef) and n.name == "_write_api_page")
    namespace = {"HERE": tmp_path, "sklearn_icml26": sklearn_icml26}
    exec(compile(ast.Module([func], type_ignores=[]), str(conf), "exec"), namespace)
    namespace["_write_api_page"]()
    listed = [line.strip() for line in (tmp_path / "api.rst").read_text().splitlines()
              if line.startswith("   sklearn_icml26.")]
    expected = ["sklearn_icml26.show_versions"] + [
        f"sklearn_icml26.{sub}.{name}" for sub in sorted(PUBLIC_API) for name in PUBLIC_API[sub]]
    assert listed == expected
