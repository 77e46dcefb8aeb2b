"""Shared docstring texts, written once, and the decorator that puts them in place.

Every torch estimator documents the same parameters (``max_epochs``, ``lr``, ``optimizer``,
...) and fitted attributes (``net_``, ``n_iter_``, ``loss_curve_``, ...). Their descriptions
live here, in ``_torch_docstrings``; an estimator writes the numpydoc header line of each
entry itself (the type and its own default) and a ``{name}`` placeholder, alone on the line
below, for the description::

    from ..utils._docstrings import Substitution, _torch_docstrings


    @Substitution(**_torch_docstrings)
    class MyRegressor(TorchEstimatorMixin, RegressorMixin, BaseEstimator):
        \"\"\"...

        Parameters
        ----------
        max_epochs : int, default=100
            {max_epochs}
        lr : float, default=1e-3
            {lr}
        \"\"\"

The design follows imbalanced-learn's ``Substitution`` decorator, with one difference: only
placeholders that name a given text are replaced, so the literal braces of a numpydoc type
(``{"adam", "sgd"}``) need no escaping, and a multi-line text is indented to its placeholder.
A placeholder alone on its line that names no given text is an error (a typo would
otherwise reach the rendered docs).
"""

import re

__all__ = ["Substitution"]

# a {name} placeholder; the group is the name
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# a placeholder alone on its line, with its indentation
_LINE_PLACEHOLDER = re.compile(r"^([ \t]*)\{([A-Za-z_][A-Za-z0-9_]*)\}[ \t]*$", re.MULTILINE)


class Substitution:
    """Decorator that fills ``{name}`` placeholders of a docstring with shared texts.

    Parameters
    ----------
    **texts : dict of str to str
        The texts by placeholder name. A text of several lines is indented to the column of
        its placeholder.

    Raises
    ------
    KeyError
        When applied to an object whose docstring has a placeholder alone on a line that
        names none of ``texts``.

    Examples
    --------
    >>> from sklearn_icml26.utils._docstrings import Substitution
    >>> @Substitution(seed="Seeds the model.\\nAn int gives reproducible fits.")
    ... def fit(random_state=None):
    ...     '''Fit.
    ...
    ...     Parameters
    ...     ----------
    ...     random_state : int or None
    ...         {seed}
    ...     '''
    >>> print(fit.__doc__.splitlines()[-3:-1])
    ['        Seeds the model.', '        An int gives reproducible fits.']
    """

    def __init__(self, **texts):
        self.texts = texts

    def _indented(self, name, indent):
        lines = self.texts[name].strip("\n").splitlines()
        return "\n".join([lines[0]] + [indent + line if line else "" for line in lines[1:]])

    def __call__(self, obj):
        doc = obj.__doc__
        if not doc:
            return obj

        def line(match):
            indent, name = match.groups()
            if name not in self.texts:
                raise KeyError(f"{getattr(obj, '__qualname__', obj)}: the docstring "
                               f"placeholder {{{name}}} names no shared text; known: "
                               f"{sorted(self.texts)}.")
            return indent + self._indented(name, indent)

        doc = _LINE_PLACEHOLDER.sub(line, doc)
        # placeholders inside a line of text: single-line texts only, no indentation
        doc = _PLACEHOLDER.sub(lambda m: self.texts[m.group(1)].strip()
                               if m.group(1) in self.texts and "\n" not in
                               self.texts[m.group(1)].strip() else m.group(0), doc)
        obj.__doc__ = doc
        return obj


# the user guide page of the torch adapter, linked from the shared texts
_GUIDE = ":ref:`user_guide_torch_adapter`"

_torch_docstrings = {
    # -- parameters (the estimator writes "name : type, default=..." above each) --
    "max_epochs": "Number of passes over the training data (epochs).",
    "batch_size": "Mini-batch size; ``-1`` trains on the full batch.",
    "lr": "Learning rate of the optimizer.",
    "optimizer": (
        "Optimizer: ``\"adam\"``, ``\"adamw\"``, ``\"sgd\"``, ``\"rmsprop\"`` (the\n"
        ":mod:`torch.optim` classes), ``\"adamo\"`` (:class:`sklearn_icml26.optim.AdamO`) or a\n"
        "torch optimizer class. Adam and AdamW run torch's fused kernel where torch has one\n"
        "for the device (the same update); see " + _GUIDE + "."),
    "optimizer_params": (
        "Extra keyword arguments of the optimizer, e.g. ``{\"betas\": (0.9, 0.99)}`` or, for\n"
        "``\"adamo\"``, ``{\"kappa\": 1.0, \"tau\": 0.05}``; checked against the optimizer's\n"
        "signature. ``lr`` has its own parameter; a ``weight_decay`` key overrides the\n"
        "parameter of that name. ``None`` keeps the optimizer's defaults."),
    "weight_decay": "Weight decay of the optimizer (decoupled for AdamW), >= 0.",
    "early_stopping": (
        "Hold out ``validation_fraction`` of the samples (a permutation seeded from\n"
        "``random_state``), stop when their weighted loss has not improved by ``tol`` for\n"
        "``n_iter_no_change`` epochs and restore the parameters of the best epoch."),
    "validation_fraction": "Share of the samples held out by ``early_stopping``, in (0, 1).",
    "n_iter_no_change": (
        "Epochs without an improvement of the validation loss by ``tol`` after which\n"
        "``early_stopping`` stops training."),
    "tol": "Smallest decrease of the validation loss that counts as an improvement.",
    "precision": "Floating point precision of the module and of the data fed to it.",
    "device": "Torch device, e.g. ``\"cpu\"`` or ``\"cuda\"``.",
    "random_state": (
        "Seeds the module's initialisation, the batch shuffling and any other random draw of\n"
        "the fit; an int gives the same model every time. The caller's torch random state is\n"
        "left untouched."),
    "verbose": (
        "``0`` is silent; ``1`` prints about 20 progress lines (the first epoch, every\n"
        "``ceil(max_epochs / 20)``-th and the last), ``2`` or more one line per epoch, as\n"
        "plain text."),
    # the verbose text of an estimator that trains in ``max_iter`` optimizer steps on sampled
    # batches (offline RL, policy gradient) instead of epochs
    "verbose_steps": (
        "``0`` is silent; ``1`` prints about 20 progress lines (the first step, every\n"
        "``ceil(max_iter / 20)``-th and the last), ``2`` or more one line per step, as\n"
        "plain text."),
    # -- fitted attributes --
    "net_": "The trained skorch net; ``net_.module_`` is the torch module.",
    "n_iter_": (
        "Number of epochs run. When training diverges (non-finite loss) it stops with a\n"
        ":class:`~sklearn.exceptions.ConvergenceWarning` and the last parameters that gave a\n"
        "finite loss are restored; ``n_iter_`` then counts the epochs kept (0: the initial\n"
        "parameters). See " + _GUIDE + "."),
    "loss_curve_": "Training loss per epoch, ``n_iter_`` values.",
    "validation_loss_curve_": (
        "Validation loss per epoch (``n_iter_`` values) with ``early_stopping``, else None."),
    "best_loss_": "Best validation loss with ``early_stopping``, else None.",
}
