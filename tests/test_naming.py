"""One name for one thing: the naming table of CONTRIBUTING.md, enforced on every estimator.

Every estimator of ``all_estimators()`` (and the three torch test estimators that serve as
templates) is checked for

* parameter spellings the table replaces (``learning_rate`` is ``lr``, ``n_epochs`` is
  ``max_epochs``, ``num_*`` is ``n_*``, ...);
* fitted attribute spellings the table replaces, after a smoke fit of each test instance
  (training traces are ``*_curve_``, the fit duration is ``fit_time_``, input and target
  moments are ``mean_``/``scale_``/``y_mean_``/``y_scale_``);
* fitted state: every attribute ``fit`` sets is a constructor parameter or ends with ``_``;
* the shared torch parameters, documented once in
  ``sklearn_icml26.utils._docstrings._torch_docstrings``: a torch estimator's numpydoc entry
  opens with the shared text (estimator-specific sentences may follow it);
* one verbose style: progress reaches a log (not a terminal) as plain lines, without carriage
  returns or escape codes, and only ``EpochLogger`` / ``progress_bar`` write progress.

A departure from the table is listed in ``KNOWN_EXCEPTIONS`` with its reason; an exception
that no longer applies fails too, so that the list shrinks as the code is fixed.
"""

import ast
import functools
import inspect
import re
import warnings
from pathlib import Path

import pytest
from numpydoc.docscrape import NumpyDocString

import sklearn_icml26
from sklearn_icml26.utils import all_estimators
from sklearn_icml26.utils._docstrings import _torch_docstrings
from sklearn_icml26.utils._estimator_checks import get_smoke_data, get_test_instances
from sklearn_icml26.utils._testing import TorchAutoencoder, TorchMLPClassifier, TorchMLPRegressor

CLASSES = [cls for _, cls in all_estimators()] + [TorchMLPRegressor, TorchMLPClassifier,
                                                   TorchAutoencoder]
IDS = [cls.__name__ for cls in CLASSES]

# -- the table ----------------------------------------------------------------------------------
# parameter spellings the table replaces -> the table's name
FORBIDDEN_PARAMETERS = {
    "learning_rate": "lr", "learning_rate_init": "lr", "lr_init": "lr", "step_size": "lr",
    "n_steps": "max_epochs (epochs) or max_iter (solver steps)",
    "max_steps": "max_epochs (epochs) or max_iter (solver steps)",
    "n_iter": "max_iter", "n_iters": "max_iter", "iterations": "max_iter",
    "n_iter_adam": "max_epochs", "n_iter_lbfgs": "max_iter",
    "n_epochs": "max_epochs", "epochs": "max_epochs", "max_epoch": "max_epochs",
    "normalise": "standardize", "standardise": "standardize", "scale_inputs": "standardize",
    "normalize_inputs": "standardize", "standardize_inputs": "standardize",
    "zscore": "standardize", "z_score": "standardize",
    "batchsize": "batch_size", "minibatch_size": "batch_size", "batch": "batch_size",
    "optimiser": "optimizer", "optim": "optimizer",
    "optimizer_kwargs": "optimizer_params", "optimizer_args": "optimizer_params",
    "optim_params": "optimizer_params", "optimizer_options": "optimizer_params",
    "wd": "weight_decay", "l2_penalty": "weight_decay",
    "patience": "n_iter_no_change", "val_fraction": "validation_fraction",
    "valid_fraction": "validation_fraction", "validation_split": "validation_fraction",
    "seed": "random_state", "rng": "random_state",
    "use_gpu": "device", "cuda": "device", "gpu": "device",
    "n_workers": "n_jobs", "workers": "n_jobs",
    "verbosity": "verbose", "progress": "verbose", "show_progress": "verbose",
    "hidden_sizes": "hidden_layer_sizes", "hidden_dims": "hidden_layer_sizes",
    "hidden_layers": "hidden_layer_sizes", "layer_sizes": "hidden_layer_sizes",
    "hidden_width": "hidden_size", "hidden_units": "hidden_size", "hidden_dim": "hidden_size",
    "head_width": "head_size", "embed_dim": "d_model", "embedding_dim": "d_model",
}
# parameters of a torch training estimator only (elsewhere the word means something else:
# SentenceEmbedder's ``dtype`` is the dtype of its output array)
FORBIDDEN_TORCH_PARAMETERS = {"dtype": "precision", "torch_dtype": "precision"}

# fitted attribute spellings the table replaces -> the table's name
FORBIDDEN_ATTRIBUTES = {
    "history_": "loss_curve_", "loss_history_": "loss_curve_",
    "td_loss_history_": "loss_curve_", "losses_": "loss_curve_", "train_loss_": "loss_curve_",
    "train_losses_": "loss_curve_", "training_loss_": "loss_curve_",
    "val_loss_curve_": "validation_loss_curve_", "valid_loss_curve_": "validation_loss_curve_",
    "val_losses_": "validation_loss_curve_", "validation_losses_": "validation_loss_curve_",
    "best_val_loss_": "best_loss_", "best_validation_loss_": "best_loss_",
    "n_epochs_": "n_iter_", "epochs_": "n_iter_", "n_steps_": "n_iter_",
    "fit_seconds_": "fit_time_",
    "std_": "scale_", "mu_": "mean_", "location_": "mean_ (inputs) or y_mean_ (target)",
    "loc_": "mean_ (inputs) or y_mean_ (target)", "var_": "scale_",
}
# a trace over epochs or steps is a curve
_TRACE = re.compile(r"(history|losses|trace)_$")
# a duration of the fit is fit_time_
_DURATION = re.compile(r"(^|_)(seconds|duration|elapsed|time)_$")
# input / target moments under another name than mean_, scale_, y_mean_, y_scale_
_MOMENT_ALIAS = re.compile(
    r"^(x|X|input|inputs|feature|features|target|targets|y|Y|label|labels)_"
    r"(mean|means|mu|loc|location|center|centre|offset|scale|scales|std|stds|sd|sigma|var)_$")
_MOMENT_WORD = re.compile(r"_(mean|means|scale|scales|std|stds)_$")
TABLE_MOMENTS = {"mean_", "scale_", "y_mean_", "y_scale_"}
# other ``*_mean_`` / ``*_scale_`` attributes: not the moments of the inputs or the target,
# each with what it is
OTHER_MOMENTS = {
    ("HDTreeLineage", "embedding_mean_"): "moments of the learned embedding (stage 1)",
    ("HDTreeLineage", "embedding_scale_"): "moments of the learned embedding (stage 1)",
    ("HDTreeLineage", "pseudotime_scale_"): "the divisor mapping pseudotimes to [0, 1]",
    ("MPFSurface", "box_scale_"): "the bounding box's geometric normalisation factor",
    ("LongitudinalRegressionAdjuster", "gformula_means_"): "estimated regime means",
    ("SkewNormalLSNMRegressor", "coef_scale_"): "coefficients of the noise-scale function",
    ("SkewNormalLSNMRegressor", "splines_scale_"): "spline basis of the noise-scale function",
    ("ViolinViTClassifier", "attention_scales_"): "learned per-head attention scales",
    ("SafetyNeuronFinder", "harmful_mean_"): "mean activations on the harmful prompts",
    ("SafetyNeuronFinder", "harmless_mean_"): "mean activations on the harmless prompts",
}

# the parameters every torch estimator documents with the shared text (the early-stopping
# ones where the estimator has ``early_stopping``)
SHARED_PARAMETERS = ["max_epochs", "batch_size", "lr", "optimizer", "optimizer_params",
                     "weight_decay", "precision", "device", "random_state", "verbose"]
EARLY_STOPPING_PARAMETERS = ["early_stopping", "validation_fraction", "n_iter_no_change", "tol"]

# -- departures from the table, each with its reason --------------------------------------------
KNOWN_EXCEPTIONS = {
    ("GatedMemoryReader", "doc", "batch_size"): (
        "episodes drawn without replacement for each policy-gradient step; no full-batch -1"),
    ("GatedMemoryReader", "module", "module_"): (
        "the policy runs in numpy at inference: the trained weights are kept as params_ "
        "(arrays), not as a torch module"),
}


def _known(cls, kind, name):
    return (cls.__name__, kind, name) in KNOWN_EXCEPTIONS


def _parameters(cls):
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def _is_torch_trainer(cls):
    """A torch estimator that trains with an optimizer (it has ``lr``)."""
    return "lr" in _parameters(cls)


@functools.cache
def _fitted(cls):
    """Each test instance of ``cls`` fitted on its smoke data (cached across the tests)."""
    out = []
    for est in get_test_instances(cls):
        X, y = get_smoke_data(est)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X) if y is None else est.fit(X, y)
        out.append(est)
    return out


def _fitted_attributes(est):
    params = set(est.get_params(deep=False))
    return [k for k in vars(est) if k not in params]


# -- parameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_parameter_names(cls):
    bad = []
    for name in _parameters(cls):
        if name in FORBIDDEN_PARAMETERS:
            bad.append(f"{name} (the table's name: {FORBIDDEN_PARAMETERS[name]})")
        elif name.startswith("num_"):
            bad.append(f"{name} (the table's name: n_{name[4:]})")
        elif _is_torch_trainer(cls) and name in FORBIDDEN_TORCH_PARAMETERS:
            bad.append(f"{name} (the table's name: {FORBIDDEN_TORCH_PARAMETERS[name]})")
    assert not bad, f"{cls.__name__} parameters break the naming table: {bad}"


def test_forbidden_spellings_are_caught():
    """The rules above can fail: a class with old spellings is flagged."""

    class Old:
        def __init__(self, learning_rate=0.1, num_layers=2, n_epochs=3, dtype="float32"):
            pass

    with pytest.raises(AssertionError, match="learning_rate.*num_layers.*n_epochs"):
        test_parameter_names(Old)
    for name in ["loss_history_", "td_loss_history_", "q_max_history_", "fit_seconds_",
                 "x_mean_", "X_scale_", "target_std_", "location_"]:
        assert _attribute_problem("Old", name), name
    for name in ["loss_curve_", "fit_time_", "mean_", "scale_", "y_mean_", "y_scale_"]:
        assert not _attribute_problem("Old", name), name


# -- fitted attributes --------------------------------------------------------------------------
def _attribute_problem(cls_name, name):
    """Why the fitted attribute ``name`` breaks the table, or None."""
    if name in FORBIDDEN_ATTRIBUTES:
        return f"{name} (the table's name: {FORBIDDEN_ATTRIBUTES[name]})"
    if _TRACE.search(name):
        return f"{name} (a trace over epochs or steps is a *_curve_, e.g. loss_curve_)"
    if _DURATION.search(name) and name != "fit_time_":
        return f"{name} (the fit duration is fit_time_)"
    if name not in TABLE_MOMENTS and (
            _MOMENT_ALIAS.match(name)
            or (_MOMENT_WORD.search(name) and (cls_name, name) not in OTHER_MOMENTS)):
        return (f"{name} (input moments are mean_/scale_, target moments y_mean_/y_scale_; "
                "moments of anything else go in OTHER_MOMENTS with what they are)")
    return None


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_fitted_attribute_names(cls):
    bad, excused = set(), set()
    for est in _fitted(cls):
        for name in _fitted_attributes(est):
            problem = _attribute_problem(cls.__name__, name)
            if problem and _known(cls, "attribute", name):
                excused.add(name)
            elif problem:
                bad.add(problem)
    assert not bad, f"{cls.__name__} fitted attributes break the naming table: {sorted(bad)}"
    stale = {n for (c, kind, n) in KNOWN_EXCEPTIONS
             if c == cls.__name__ and kind == "attribute"} - excused
    assert not stale, f"{cls.__name__}: known exceptions that no longer apply: {stale}"


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_fit_keeps_only_trailing_underscore_state(cls):
    """``vars(est)`` after fit: the constructor parameters and ``*_`` names, nothing else."""
    for est in _fitted(cls):
        bad = [k for k in _fitted_attributes(est) if not k.endswith("_")]
        assert not bad, (f"{cls.__name__}.fit keeps state without a trailing underscore: "
                         f"{bad}")


@pytest.mark.parametrize("cls", [c for c in CLASSES if _is_torch_trainer(c)],
                         ids=[c.__name__ for c in CLASSES if _is_torch_trainer(c)])
def test_torch_estimators_fitted_attributes(cls):
    """The training record of the table: ``loss_curve_`` (list of float, ``n_iter_`` long
    unless steps are logged sparsely), ``n_iter_``, and the trained ``net_`` or ``module_``."""
    for est in _fitted(cls):
        assert int(est.n_iter_) == est.n_iter_ >= 0, f"{cls.__name__}.n_iter_"
        curve = est.loss_curve_
        assert isinstance(curve, list) and all(isinstance(v, float) for v in curve), (
            f"{cls.__name__}.loss_curve_ must be a list of float")
        assert len(curve) == est.n_iter_, f"{cls.__name__}: len(loss_curve_) != n_iter_"
        has_module = hasattr(est, "net_") or hasattr(est, "module_")
        if _known(cls, "module", "module_"):
            assert not has_module, f"{cls.__name__}: stale known exception (module_)"
        else:
            assert has_module, f"{cls.__name__} keeps its trained torch module as neither " \
                               "net_ (adapter) nor module_ (custom loop)"


# -- shared parameter docs ----------------------------------------------------------------------
def _normalized(text):
    return " ".join(text.split())


TORCH_TRAINERS = [c for c in CLASSES if _is_torch_trainer(c)]


@pytest.mark.parametrize("cls", TORCH_TRAINERS, ids=[c.__name__ for c in TORCH_TRAINERS])
def test_shared_torch_parameters_documented_once(cls):
    """Each shared parameter's entry opens with ``_torch_docstrings[name]`` (after the
    ``Substitution``); sentences specific to the estimator may follow."""
    params = _parameters(cls)
    names = [n for n in SHARED_PARAMETERS if n in params]
    if "early_stopping" in params:
        names += [n for n in EARLY_STOPPING_PARAMETERS if n in params]
    entries = {p.name: p for p in NumpyDocString(inspect.getdoc(cls))["Parameters"]}
    # an estimator training in max_iter steps on sampled batches logs steps, not epochs
    steps = "max_iter" in params and "max_epochs" not in params
    bad, excused = [], set()
    for name in names:
        key = "verbose_steps" if name == "verbose" and steps else name
        want = _normalized(_torch_docstrings[key])
        entry = entries.get(name)
        got = _normalized(" ".join(entry.desc)) if entry is not None else "<undocumented>"
        if got.startswith(want):
            continue
        if _known(cls, "doc", name):
            excused.add(name)
        else:
            bad.append(f"{name}: {got[:100]!r} does not open with the shared text {{{key}}}")
    assert not bad, f"{cls.__name__}:\n" + "\n".join(bad)
    stale = {n for (c, kind, n) in KNOWN_EXCEPTIONS
             if c == cls.__name__ and kind == "doc"} - excused
    assert not stale, f"{cls.__name__}: known exceptions that no longer apply: {stale}"


def test_no_placeholder_left_in_docstrings():
    """A ``{name}`` of a shared text that reached the rendered docs (e.g. written inline
    before more text, where a multi-line text cannot go)."""
    keys = "|".join(map(re.escape, _torch_docstrings))
    left = re.compile(r"\{(" + keys + r")\}")
    bad = [cls.__name__ for cls in CLASSES if left.search(inspect.getdoc(cls) or "")]
    assert not bad, f"unsubstituted shared-text placeholders in {bad}"


# -- one verbose style --------------------------------------------------------------------------
VERBOSE_CLASSES = [c for c in CLASSES if "verbose" in _parameters(c)]


@pytest.mark.parametrize("cls", VERBOSE_CLASSES, ids=[c.__name__ for c in VERBOSE_CLASSES])
def test_verbose_output_is_plain_lines(cls, capfd):
    """With ``verbose=1`` and output that is not a terminal, progress comes as plain lines:
    no carriage return, no escape code; a torch estimator prints at least one line."""
    est = get_test_instances(cls)[0].set_params(verbose=1)
    X, y = get_smoke_data(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X) if y is None else est.fit(X, y)
    out, err = capfd.readouterr()
    for stream, text in (("stdout", out), ("stderr", err)):
        assert "\r" not in text and "\x1b" not in text, (
            f"{cls.__name__}(verbose=1) redraws in place on {stream}: {text[:200]!r}")
    if _is_torch_trainer(cls):
        assert out.strip(), f"{cls.__name__}(verbose=1) printed no progress line"


# files of the package that may call print(): the one line writer of the torch loops, the
# command line, the version report, demos (one status line per fit, under their verbose) and
# the one-line notices of a download
PRINT_ALLOWED = {"base.py", "__main__.py", "utils/_show_versions.py", "utils/_demo_rows.py",
                 "datasets/_base.py", "retrieval/_generators.py"}
PACKAGE = Path(sklearn_icml26.__file__).parent


def _sources():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_progress_goes_through_the_package_helpers():
    """Only ``utils/_progress.py`` imports tqdm; ``print`` only in the files allowed above;
    a library's own progress bar (``show_progress_bar=...``) stays off."""
    bad, excused = [], set()
    known = {n for (_, kind, n) in KNOWN_EXCEPTIONS if kind == "print"}
    for path in _sources():
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                        else [node.module or ""])
                if any(m.split(".")[0] == "tqdm" for m in mods) and rel != "utils/_progress.py":
                    bad.append(f"{rel}:{node.lineno} imports tqdm (use utils.progress_bar)")
            if isinstance(node, ast.Call):
                if (isinstance(node.func, ast.Name) and node.func.id == "print"
                        and rel not in PRINT_ALLOWED and not rel.endswith("_demo.py")):
                    if rel in known:
                        excused.add(rel)
                    else:
                        bad.append(f"{rel}:{node.lineno} print() (use EpochLogger/progress_bar)")
                for kw in node.keywords:
                    if kw.arg == "show_progress_bar" and not (
                            isinstance(kw.value, ast.Constant) and kw.value.value is False):
                        bad.append(f"{rel}:{node.lineno} a library's own progress bar")
    assert not bad, "\n".join(bad)
    assert known == excused, f"known print() exceptions that no longer apply: {known - excused}"


def test_known_exceptions_name_estimators():
    names = {cls.__name__ for cls in CLASSES}
    assert {c for c, _, _ in KNOWN_EXCEPTIONS} <= names
    assert all(reason for reason in KNOWN_EXCEPTIONS.values())

