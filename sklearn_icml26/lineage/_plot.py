"""Displays of an HDTree fit: the code tree with the labels of each node, and the pseudotime map."""

from numbers import Integral

import numpy as np
from scipy.sparse import issparse
from sklearn.utils.validation import check_is_fitted

from .._compat import check_matplotlib_support

__all__ = ["LineageTreeDisplay", "PseudotimeDisplay"]


def _tree_layout(parent):
    """Depth (virtual root 0) and x position of each node: leaves 0, 1, ... in DFS order."""
    parent = np.asarray(parent, dtype=np.int64)
    n = len(parent)
    children = [[] for _ in range(n + 1)]  # index n: the virtual root
    for k, p in enumerate(parent):
        if not -1 <= p < n or p == k:
            raise ValueError(f"parent[{k}] = {p} is not a node index in [0, {n}) or -1 (top "
                             f"level).")
        children[n if p < 0 else p].append(k)
    depth = np.full(n, -1, dtype=np.int64)
    x = np.zeros(n)
    next_leaf = 0
    stack = [(n, 0, False)]
    seen = 0
    while stack:
        node, d, done = stack.pop()
        if node < n and not done:
            depth[node] = d
            seen += 1
        kids = children[node]
        if done:
            x[node] = np.mean(x[kids])
            continue
        if node < n and not kids:
            x[node] = next_leaf
            next_leaf += 1
            continue
        if node < n:  # place the node once its children are placed
            stack.append((node, d, True))
        for kid in reversed(kids):
            stack.append((kid, d + 1, False))
    if seen != n:
        raise ValueError("parent does not describe a tree: some nodes are not reachable from "
                         "the top level (a cycle).")
    is_leaf = np.array([not children[k] for k in range(n)], dtype=bool)
    return depth, x, is_leaf


class LineageTreeDisplay:
    """The code tree of an HDTree fit with the class composition of its nodes.

    A dendrogram of the codes (top: the virtual root; one row per codebook level, nodes
    sized by the number of rows routed through them) with, under each drawn leaf, a stacked
    bar of the fraction of its rows in each class (e.g. annotated cell types). Create it with
    :meth:`from_estimator`. Needs matplotlib (the ``plot`` extra).

    Parameters
    ----------
    parent : array-like of shape (n_nodes,)
        Index of each node's parent among the nodes, ``-1`` for the top level (children of
        the virtual root).
    composition : array-like of shape (n_nodes, n_classes)
        Number of rows of each class routed through each node (non-negative).
    node_ids : array-like of shape (n_nodes,), default=None
        Names of the nodes (the global code ids), shown under the leaves; positions when
        ``None``.
    class_names : list of str of length n_classes, default=None
        Legend labels of the classes.
    root : int, default=None
        Index of the node to mark with a star (e.g. where the pseudotime starts).

    Attributes
    ----------
    node_positions_ : ndarray of shape (n_nodes, 2)
        ``(x, depth)`` of each node; the virtual root is at depth 0, x from 0 to
        ``n_leaves - 1``.
    leaves_ : ndarray of shape (n_leaves,)
        Indices of the nodes without children, left to right.
    edges_ : matplotlib.collections.LineCollection
        The elbow edges, one per node (from its parent's row down to it).
    nodes_ : matplotlib.collections.PathCollection
        The node markers.
    bars_ : list of matplotlib.container.BarContainer
        One container per class: the bar segments of the leaves (height = fraction of the
        leaf's rows in that class times ``bar_height``).
    root_marker_ : matplotlib.collections.PathCollection or None
        The star on ``root``.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    HDTreeLineage.dendrogram : The code tree as parent array.
    PseudotimeDisplay : The 2-D map coloured by pseudotime.

    References
    ----------
    .. [1] Zang, Z. et al. "HDTree: Generative Modeling of Cellular Hierarchies for Robust
       Lineage Inference", ICML 2026, arXiv:2506.23287.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_icml26.lineage import LineageTreeDisplay
    >>> disp = LineageTreeDisplay(parent=[-1, -1, 0, 0],
    ...                           composition=[[3, 1], [0, 2], [3, 0], [0, 1]],
    ...                           class_names=["a", "b"]).plot()
    >>> disp.leaves_.tolist(), disp.node_positions_[0].tolist()
    ([2, 3, 1], [0.5, 1.0])
    >>> [round(float(b.get_height()), 2) for b in disp.bars_[0]]
    [1.0, 0.0, 0.0]
    """

    def __init__(self, parent, composition, *, node_ids=None, class_names=None, root=None):
        self.parent = parent
        self.composition = composition
        self.node_ids = node_ids
        self.class_names = class_names
        self.root = root

    def plot(self, ax=None, *, bar_height=1.0, legend=True):
        """Draw the tree and the class bars of its leaves.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure when ``None``.
        bar_height : float, default=1.0
            Height of a full bar, in tree levels.
        legend : bool, default=True
            Draw the legend of the classes.

        Returns
        -------
        display : LineageTreeDisplay
            The display, with ``node_positions_``, ``leaves_``, ``edges_``, ``nodes_``,
            ``bars_``, ``root_marker_``, ``ax_`` and ``figure_`` set.

        Raises
        ------
        ValueError
            If ``parent`` is not a tree, ``composition`` does not have one row per node or
            holds negative counts, or ``node_ids``/``class_names`` have the wrong length.
        """
        check_matplotlib_support("LineageTreeDisplay.plot")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection

        parent = np.asarray(self.parent, dtype=np.int64).ravel()
        comp = np.asarray(self.composition, dtype=np.float64)
        n = len(parent)
        if comp.ndim != 2 or comp.shape[0] != n:
            raise ValueError(f"composition must be of shape (n_nodes={n}, n_classes); got shape "
                             f"{comp.shape}.")
        if np.any(comp < 0) or not np.all(np.isfinite(comp)):
            raise ValueError("composition must hold non-negative finite counts.")
        names = (list(self.class_names) if self.class_names is not None
                 else [str(c) for c in range(comp.shape[1])])
        if len(names) != comp.shape[1]:
            raise ValueError(f"class_names must name the {comp.shape[1]} classes; got "
                             f"{len(names)}.")
        ids = list(self.node_ids) if self.node_ids is not None else list(range(n))
        if len(ids) != n:
            raise ValueError(f"node_ids must name the {n} nodes; got {len(ids)}.")
        depth, x, is_leaf = _tree_layout(parent)
        counts = comp.sum(axis=1)
        total = max(float(counts[depth == 1].sum()), 1.0)
        if ax is None:
            _, ax = plt.subplots(figsize=(max(6.0, 0.45 * is_leaf.sum() + 2), 5))
        top_x = float(np.mean(x[parent < 0])) if n else 0.0
        segments = []
        for k in range(n):
            px, pd = (top_x, 0) if parent[k] < 0 else (x[parent[k]], depth[parent[k]])
            segments.append([(px, pd), (x[k], pd), (x[k], depth[k])])
        self.edges_ = LineCollection(segments, colors="k",
                                     linewidths=0.6 + 2.4 * counts / total)
        ax.add_collection(self.edges_)
        self.nodes_ = ax.scatter(x, depth, s=10 + 120 * counts / total, c="k", zorder=3)
        leaves = np.flatnonzero(is_leaf)
        leaves = leaves[np.argsort(x[leaves])]
        base = float(depth.max()) + 0.35 if n else 0.35
        frac = comp[leaves] / np.maximum(comp[leaves].sum(axis=1, keepdims=True), 1e-300)
        bottom = np.full(len(leaves), base)
        self.bars_ = []
        for c in range(comp.shape[1]):
            heights = frac[:, c] * bar_height
            self.bars_.append(ax.bar(x[leaves], heights, bottom=bottom, width=0.8,
                                     color=f"C{c % 10}", label=str(names[c])))
            bottom = bottom + heights
        self.root_marker_ = None
        if self.root is not None:
            r = int(self.root)
            self.root_marker_ = ax.scatter([x[r]], [depth[r]], marker="*", s=250, c="gold",
                                           edgecolor="k", zorder=4, label="pseudotime root")
        ax.set_xticks(x[leaves])
        ax.set_xticklabels([f"{ids[k]}\nn={int(counts[k])}" for k in leaves], fontsize=7)
        ax.set_xlim(-0.7, max(len(leaves) - 0.3, 0.7))
        ax.set_ylim(base + bar_height + 0.15, -0.3)
        ax.set_yticks(np.arange(1, int(depth.max()) + 1) if n else [])
        ax.set_yticklabels([f"level {d - 1}" for d in range(1, int(depth.max()) + 1)]
                           if n else [])
        ax.set_xlabel("leaf code and its number of rows")
        if legend:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
        self.node_positions_ = np.column_stack([x, depth.astype(np.float64)])
        self.leaves_ = leaves
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, y=None, *, X=None, max_level=None, class_names=None,
                       ax=None, **kwargs):
        """Draw the code tree of a fitted :class:`HDTreeLineage` down to ``max_level``.

        The drawn nodes are the codes of levels ``0 .. max_level`` through which at least one
        row is routed; a node's composition counts its rows per class of ``y``.

        Parameters
        ----------
        estimator : HDTreeLineage
            The fitted model.
        y : array-like of shape (n_samples,), default=None
            Class of each row (e.g. cell types, ints or strings); ``None`` uses the flat
            clusters (``labels_``, or ``predict(X)``).
        X : {array-like, sparse matrix} of shape (n_samples, n_features), default=None
            Rows to route with :meth:`HDTreeLineage.apply`; ``None`` uses the training rows
            (``paths_``).
        max_level : int, default=None
            Deepest codebook level drawn, in ``[0, n_levels)``; ``None`` means
            ``min(n_levels - 1, 3)`` (at most 16 leaves).
        class_names : list of str, default=None
            Names of the classes of ``y`` in sorted order; the class values when ``None``.
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : LineageTreeDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``y`` does not have one entry per row, or ``max_level`` is outside
            ``[0, n_levels)``.
        """
        check_is_fitted(estimator, "paths_")
        L = estimator.n_levels
        if max_level is None:
            max_level = min(L - 1, 3)
        if isinstance(max_level, bool) or not isinstance(max_level, Integral) \
                or not 0 <= max_level < L:
            raise ValueError(f"max_level must be an int in [0, {L}) (a codebook level); got "
                             f"{max_level!r}.")
        paths = estimator.paths_ if X is None else estimator.apply(X)
        if y is None:
            y = estimator.labels_ if X is None else estimator.predict(X)
        y = np.asarray(y).ravel()
        if len(y) != len(paths):
            raise ValueError(f"y must hold one class per row ({len(paths)} rows); got "
                             f"{len(y)}.")
        classes, y_idx = np.unique(y, return_inverse=True)
        tree = estimator.tree_
        n_codes = len(tree.level)
        counts = np.zeros((n_codes, len(classes)))
        for lv in range(max_level + 1):
            np.add.at(counts, (paths[:, lv], y_idx), 1.0)
        drawn = np.flatnonzero((tree.level <= max_level) & (counts.sum(axis=1) > 0))
        position = np.full(n_codes, -1, dtype=np.int64)
        position[drawn] = np.arange(len(drawn))
        parent = np.where(tree.parent[drawn] >= 0, position[tree.parent[drawn]], -1)
        root = int(estimator.root_code_)
        while tree.level[root] > max_level:
            root = int(tree.parent[root])
        root = int(position[root]) if position[root] >= 0 else None
        if class_names is None:
            class_names = [str(c) for c in classes]
        disp = cls(parent, counts[drawn], node_ids=drawn, class_names=class_names, root=root)
        return disp.plot(ax=ax, **kwargs)


class PseudotimeDisplay:
    """A 2-D map of the rows coloured by pseudotime, with the lineage paths of the codes.

    The map is the model's own embedding (with the codes of each root-to-terminal lineage
    path drawn as lines and the root code as a star) or a PCA of the input. Create it with
    :meth:`from_estimator`. Needs matplotlib (the ``plot`` extra).

    Parameters
    ----------
    embedding : array-like of shape (n_samples, 2)
        Coordinates of the rows.
    pseudotime : array-like of shape (n_samples,)
        Pseudotime of each row (training rows span [0, 1]).
    lineage_paths : list of ndarray of shape (m_i, 2), default=None
        Coordinates of the codes along each lineage, root first.
    root : array-like of shape (2,), default=None
        Coordinates of the root code, marked with a star.
    axis_labels : tuple of two str, default=None
        Labels of the two axes.

    Attributes
    ----------
    scatter_ : matplotlib.collections.PathCollection
        The rows, coloured by pseudotime.
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour bar.
    lineage_lines_ : list of matplotlib.lines.Line2D
        One line per lineage path.
    root_marker_ : matplotlib.collections.PathCollection or None
        The star on the root code.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    HDTreeLineage.predict_pseudotime : The pseudotime drawn.
    LineageTreeDisplay : The code tree with the class composition of its leaves.

    References
    ----------
    .. [1] Zang, Z. et al. "HDTree: Generative Modeling of Cellular Hierarchies for Robust
       Lineage Inference", ICML 2026, arXiv:2506.23287.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_icml26.lineage import PseudotimeDisplay
    >>> disp = PseudotimeDisplay(np.eye(3)[:, :2], [0.0, 0.5, 1.0],
    ...                          lineage_paths=[np.array([[0, 0], [1, 0]])]).plot()
    >>> disp.scatter_.get_array().tolist(), len(disp.lineage_lines_)
    ([0.0, 0.5, 1.0], 1)
    """

    def __init__(self, embedding, pseudotime, *, lineage_paths=None, root=None,
                 axis_labels=None):
        self.embedding = embedding
        self.pseudotime = pseudotime
        self.lineage_paths = lineage_paths
        self.root = root
        self.axis_labels = axis_labels

    def plot(self, ax=None, *, cmap="viridis", colorbar=True, s=4, **kwargs):
        """Draw the map.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure when ``None``.
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Colour map of the pseudotime.
        colorbar : bool, default=True
            Draw a colour bar.
        s : float, default=4
            Marker size of the rows.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.scatter`.

        Returns
        -------
        display : PseudotimeDisplay
            The display, with ``scatter_``, ``colorbar_``, ``lineage_lines_``,
            ``root_marker_``, ``ax_`` and ``figure_`` set.

        Raises
        ------
        ValueError
            If ``embedding`` is not of shape (n_samples, 2) or ``pseudotime`` does not have
            one value per row.
        """
        check_matplotlib_support("PseudotimeDisplay.plot")
        import matplotlib.pyplot as plt

        emb = np.asarray(self.embedding, dtype=np.float64)
        pt = np.asarray(self.pseudotime, dtype=np.float64).ravel()
        if emb.ndim != 2 or emb.shape[1] != 2:
            raise ValueError(f"embedding must be of shape (n_samples, 2); got shape "
                             f"{emb.shape}.")
        if len(pt) != len(emb):
            raise ValueError(f"pseudotime must hold one value per row of embedding "
                             f"({len(emb)}); got {len(pt)}.")
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 5))
        self.scatter_ = ax.scatter(emb[:, 0], emb[:, 1], c=pt, cmap=cmap, s=s, **kwargs)
        self.colorbar_ = ax.figure.colorbar(self.scatter_, ax=ax, label="pseudotime") \
            if colorbar else None
        self.lineage_lines_ = []
        for path in self.lineage_paths or []:
            path = np.asarray(path, dtype=np.float64)
            (line,) = ax.plot(path[:, 0], path[:, 1], "-o", color="k", lw=1, ms=2.5)
            self.lineage_lines_.append(line)
        self.root_marker_ = None
        if self.root is not None:
            r = np.asarray(self.root, dtype=np.float64).ravel()
            self.root_marker_ = ax.scatter([r[0]], [r[1]], marker="*", s=250, c="gold",
                                           edgecolor="k", zorder=4)
        labels = self.axis_labels or ("component 1", "component 2")
        ax.set(xlabel=labels[0], ylabel=labels[1])
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, X=None, *, embedding="model", lineages=True, ax=None,
                       **kwargs):
        """Draw the rows of a fitted :class:`HDTreeLineage` coloured by their pseudotime.

        Parameters
        ----------
        estimator : HDTreeLineage
            The fitted model.
        X : {array-like, sparse matrix} of shape (n_samples, n_features), default=None
            Rows to draw (pseudotime from :meth:`HDTreeLineage.predict_pseudotime`);
            ``None`` draws the training rows (``embedding_``, ``pseudotime_``).
        embedding : {"model", "pca"}, default="model"
            The map: the model's embedding (its first two components), or the first two
            principal components of ``X`` (needs ``X``).
        lineages : bool, default=True
            Draw the lineage paths of the codes and the root code (model embedding only).
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : PseudotimeDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``embedding`` is not "model" or "pca", ``"pca"`` comes without ``X``, or the
            model's embedding has fewer than two components.
        """
        check_is_fitted(estimator, "pseudotime_")
        if embedding not in ("model", "pca"):
            raise ValueError(f"embedding must be 'model' or 'pca'; got {embedding!r}.")
        if embedding == "pca" and X is None:
            raise ValueError("embedding='pca' needs X (the rows whose principal components are "
                             "drawn); pass the training input to draw the training rows.")
        if embedding == "model" and estimator.embedding_.shape[1] < 2:
            raise ValueError(f"the model's embedding has {estimator.embedding_.shape[1]} "
                             "component; embedding='model' needs 2 (use embedding='pca').")
        if X is None:
            emb, pt = estimator.embedding_, estimator.pseudotime_
        else:
            pt = estimator.predict_pseudotime(X)
            if embedding == "model":
                emb = estimator.transform(X)
        paths, root = None, None
        if embedding == "pca":
            from sklearn.decomposition import PCA

            dense = X.toarray() if issparse(X) else np.asarray(X, dtype=np.float64)
            emb = PCA(n_components=2).fit_transform(dense)
            labels = ("PC 1", "PC 2")
        else:
            labels = ("HDTree 1", "HDTree 2")
            if lineages:
                codes = estimator.code_embeddings_[:, :2]
                paths = [codes[p] for p in estimator.lineage_paths_.values()]
                root = codes[estimator.root_code_]
        disp = cls(np.asarray(emb)[:, :2], pt, lineage_paths=paths, root=root,
                   axis_labels=labels)
        return disp.plot(ax=ax, **kwargs)
