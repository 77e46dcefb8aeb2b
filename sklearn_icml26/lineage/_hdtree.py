"""HDTree: lineage trees from single-cell data with a hierarchical codebook (ICML 2026).

Zang et al., "HDTree: Generative Modeling of Cellular Hierarchies for Robust Lineage Inference",
arXiv 2506.23287; implemented from the paper's formulas, no code copied.
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from scipy.sparse import coo_matrix, csr_matrix, issparse
from scipy.sparse.csgraph import connected_components, dijkstra, minimum_spanning_tree
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import Interval, StrOptions, _fit_context
from ..base import FitContext, TorchEstimatorMixin
from ..utils._docstrings import Substitution, _torch_docstrings
from ..utils._scaling import _robust_mean_std, _standardize
from ._anndata import _read_anndata, _read_root_mask
from ._codebook_init import init_codebook
from ._hdtree_module import (
    Embedder64,
    HDTreeLoss,
    HDTreeModule,
    StageCallback,
    enter_stage2,
    level_offset,
    route,
)

__all__ = ["HDTreeLineage"]

# a feature is constant when its standard deviation is at most this share of its largest
# magnitude (round-off of the mean of a constant column is a few ulps, about 1e-16)
CONSTANT_RTOL = 1e-12


def _dense(X):
    """A float64 ndarray of ``X`` (a validated array or CSR/CSC matrix)."""
    return X.toarray() if issparse(X) else X


def _check_stage_fractions(value):
    try:
        fractions = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return (fractions.shape == (3,) and np.all(fractions >= 0) and fractions[0] > 0
            and abs(fractions.sum() - 1) < 1e-6)


def _has_decoder(estimator):
    return bool(getattr(estimator, "fit_decoder", False))


@Substitution(**_torch_docstrings)
class HDTreeLineage(TorchEstimatorMixin, ClassNamePrefixFeaturesOutMixin, ClusterMixin,
                    TransformerMixin, BaseEstimator):
    """Lineage tree of cell states from a hierarchical binary codebook (HDTree).

    An MLP encoder maps every row (cell) to a 2-D embedding trained with a soft contrastive
    loss against mixtures of nearest neighbours; a binary codebook with ``2**(l+1)`` codes at
    level ``l`` is fitted on the embedding level by level (each row is routed to the nearer of
    the two children of its code at the previous level); a DDPM decoder conditioned on the
    row's code path generates cells per branch. One fit gives flat clusters at any ``k``
    (:meth:`cut`), the code tree (:meth:`dendrogram`), a pseudotime along the tree
    (:meth:`predict_pseudotime`), lineage paths, a 2-D map (:meth:`transform`) and a generator
    (:meth:`sample`, :meth:`reconstruct`). The tree, clusters and pseudotime never depend on
    the decoder.

    Training has three stages over ``max_epochs`` passes: (1) encoder with the soft
    contrastive loss; (2) the encoder is frozen, the embedding is standardised, the codebook
    is initialised and trained with the hierarchical quantisation loss while the decoder
    learns to denoise; (3) the decoder alone. Stage switching, the learning-rate schedule
    (5 warm-up epochs, then cosine to 0) and the EMA of the decoder are skorch callbacks.

    Read more in the :ref:`User Guide <user_guide_hdtree>`.

    Parameters
    ----------
    n_components : int, default=2
        Dimension ``m`` of the embedding and of the codes.
    n_levels : int, default=6
        Number of codebook levels ``L``; level ``l`` holds ``2**(l+1)`` codes, so there are
        ``2**(L+1) - 2`` codes and ``2**L`` at the deepest level.
    n_clusters : int or None, default=None
        Number of flat clusters of ``labels_`` and :meth:`predict` (the tree cut of
        :meth:`cut`), at most ``2**n_levels``; ``None`` uses the deepest-level codes that
        hold training rows. The cut merges codes of level
        ``min(floor(sqrt(n_clusters)) + 2, n_levels - 1)``, which holds at least
        ``n_clusters`` codes for every allowed value.
    hidden_size : int, default=256
        Width ``h`` of the encoder's hidden layers.
    n_layers : int, default=3
        Number of hidden ``h x h`` blocks of the encoder.
    latent_dim : int, default=128
        Dimension of the encoder's latent ``z``.
    head_size : int, default=128
        Width of the projection head from ``z`` to the embedding.
    n_neighbors : int, default=10
        Number ``K`` of nearest neighbours (in PCA space) mixed into the positives.
    pca_components : int, default=50
        Dimensions of the PCA in which neighbours are searched (capped at
        ``min(n_features, n_samples - 1)``).
    nu : float, default=0.2
        Degrees of freedom of the Student-t kernel of the contrastive loss.
    exaggeration : float, default=2.0
        Weight of the attraction term of the contrastive loss.
    codebook_init : {"gap", "kmeans", "ward", "random"}, default="gap"
        Codebook initialisation at stage 2, level by level on the training embedding (the
        rows routed to each code are split into its two children). "gap": among the 2-means
        split and the bipartitions of 8 Ward groups of the rows, the split whose boundary
        (the bisector of the two children) crosses the fewest rows per row on its smaller
        side, so the first splits fall into gaps between clusters instead of halving one;
        "kmeans": recursive 2-means; "ward": the top levels of Ward's dendrogram of the
        embedding (children = means of the two subtrees of the top merge); "random":
        standard normal codes. How they compare: the Pitfalls of the
        :ref:`user guide <user_guide_hdtree>`.
    ec_weight : float, default=2.0
        Weight of the reverse (code-to-nearest-row) quantisation term.
    fit_decoder : bool, default=True
        Train the DDPM decoder (stage 3 and the decoder part of stage 2); ``False`` skips it
        and removes :meth:`sample` and :meth:`reconstruct`. Stages 1-2 then share all epochs.
    n_timesteps : int, default=200
        Number of diffusion steps ``T``; the linear beta schedule is rescaled by ``1000 / T``.
    decoder_width : int, default=512
        Hidden width ``M`` of the denoiser's blocks.
    ema_decay : float, default=0.999
        Upper bound of the decay of the denoiser's exponential moving average used to sample.
    pseudotime_level : int or None, default=None
        Level of the codes whose graph carries the pseudotime; ``None`` is the deepest level.
    graph_neighbors : int, default=3
        Neighbours per code in the pseudotime graph.
    max_epochs : int, default=300
        {max_epochs} All stages together.
    stage_fractions : tuple of 3 float, default=(0.5, 0.2, 0.3)
        Shares of ``max_epochs`` given to stages 1, 2 and 3 (non-negative, summing to 1, the
        first positive).
    batch_size : int, default=512
        {batch_size} Batches of fewer than 2 rows are skipped.
    lr : float, default=5e-3
        {lr} It is the peak of the schedule (5 warm-up epochs, then cosine to 0).
    optimizer : {"adamw", "adam", "sgd", "rmsprop", "adamo"} or torch optimizer class, \
default="adamw"
        {optimizer}
        Here the per-tensor update is kept instead (see Notes).
    precision : {"float32", "float64"}, default="float32"
        {precision}
    device : str, default="cpu"
        {device}
    random_state : int, RandomState instance or None, default=None
        {random_state}
        Those draws include the positives, the PCA, the codebook initialisation and the
        diffusion noise.
    verbose : int, default=0
        {verbose}
    optimizer_params : dict or None, default=None
        {optimizer_params}
    weight_decay : float, default=1e-10
        {weight_decay}
    cut_rule : {"count", "distance", "guarded_distance"}, default="count"
        How :meth:`cut` (and ``labels_``) merges the codes of the starting level down to
        ``n_clusters`` leaves that hold rows; only sibling leaves merge, into their parent,
        so every cut is a cut of the code tree, and codes without rows merge first.
        "count": the pair whose smaller code holds the fewest training rows (the HDTree
        authors' rule); "distance": the pair whose rows sit closest, the distance between
        the mean embeddings of the two siblings' rows (the tree's own split distance), so
        a large population split over several codes is merged back before two small,
        distinct ones; "guarded_distance": as "distance", but a pair whose smaller code
        holds fewer than ``n_neighbors`` rows merges first (fewest rows first): such a
        code is too small to be a population of the embedding (each row's positives come
        from its ``n_neighbors`` nearest neighbours) and its mean is an outlier's, which
        "distance" keeps as a cluster of its own. How the three rules compare on real
        data: "Cutting the tree" in the :ref:`user guide <user_guide_hdtree>`.
    layer : str or None, default=None
        When ``X`` is an ``anndata.AnnData``: read ``X.layers[layer]`` instead of ``X.X``.
        Ignored for other inputs.
    use_rep : str or None, default=None
        When ``X`` is an ``anndata.AnnData``: read ``X.obsm[use_rep]`` (e.g. ``"X_pca"``)
        instead of ``X.X``. Ignored for other inputs; at most one of ``layer`` and
        ``use_rep``.

    Attributes
    ----------
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Input column names, when ``X`` had string column names.
    mean_ : ndarray of shape (n_features_in_,)
        Per-feature mean used to standardise the input.
    scale_ : ndarray of shape (n_features_in_,)
        Per-feature standard deviation used to standardise the input. A feature whose
        standard deviation is at most ``1e-12`` times its largest magnitude is constant and
        gets a power of two within a factor 2 of that magnitude (1 for an all-zero feature),
        so that ``X * s`` gives the same fit for any ``s > 0``.
    embedding_ : ndarray of shape (n_samples, n_components)
        Scaled embedding ê of the training rows.
    embedding_mean_ : ndarray of shape (n_components,)
        Mean of the raw embedding after stage 1.
    embedding_scale_ : ndarray of shape (n_components,)
        Standard deviation of the raw embedding after stage 1.
    paths_ : ndarray of shape (n_samples, n_levels)
        Global code id of each training row at each level.
    labels_ : ndarray of shape (n_samples,)
        Flat cluster of each training row (see ``n_clusters``), 0 to k-1.
    leaves_ : ndarray of shape (n_leaves,)
        Code ids of the leaves of the tree cut behind ``labels_`` and :meth:`predict`
        (sorted).
    leaf_labels_ : ndarray of shape (n_leaves,)
        Cluster label of each of ``leaves_``.
    code_embeddings_ : ndarray of shape (n_codes, n_components)
        The codebook in ê-space; code ``j`` of level ``l`` has global id ``2**(l+1) - 2 + j``.
    tree_ : Bunch
        ``parent`` (n_codes,) parent id (-1 at level 0, whose parent is a virtual root),
        ``level`` (n_codes,), ``count`` (n_codes,) training rows routed through the code and
        ``children`` (n_codes, 2) child ids (-1 at the deepest level).
    root_code_ : int
        Code (at the pseudotime level) where the pseudotime starts.
    pseudotime_ : ndarray of shape (n_samples,)
        Pseudotime of the training rows in [0, 1].
    pseudotime_scale_ : float
        Graph distance (plus projection) of the training row farthest from ``root_code_``;
        :meth:`predict_pseudotime` divides by it, so training rows span [0, 1].
    lineage_paths_ : dict of int to list of int
        For each terminal code of the pseudotime graph, the code ids from the root to it.
    lineage_graph_ : scipy.sparse.csr_matrix of shape (n_codes, n_codes)
        Symmetric pseudotime graph over codes (edge weight = distance of the codes).
    neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Nearest neighbours of each training row used for the positives.
    net_ : skorch.NeuralNet
        {net_} ``net_.history`` records the stage of each epoch.
    n_iter_ : int
        {n_iter_}
    loss_curve_ : list of float
        {loss_curve_} Each epoch's loss is that of its stage.

    See Also
    --------
    sklearn.cluster.AgglomerativeClustering : Ward's hierarchical clustering.

    Notes
    -----
    Choices of this implementation beyond the paper: the input is standardised per feature
    (moments on power-of-two pre-scaled columns, so that inputs near 1e-300 or 1e300 neither
    underflow nor overflow, and constant features are detected relative to their magnitude);
    CSR/CSC input is accepted and made dense (the standardised input is dense anyway);
    when the nearest-code graph of the pseudotime falls into several connected components
    it is joined by minimum-spanning-tree edges with a ``UserWarning``;
    the last BatchNorm weights of ``z`` and of the embedding start at 3 and 30 instead of 1
    (with few hundred Adam steps the unit-variance start keeps clusters inside the kernel
    width and the codebook's top-down splits cut through them); ``transform`` and routing use
    a float64 copy of the trained encoder, so a row's embedding does not depend on the batch
    it comes in; without the decoder, stages 1 and 2 share all ``max_epochs`` in proportion;
    the positives of each epoch are a table drawn from ``(random_state, epoch)`` that the
    module indexes with the batch's row indices (an extra per-sample input of the adapter);
    from stage 2 on the frozen encoder's embedding of every row is computed once and indexed
    the same way; the codebook trains at 0.1 ``lr``; Adam and AdamW use the per-tensor update,
    not torch's fused kernel: the gradients of the biases before each BatchNorm are rounding
    noise that Adam turns into steps of about ``lr``, and the fused kernel's rounding sends
    them on other walks that gave worse trees on planted data (the user guide's Pitfalls).

    References
    ----------
    .. [1] Zang, Z. et al. "HDTree: Generative Modeling of Cellular Hierarchies for Robust
       Lineage Inference", ICML 2026, arXiv:2506.23287.

    Examples
    --------
    krumsiek11, 640 simulated myeloid cells over time (the loader reads the data home and
    downloads the file on first use); a small network trained briefly, as a demonstration:

    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_icml26.datasets import load_krumsiek11
    >>> from sklearn_icml26.lineage import HDTreeLineage
    >>> from sklearn_icml26.metrics import pseudotime_correlation
    >>> krumsiek = load_krumsiek11()
    >>> X = StandardScaler().fit_transform(krumsiek.data)
    >>> model = HDTreeLineage(n_levels=5, n_clusters=5, hidden_size=16, n_layers=1,
    ...                       latent_dim=8, head_size=8, fit_decoder=False, max_epochs=10,
    ...                       batch_size=128, random_state=0)
    >>> model = model.fit(X, root_mask=krumsiek.root_mask)  # pseudotime starts at time 0
    >>> model.labels_.shape, model.paths_.shape, model.transform(X).shape
    ((640,), (640, 5), (640, 2))
    >>> bool(pseudotime_correlation(model.pseudotime_, krumsiek.time) > 0.8)
    True
    """

    # the per-tensor Adam update, not the fused kernel (the user guide's Pitfalls): the
    # gradients of the biases before each BatchNorm are rounding noise that Adam turns into
    # steps of about lr, and the fused kernel's rounding sends them on other walks (planted
    # 1-D path, seeds 0-8: pseudotime correlation >= 0.95 in 6 of 9 fits per-tensor, 3 fused)
    _fused_optimizer = False

    _parameter_constraints = {
        **TorchEstimatorMixin._torch_parameter_constraints,
        "weight_decay": TorchEstimatorMixin._early_stopping_constraints["weight_decay"],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "n_levels": [Interval(Integral, 1, 16, closed="both")],
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 0, None, closed="left")],
        "latent_dim": [Interval(Integral, 1, None, closed="left")],
        "head_size": [Interval(Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "pca_components": [Interval(Integral, 1, None, closed="left")],
        "nu": [Interval(Real, 0, None, closed="neither")],
        "exaggeration": [Interval(Real, 0, None, closed="left")],
        "codebook_init": [StrOptions({"gap", "kmeans", "ward", "random"})],
        "ec_weight": [Interval(Real, 0, None, closed="left")],
        "fit_decoder": ["boolean"],
        "n_timesteps": [Interval(Integral, 2, None, closed="left")],
        "decoder_width": [Interval(Integral, 1, None, closed="left")],
        "ema_decay": [Interval(Real, 0, 1, closed="both")],
        "pseudotime_level": [Interval(Integral, 0, None, closed="left"), None],
        "graph_neighbors": [Interval(Integral, 1, None, closed="left")],
        "stage_fractions": ["array-like"],
        "cut_rule": [StrOptions({"distance", "count", "guarded_distance"})],
        "layer": [str, None],
        "use_rep": [str, None],
    }

    def __init__(self, n_components=2, n_levels=6, n_clusters=None, *, hidden_size=256,
                 n_layers=3, latent_dim=128, head_size=128, n_neighbors=10, pca_components=50,
                 nu=0.2, exaggeration=2.0, codebook_init="gap", ec_weight=2.0,
                 fit_decoder=True, n_timesteps=200, decoder_width=512, ema_decay=0.999,
                 pseudotime_level=None, graph_neighbors=3, max_epochs=300,
                 stage_fractions=(0.5, 0.2, 0.3), batch_size=512, lr=5e-3, optimizer="adamw",
                 precision="float32", device="cpu", random_state=None, verbose=0,
                 optimizer_params=None, weight_decay=1e-10, cut_rule="count", layer=None,
                 use_rep=None):
        self.n_components = n_components
        self.n_levels = n_levels
        self.n_clusters = n_clusters
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.latent_dim = latent_dim
        self.head_size = head_size
        self.n_neighbors = n_neighbors
        self.pca_components = pca_components
        self.nu = nu
        self.exaggeration = exaggeration
        self.codebook_init = codebook_init
        self.ec_weight = ec_weight
        self.fit_decoder = fit_decoder
        self.n_timesteps = n_timesteps
        self.decoder_width = decoder_width
        self.ema_decay = ema_decay
        self.pseudotime_level = pseudotime_level
        self.graph_neighbors = graph_neighbors
        self.max_epochs = max_epochs
        self.stage_fractions = stage_fractions
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.weight_decay = weight_decay
        self.precision = precision
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.cut_rule = cut_rule
        self.layer = layer
        self.use_rep = use_rep

    # -- test settings --
    @classmethod
    def _get_test_params(cls):
        return [dict(n_levels=3, hidden_size=16, n_layers=1, latent_dim=8, head_size=8,
                     n_neighbors=3, pca_components=5, n_timesteps=10, decoder_width=16,
                     max_epochs=6, batch_size=32, random_state=0)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.input_tags.sparse = True
        return tags

    # -- adapter hooks --
    def _build_module(self, n_features_in, n_outputs, context):
        return HDTreeModule(
            n_features_in, hidden_size=self.hidden_size, n_layers=self.n_layers,
            latent_dim=self.latent_dim, head_size=self.head_size,
            n_components=self.n_components, n_levels=self.n_levels,
            fit_decoder=self.fit_decoder, n_timesteps=self.n_timesteps,
            decoder_width=self.decoder_width, clip_lo=context.clip_lo,
            clip_hi=context.clip_hi,
        )

    def _build_criterion(self, context):
        return HDTreeLoss(self.nu, self.exaggeration, self.ec_weight, self.n_levels)

    def _build_callbacks(self, context):
        return [("hdtree_stages", StageCallback(
            context.X, context.neighbors, context.stage_epochs, context.seed,
            context.init_codebook, self.ema_decay,
        ))]

    # -- fitting --
    def _stage_epochs(self):
        f1, f2, f3 = (float(f) for f in self.stage_fractions)
        total = self.max_epochs
        if not self.fit_decoder:
            e1 = max(1, round(total * f1 / (f1 + f2)))
            return (e1, total - e1, 0)
        e1 = max(1, round(total * f1))
        e2 = min(round(total * f2), total - e1)
        return (e1, e2, total - e1 - e2)


    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, root_mask=None):
        """Train the encoder, codebook and decoder, then build the tree and the pseudotime.

        Parameters
        ----------
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features)
            Training rows (cells x features, e.g. log-normalised, scaled genes), float; a
            sparse matrix (CSR/CSC, others are converted) is made dense. An AnnData gives
            its ``X``, ``layers[layer]`` or ``obsm[use_rep]`` (see ``layer``, ``use_rep``);
            every other method then reads AnnData inputs the same way.
        y : None
            Ignored.
        root_mask : array-like of bool of shape (n_samples,) or str, default=None
            Rows marking early cells; the pseudotime starts at their most frequent code.
            ``None`` starts at the code nearest the embedding's origin (arbitrary). When
            ``X`` is an AnnData, the name of a boolean ``obs`` column. Routed as fit
            metadata (``set_fit_request(root_mask=True)``).

        Returns
        -------
        self : HDTreeLineage
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` holds NaN/inf or fewer than ``n_neighbors + 1`` rows, if ``n_clusters``
            exceeds the ``2**n_levels`` deepest codes, if ``pseudotime_level`` is not below
            ``n_levels`` or if ``root_mask`` is not a boolean vector of length ``n_samples``
            or is all False, or if an AnnData ``X`` lacks the ``layer``, ``use_rep`` or
            ``root_mask`` column asked for.

        Warns
        -----
        ConvergenceWarning
            When the training loss becomes non-finite (training stops and the last
            parameters that still gave a finite loss are kept; if they predate stage 2, the
            codebook is initialised on them) or rises a hundredfold over the fit; lower
            ``lr``. Also when every training row sits on one level-0 code.
        """
        root_mask = _read_root_mask(X, root_mask)
        X = _read_anndata(X, self.layer, self.use_rep)
        X = _dense(validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64))
        n, n_features = X.shape
        if n < self.n_neighbors + 1:
            raise ValueError(
                f"HDTreeLineage needs n_samples >= {self.n_neighbors + 1} for "
                f"n_neighbors={self.n_neighbors}; got n_samples={n}."
            )
        self._check_n_clusters(self.n_clusters)
        if self.pseudotime_level is not None and self.pseudotime_level >= self.n_levels:
            raise ValueError(
                f"pseudotime_level must be in [0, n_levels - 1] = [0, {self.n_levels - 1}]; "
                f"got pseudotime_level={self.pseudotime_level}."
            )
        if not _check_stage_fractions(self.stage_fractions):
            raise ValueError(
                "stage_fractions must be 3 non-negative shares of max_epochs summing to 1, "
                f"the first > 0; got {self.stage_fractions!r}."
            )
        root_mask = self._check_root_mask(root_mask, n)

        # moments on power-of-two pre-scaled columns (no overflow at 1e300, no underflow at
        # 1e-300); a column is constant when its sd is below CONSTANT_RTOL times its largest
        # magnitude, and is then scaled by that magnitude's power of two (1 for zeros), so
        # X * s gives the same standardised input for any s
        self.mean_, scale, magnitude = _robust_mean_std(X, axis=0)
        constant = ~(scale > CONSTANT_RTOL * magnitude)
        scale[constant] = magnitude[constant]
        self.scale_ = scale
        Xs = _standardize(X, self.mean_, self.scale_)

        rs = check_random_state(self.random_state)
        seed = int(rs.randint(np.iinfo(np.int32).max))
        n_pca = min(self.pca_components, n_features, n - 1)
        Z = PCA(n_pca, random_state=seed).fit_transform(Xs) if n_pca < n_features else Xs
        self.neighbors_ = NearestNeighbors(n_neighbors=self.n_neighbors).fit(Z).kneighbors(
            return_distance=False)

        # the generated rows are clipped to the training range widened by 10 % per side
        lo, hi = Xs.min(axis=0), Xs.max(axis=0)
        context = FitContext(
            X=self._as_input(Xs), neighbors=self.neighbors_,
            stage_epochs=self._stage_epochs(), seed=seed,
            init_codebook=lambda e_hat: init_codebook(e_hat, self.n_levels,
                                                      self.codebook_init, seed + 1),
            clip_lo=lo - 0.1 * (hi - lo), clip_hi=hi + 0.1 * (hi - lo))
        # sets net_, n_iter_ and loss_curve_; training that blows up stops at the adapter's
        # divergence guard (the last finite state is restored, with a ConvergenceWarning)
        self._fit_net(Xs, None, extra_inputs={"row_index": np.arange(n, dtype=np.int64)},
                      context=context)
        module = self.net_.module_
        # a fit that ended in stage 1, or whose restored state predates stage 2: the
        # embedding scale and the codebook come from the kept encoder
        enter_stage2(module, context.X, context.init_codebook)
        module.e_hat_table = None
        module.stage = 3 if module.fit_decoder else 2
        module.eval()
        self.embedding_mean_ = module.emb_mean.detach().cpu().double().numpy()
        self.embedding_scale_ = module.emb_scale.detach().cpu().double().numpy()
        self.code_embeddings_ = module.codebook.detach().cpu().double().numpy()
        self.embedding_ = self._forward_numpy(Xs, module=self._embedder())
        if not (np.all(np.isfinite(self.embedding_))
                and np.all(np.isfinite(self.code_embeddings_))):
            raise ValueError(
                "HDTreeLineage: training diverged; the embedding or the codebook of the "
                f"training rows is not finite (NaN/inf). Lower lr (got lr={self.lr!r}) or "
                "check the input scaling."
            )
        self.paths_ = route(self.embedding_, self.code_embeddings_, self.n_levels)
        self._build_tree()
        if len(np.unique(self.paths_[:, 0])) < 2:
            warnings.warn(
                "HDTreeLineage: every training row sits on one level-0 code (tree collapsed); "
                "train longer or check the input scaling.", ConvergenceWarning, stacklevel=2)
        self.leaves_, self.leaf_labels_ = self._cut_leaves(self.n_clusters)
        self.labels_ = self._labels_from_paths(self.paths_, self.leaves_, self.leaf_labels_)
        self._fit_pseudotime(root_mask)
        return self

    def _check_n_clusters(self, n_clusters):
        if n_clusters is None:
            return
        if n_clusters > 2**self.n_levels:
            raise ValueError(
                f"n_clusters={n_clusters} exceeds the 2**n_levels={2**self.n_levels} deepest "
                "codes; raise n_levels."
            )

    @staticmethod
    def _check_root_mask(root_mask, n):
        if root_mask is None:
            return None
        mask = np.asarray(root_mask)
        if mask.dtype != bool or mask.shape != (n,):
            raise ValueError(
                f"root_mask must be a boolean array of shape ({n},) (one flag per row of X); "
                f"got shape {mask.shape} and dtype {mask.dtype}."
            )
        if not mask.any():
            raise ValueError("root_mask must mark at least one row as early; got all False.")
        return mask

    # -- the tree --
    def _build_tree(self):
        L = self.n_levels
        n_codes = 2 ** (L + 1) - 2
        level = np.concatenate([np.full(2 ** (l + 1), l) for l in range(L)])
        local = np.arange(n_codes) - (2 ** (level + 1) - 2)
        parent = np.where(level == 0, -1, 2**level - 2 + local // 2)
        children = np.full((n_codes, 2), -1, dtype=np.int64)
        inner = level < L - 1
        first = 2 ** (level[inner] + 2) - 2 + 2 * local[inner]
        children[inner] = np.stack([first, first + 1], axis=1)
        count = np.zeros(n_codes, dtype=np.int64)
        for l in range(L):
            count += np.bincount(self.paths_[:, l], minlength=n_codes)
        self.tree_ = Bunch(parent=parent.astype(np.int64), level=level.astype(np.int64),
                           count=count, children=children)

    def _cut_leaves(self, n_clusters, paths=None, embedding=None):
        """Leaves (global ids) of the cut to ``n_clusters`` and their labels.

        The occupancy (rows per code) and, for the distance rules, the row means come from
        ``paths``/``embedding`` (default: the training rows). Codes without rows merge
        first and do not count towards ``n_clusters``.
        """
        L = self.n_levels
        tree = self.tree_
        if paths is None:
            paths, embedding, count = self.paths_, self.embedding_, tree.count
        else:
            count = np.bincount(paths.ravel(), minlength=len(tree.level))
        if n_clusters is None:
            lstar = L - 1
        else:
            lstar = min(math.isqrt(n_clusters) + 2, L - 1)
        leaves = set(range(level_offset(lstar), level_offset(lstar + 1)))
        if n_clusters is not None:
            by_distance = self.cut_rule in ("distance", "guarded_distance")
            # "guarded_distance": a code with fewer rows than the embedding's neighbourhood
            # merges before any distance is compared
            guard = self.n_neighbors if self.cut_rule == "guarded_distance" else 0
            if by_distance:
                sums = np.zeros((len(count), embedding.shape[1]))
                for level in range(L):
                    np.add.at(sums, paths[:, level], embedding)
                means = sums / np.maximum(count, 1)[:, None]
            n_occupied = sum(count[c] > 0 for c in leaves)
            while n_occupied > n_clusters or (
                    n_occupied == n_clusters and len(leaves) > max(n_clusters, 2)):
                candidates = []
                for code in leaves:
                    if tree.level[code] < 1 or (code - level_offset(tree.level[code])) % 2:
                        continue  # level 0 does not merge; each pair once, from its first
                    sibling = code + 1
                    if sibling not in leaves:
                        continue
                    n_a, n_b = int(count[code]), int(count[sibling])
                    # (tier, cost): tier 0 a code without rows, 1 a code below the guard
                    # (fewest rows first), 2 the rule's cost
                    if n_a == 0 or n_b == 0:
                        cost = (0, 0.0)
                    elif min(n_a, n_b) < guard:
                        cost = (1, float(min(n_a, n_b)))
                    elif not by_distance:
                        cost = (2, float(min(n_a, n_b)))
                    else:  # the split distance: how far apart the two siblings' rows sit
                        cost = (2, float(np.sqrt(((means[code] - means[sibling]) ** 2).sum())))
                    candidates.append((cost, -int(tree.level[code]), code, sibling))
                if n_occupied <= n_clusters:  # only empty codes are left to merge
                    candidates = [c for c in candidates if c[0][0] == 0]
                if not candidates:
                    break
                _, _, code, sibling = min(candidates)
                n_occupied -= int(count[code] > 0 and count[sibling] > 0)
                leaves -= {code, sibling}
                leaves.add(int(tree.parent[code]))
        leaves = np.array(sorted(leaves), dtype=np.int64)
        order = sorted(range(len(leaves)), key=lambda i: (count[leaves[i]] == 0, leaves[i]))
        labels = np.empty(len(leaves), dtype=np.int64)
        labels[order] = np.arange(len(leaves))
        if n_clusters == 1 and len(leaves) == 2:  # both level-0 codes: one cluster
            labels[:] = 0
        return leaves, labels

    def _labels_from_paths(self, paths, leaves, leaf_labels):
        label_of_code = np.full(2 ** (self.n_levels + 1) - 2, -1, dtype=np.int64)
        label_of_code[leaves] = leaf_labels
        return label_of_code[paths].max(axis=1)

    def _leaf_of_paths(self, paths, leaves):
        is_leaf = np.zeros(2 ** (self.n_levels + 1) - 2, dtype=bool)
        is_leaf[leaves] = True
        hit = is_leaf[paths]
        return paths[np.arange(len(paths)), hit.argmax(axis=1)]

    # -- pseudotime -----------------------------------------------------------------------------
    def _pt_level(self):
        return self.n_levels - 1 if self.pseudotime_level is None else self.pseudotime_level

    def _fit_pseudotime(self, root_mask):
        codes = self.paths_[:, self._pt_level()]
        nodes = np.unique(codes)
        C = self.code_embeddings_[nodes]
        n_nodes, n_codes = len(nodes), len(self.code_embeddings_)
        D = np.sqrt(((C[:, None] - C[None]) ** 2).sum(-1))
        W = np.zeros_like(D)
        if n_nodes > 1:
            k = min(self.graph_neighbors, n_nodes - 1)
            nearest = np.argsort(D + np.diag(np.full(n_nodes, np.inf)), axis=1)[:, :k]
            rows = np.repeat(np.arange(n_nodes), k)
            W[rows, nearest.ravel()] = D[rows, nearest.ravel()]
            W = np.maximum(W, W.T)
            n_comp, _ = connected_components(csr_matrix(W > 0), directed=False)
            if n_comp > 1:
                warnings.warn(
                    f"HDTreeLineage: the pseudotime graph of the {n_nodes} occupied "
                    f"level-{self._pt_level()} codes (graph_neighbors={self.graph_neighbors} "
                    f"nearest codes each) has {n_comp} connected components; they are joined "
                    "by edges of the codes' minimum spanning tree, so the pseudotime crosses "
                    "between separate groups of cells along those edges. Raise "
                    "graph_neighbors, or fit each group on its own if they are separate "
                    "lineages.", UserWarning, stacklevel=4)
                mst = minimum_spanning_tree(csr_matrix(D + 1e-12 * (D == 0))).toarray()
                mst = np.maximum(mst, mst.T)
                W = np.where(W > 0, W, mst)
        W = np.where(W > 0, np.maximum(W, 1e-12), 0.0)
        full = coo_matrix(W)
        self.lineage_graph_ = csr_matrix(
            (full.data, (nodes[full.row], nodes[full.col])), shape=(n_codes, n_codes))
        if root_mask is not None:
            root = int(np.bincount(codes[root_mask]).argmax())
        else:
            root = int(nodes[np.argmin((C**2).sum(1))])
        self.root_code_ = root
        raw, pred = self._raw_pseudotime(self.embedding_, codes, root)
        self.pseudotime_scale_ = float(raw.max()) if raw.max() > 0 else 1.0
        self.pseudotime_ = raw / self.pseudotime_scale_
        # terminal codes precede no code: their root -> terminal paths
        reached = pred >= 0
        is_pred = np.zeros(n_nodes, dtype=bool)
        is_pred[pred[reached]] = True
        self.lineage_paths_ = {}
        root_idx = int(np.searchsorted(nodes, root))
        for t in np.flatnonzero(reached & ~is_pred):
            path = [int(t)]
            while path[-1] != root_idx:
                path.append(int(pred[path[-1]]))
            self.lineage_paths_[int(nodes[t])] = [int(nodes[i]) for i in path[::-1]]

    def _pseudotime_graph(self):
        """The occupied codes of the pseudotime level (sorted) and their graph."""
        nodes = np.unique(self.paths_[:, self._pt_level()])
        return nodes, self.lineage_graph_[nodes][:, nodes]

    def _raw_pseudotime(self, e_hat, codes, root):
        nodes, graph = self._pseudotime_graph()
        root_idx = int(np.searchsorted(nodes, root))
        T, pred = dijkstra(graph, indices=root_idx, return_predecessors=True)
        # rows on codes outside the graph go to the nearest graph code
        idx = np.searchsorted(nodes, codes).clip(max=len(nodes) - 1)
        outside = nodes[idx] != codes
        if outside.any():
            C = self.code_embeddings_[nodes]
            own = self.code_embeddings_[codes[outside]]
            idx[outside] = ((own[:, None] - C[None]) ** 2).sum(-1).argmin(1)
        T = np.where(np.isfinite(T), T, 0.0)
        c = self.code_embeddings_[nodes[idx]]
        p_idx = pred[idx]
        has_pred = p_idx >= 0
        direction = np.zeros_like(c)
        p = self.code_embeddings_[nodes[p_idx[has_pred]]]
        diff = c[has_pred] - p
        direction[has_pred] = diff / np.maximum(np.linalg.norm(diff, axis=1, keepdims=True),
                                                1e-12)
        proj = ((e_hat - c) * direction).sum(1)
        pt = np.where(has_pred, np.maximum(0.0, T[idx] + proj), 0.0)
        return pt, pred

    # -- public methods --
    @property
    def _n_features_out(self):
        """Number of output features of :meth:`transform` (for ``get_feature_names_out``)."""
        return self.n_components

    def _embedder(self):
        """A float64 copy of the trained encoder and embedding scale (see Embedder64)."""
        return Embedder64(self.net_.module_)

    def _standardise(self, X):
        X = _read_anndata(X, self.layer, self.use_rep)
        X = _dense(validate_data(self, X, reset=False, accept_sparse=("csr", "csc"),
                                 dtype=np.float64))
        Xs = _standardize(X, self.mean_, self.scale_)
        self._check_precision_range(Xs, X)
        return Xs

    def _check_precision_range(self, Xs, X):
        """Reject rows whose standardised values overflow the module's float precision."""
        limit = float(np.finfo(np.float32 if self.precision == "float32" else np.float64).max)
        peak = float(np.max(np.abs(Xs))) if Xs.size else 0.0
        if not peak <= limit:
            raise ValueError(
                f"X holds values too large for precision={self.precision!r}: after "
                "standardisation with the training mean and scale the largest magnitude is "
                f"{peak:.3g}, but must be at most {limit:.3g} (largest |X| = "
                f"{float(np.max(np.abs(X))):.3g}); rescale X like the training data."
            )

    def transform(self, X):
        """Scaled 2-D embedding ê of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features)
            Rows to embed (dense or CSR/CSC).

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Embedding in the codebook's space, float64.

        Raises
        ------
        ValueError
            If ``X`` holds values that, standardised, exceed the range of ``precision``
            (float32: about 3.4e38) or whose embedding overflows.
        """
        check_is_fitted(self)
        out = self._forward_numpy(self._standardise(X), module=self._embedder())
        if not np.all(np.isfinite(out)):
            bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
            raise ValueError(
                f"X rows {bad[:10].tolist()} overflow the encoder (their embedding is not "
                "finite); X must be on the scale of the training data."
            )
        return out

    def apply(self, X):
        """Code path of each row: its global code id at every level.

        Parameters
        ----------
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features)
            Rows to route (dense or CSR/CSC).

        Returns
        -------
        paths : ndarray of shape (n_samples, n_levels)
            Global code ids, int64; ``paths[:, l]`` is a child of ``paths[:, l - 1]``.
        """
        check_is_fitted(self)
        return route(self.transform(X), self.code_embeddings_, self.n_levels)

    def predict(self, X):
        """Flat cluster of each row (the cut of ``n_clusters``).

        Parameters
        ----------
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features)
            Rows to assign (dense or CSR/CSC).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster labels, int64 (labels of training rows are 0 to k-1).
        """
        check_is_fitted(self)
        return self._labels_from_paths(self.apply(X), self.leaves_, self.leaf_labels_)

    def cut(self, n_clusters, X=None, *, induced=False):
        """Flat clusters from cutting the code tree to ``n_clusters`` leaves.

        The codes of level ``min(floor(sqrt(n_clusters)) + 2, n_levels - 1)`` are merged,
        two sibling leaves into their parent at a time (in the order of ``cut_rule``;
        codes without rows first), until ``n_clusters`` leaves hold rows.

        Parameters
        ----------
        n_clusters : int
            Number of clusters; at most ``2**n_levels``.
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features), \
default=None
            Rows to assign; ``None`` uses the training rows.
        induced : bool, default=False
            ``False``: the leaves are those of the training rows' cut, and ``X`` is
            assigned to them (as :meth:`predict` does for ``n_clusters``). ``True``: the
            tree is cut as ``X`` occupies it (the tree induced on ``X``'s rows: codes that
            no row of ``X`` reaches merge first and do not count), so ``X`` falls into
            ``n_clusters`` branches, e.g. the fate cells of a fit on all cells.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster labels, int64; the rows that define the cut (training rows, or ``X``
            if ``induced``) get 0 to k-1 (k <= n_clusters).

        Raises
        ------
        ValueError
            If ``n_clusters`` is not a positive int or exceeds ``2**n_levels``.
        """
        check_is_fitted(self)
        self._check_cut_argument(n_clusters)
        paths, leaves, labels = self._cut_of(n_clusters, X, induced)
        return self._labels_from_paths(paths, leaves, labels)

    def _cut_of(self, n_clusters, X, induced):
        if X is None:
            return (self.paths_, *self._cut_leaves(int(n_clusters)))
        embedding = self.transform(X)
        paths = route(embedding, self.code_embeddings_, self.n_levels)
        if induced:
            return (paths, *self._cut_leaves(int(n_clusters), paths, embedding))
        return (paths, *self._cut_leaves(int(n_clusters)))

    def _check_cut_argument(self, n_clusters):
        if not isinstance(n_clusters, Integral) or isinstance(n_clusters, bool) \
                or n_clusters < 1:
            raise ValueError(f"n_clusters must be a positive int; got {n_clusters!r}.")
        self._check_n_clusters(int(n_clusters))

    def dendrogram(self, n_clusters=None, X=None, *, induced=False):
        """The code tree cut to ``n_clusters`` leaves, for :func:`~sklearn_icml26.metrics.\
dendrogram_purity`.

        Node 0 is the virtual root and node ``g + 1`` is code ``g``.

        Parameters
        ----------
        n_clusters : int or None, default=None
            Leaves of the cut (as in :meth:`cut`); ``None`` keeps the full code tree, rows
            sitting on their deepest code.
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features), \
default=None
            Rows to place; ``None`` uses the training rows.
        induced : bool, default=False
            Cut the tree as ``X`` occupies it (see :meth:`cut`).

        Returns
        -------
        parent : ndarray of shape (n_codes + 1,)
            Parent node of each node, -1 for the root.
        node_of_sample : ndarray of shape (n_samples,)
            Node holding each row.
        """
        check_is_fitted(self)
        if n_clusters is None:
            paths = self.paths_ if X is None else self.apply(X)
            leaf = paths[:, -1]
        else:
            self._check_cut_argument(n_clusters)
            paths, leaves, _ = self._cut_of(n_clusters, X, induced)
            leaf = self._leaf_of_paths(paths, leaves)
        parent = np.concatenate([[-1], self.tree_.parent + 1]).astype(np.int64)
        return parent, (leaf + 1).astype(np.int64)

    def predict_pseudotime(self, X, root_code=None):
        """Pseudotime of rows along the code graph, on the training scale.

        Parameters
        ----------
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features)
            Rows (dense or CSR/CSC).
        root_code : int or None, default=None
            Code id where time starts; ``None`` uses ``root_code_``. A code outside the
            pseudotime graph is replaced by the nearest graph code; the scale is then the
            maximum over training rows from that root.

        Returns
        -------
        pseudotime : ndarray of shape (n_samples,)
            Pseudotime, float64 (training rows span [0, 1]).

        Raises
        ------
        ValueError
            If ``root_code`` is outside ``[0, n_codes)``.
        """
        check_is_fitted(self)
        e_hat = self.transform(X)
        paths = route(e_hat, self.code_embeddings_, self.n_levels)
        codes = paths[:, self._pt_level()]
        if root_code is None:
            raw, _ = self._raw_pseudotime(e_hat, codes, self.root_code_)
            return raw / self.pseudotime_scale_
        root = self._check_code(root_code, "root_code")
        nodes, _ = self._pseudotime_graph()
        if root not in set(nodes.tolist()):
            d = ((self.code_embeddings_[nodes] - self.code_embeddings_[root]) ** 2).sum(1)
            root = int(nodes[d.argmin()])
        train, _ = self._raw_pseudotime(self.embedding_, self.paths_[:, self._pt_level()], root)
        raw, _ = self._raw_pseudotime(e_hat, codes, root)
        return raw / (train.max() if train.max() > 0 else 1.0)

    def _check_code(self, code, name):
        n_codes = len(self.code_embeddings_)
        if not isinstance(code, Integral) or isinstance(code, bool) or not 0 <= code < n_codes:
            raise ValueError(f"{name} must be an int in [0, {n_codes}) (a code id); "
                             f"got {code!r}.")
        return int(code)

    def lineage_path(self, source, target):
        """Shortest path between two codes on the code tree plus same-level neighbours.

        Parent-child edges into level ``l`` weigh ``10**(L - l)``; each code is also linked
        to its 3 nearest codes of the same level with weight ``10**(L - l)`` plus their
        distance, so paths prefer the tree but may jump across close branches.

        Parameters
        ----------
        source : int
            Code id where the path starts.
        target : int
            Code id where the path ends.

        Returns
        -------
        path : list of int
            Code ids from ``source`` to ``target``; -1 stands for the virtual root.

        Raises
        ------
        ValueError
            If ``source`` or ``target`` is outside ``[0, n_codes)``.
        """
        check_is_fitted(self)
        source = self._check_code(source, "source")
        target = self._check_code(target, "target")
        L = self.n_levels
        n_codes = len(self.code_embeddings_)
        rows, cols, vals = [], [], []
        for code in range(n_codes):
            lv = self.tree_.level[code]
            par = self.tree_.parent[code]
            rows.append(code)
            cols.append(n_codes if par < 0 else par)
            vals.append(10.0 ** (L - lv))
        for lv in range(L):
            ids = np.arange(level_offset(lv), level_offset(lv + 1))
            C = self.code_embeddings_[ids]
            D = np.sqrt(((C[:, None] - C[None]) ** 2).sum(-1))
            np.fill_diagonal(D, np.inf)
            k = min(3, len(ids) - 1)
            for i, nbrs in enumerate(np.argsort(D, axis=1)[:, :k]):
                for j in nbrs:
                    rows.append(ids[i])
                    cols.append(ids[j])
                    vals.append(10.0 ** (L - lv) + D[i, j])
        G = csr_matrix((vals, (rows, cols)), shape=(n_codes + 1, n_codes + 1))
        G = G.maximum(G.T)
        _, pred = dijkstra(G, indices=source, return_predecessors=True)
        path = [target]
        while path[-1] != source:
            path.append(int(pred[path[-1]]))
        return [-1 if c == n_codes else int(c) for c in path[::-1]]

    @available_if(_has_decoder)
    def sample(self, n_samples=1, *, code=None, random_state=None):
        """Generate rows from the decoder, on the paths of leaves under ``code``.

        Deepest-level leaves are drawn in proportion to their training rows (uniformly if
        none has any), then a row is generated on each leaf's path by ancestral DDPM sampling
        with the EMA decoder.

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows to generate.
        code : int or None, default=None
            Code id whose subtree the leaves come from; ``None`` uses the whole tree.
        random_state : int, RandomState instance or None, default=None
            Seeds the leaves and the noise.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_in_)
            Generated rows in the input's units, float64.

        Raises
        ------
        ValueError
            If ``code`` is outside ``[0, n_codes)``.
        """
        check_is_fitted(self)
        rs = check_random_state(random_state)
        L = self.n_levels
        deepest = np.arange(level_offset(L - 1), level_offset(L))
        if code is not None:
            code = self._check_code(code, "code")
            depth = L - 1 - int(self.tree_.level[code])
            local = code - level_offset(int(self.tree_.level[code]))
            deepest = deepest[local * 2**depth:(local + 1) * 2**depth]
        weights = self.tree_.count[deepest].astype(float)
        weights = weights / weights.sum() if weights.sum() > 0 else None
        leaves = rs.choice(deepest, size=n_samples, p=weights)
        paths = np.empty((n_samples, L), dtype=np.int64)
        paths[:, -1] = leaves
        for l in range(L - 2, -1, -1):
            paths[:, l] = self.tree_.parent[paths[:, l + 1]]
        return self._generate(paths, rs)

    @available_if(_has_decoder)
    def reconstruct(self, X, random_state=None):
        """Generate one row on the code path of each row of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix, anndata.AnnData} of shape (n_samples, n_features)
            Rows whose paths condition the decoder.
        random_state : int, RandomState instance or None, default=None
            Seeds the noise.

        Returns
        -------
        X_rec : ndarray of shape (n_samples, n_features_in_)
            Generated rows in the input's units, float64.
        """
        check_is_fitted(self)
        paths = self.apply(X)
        return self._generate(paths, check_random_state(random_state))

    def _generate(self, paths, rs):
        module = self.net_.module_
        generator = torch.Generator().manual_seed(int(rs.randint(np.iinfo(np.int32).max)))
        out = []
        for start in range(0, len(paths), 4096):
            chunk = torch.as_tensor(paths[start:start + 4096])
            out.append(module.sample(chunk, generator).cpu().double().numpy())
        Xs = np.concatenate(out) if out else np.empty((0, self.n_features_in_))
        return Xs * self.scale_ + self.mean_
