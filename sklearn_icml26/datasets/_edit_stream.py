"""Synthetic stream of edits for codebook retrieval (keys around edit centres, far queries)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch

from .._compat import Interval, validate_params

__all__ = ["make_edit_stream"]


@validate_params(
    {
        "n_edits": [Interval(Integral, 1, None, closed="left")],
        "n_keys_per_edit": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "key_noise": [Interval(Real, 0, None, closed="left")],
        "n_related": [Interval(Integral, 0, None, closed="left")],
        "n_unrelated": [Interval(Integral, 0, None, closed="left")],
        "hub": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_edit_stream(n_edits=50, n_keys_per_edit=3, n_features=64, key_noise=0.05,
                     n_related=2, n_unrelated=200, hub=True, random_state=None):
    """A stream of edits (keys around edit centres) with related and unrelated queries.

    Edit centres ``c_e ~ N(0, I)``; each edit has ``n_keys_per_edit`` keys
    ``c_e + key_noise * N(0, I)``. Related queries are ``c_e + N(0, 0.1^2 I)`` (``n_related``
    per edit, labelled with their edit id); unrelated queries are ``N(0, I)`` shifted by 10
    along one random unit vector (far from every edit). With ``hub=True`` one more key sits at
    the mean of all keys, a planted hub (its own edit, id ``n_edits``, value ``"hub"``).

    Parameters
    ----------
    n_edits : int, default=50
        Number of edits.
    n_keys_per_edit : int, default=3
        Keys per edit.
    n_features : int, default=64
        Dimension.
    key_noise : float, default=0.05
        Standard deviation of the keys around their centre.
    n_related : int, default=2
        Related queries per edit.
    n_unrelated : int, default=200
        Unrelated queries.
    hub : bool, default=True
        Append a key at the mean of all keys.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    data : Bunch
        ``key_vectors`` (n_keys, n_features; not ``keys``, a mapping method of
        :class:`~sklearn.utils.Bunch`), ``edit_ids`` (n_keys,) int, ``key_values`` (list of
        str, ``"edit {e}"``), ``centres`` (n_edits, n_features), ``related`` (n_edits * n_related,
        n_features), ``related_edit_ids`` (n_edits * n_related,), ``unrelated``
        (n_unrelated, n_features) and ``hub_index`` (row of the hub key, or None).

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_edit_stream
    >>> data = make_edit_stream(n_edits=4, n_features=8, random_state=0)
    >>> data.key_vectors.shape, data.related.shape, data.unrelated.shape, data.hub_index
    ((13, 8), (8, 8), (200, 8), 12)
    """
    rng = np.random.default_rng(random_state if not isinstance(random_state,
                                                                np.random.RandomState)
                                else random_state.randint(np.iinfo(np.int32).max))
    centres = rng.normal(size=(n_edits, n_features))
    edit_ids = np.repeat(np.arange(n_edits), n_keys_per_edit)
    keys = centres[edit_ids] + key_noise * rng.normal(size=(edit_ids.size, n_features))
    related_ids = np.repeat(np.arange(n_edits), n_related)
    related = centres[related_ids] + 0.1 * rng.normal(size=(related_ids.size, n_features))
    direction = rng.normal(size=n_features)
    direction /= np.linalg.norm(direction)
    unrelated = rng.normal(size=(n_unrelated, n_features)) + 10.0 * direction
    values = [f"edit {e}" for e in edit_ids]
    hub_index = None
    if hub:
        hub_index = keys.shape[0]
        keys = np.vstack([keys, keys.mean(axis=0)])
        edit_ids = np.append(edit_ids, n_edits)
        values.append("hub")
    return Bunch(key_vectors=keys, edit_ids=edit_ids, key_values=values, centres=centres,
                 related=related, related_edit_ids=related_ids, unrelated=unrelated,
                 hub_index=hub_index)
