"""Torch parts of HDTree: encoder, hierarchical codebook, DDPM denoiser, loss and callbacks.

Everything here is private; :class:`sklearn_icml26.lineage.HDTreeLineage` assembles it and
trains it through :class:`sklearn_icml26.base.TorchEstimatorMixin`.
"""

import copy
import math

import numpy as np
import torch
from skorch.callbacks import Callback
from torch import nn

# -- codebook indexing -------------------------------------------------------------------------


def level_offset(level):
    """Global id of the first code of ``level`` (2**(level+1) - 2)."""
    return 2 ** (level + 1) - 2


def route(e_hat, codebook, n_levels):
    """Route rows level by level to one code per level; returns global ids (n, n_levels).

    Works on torch tensors (no gradient) or numpy arrays.
    """
    is_np = isinstance(e_hat, np.ndarray)
    if is_np:
        e_hat = torch.as_tensor(e_hat)
        codebook = torch.as_tensor(codebook, dtype=e_hat.dtype)
    n = e_hat.shape[0]
    device = e_hat.device
    codebook = codebook.to(device)
    paths = torch.empty((n, n_levels), dtype=torch.long, device=device)
    local = torch.zeros(n, dtype=torch.long, device=device)
    with torch.no_grad():
        for level in range(n_levels):
            off = level_offset(level)
            first = torch.zeros(n, dtype=torch.long, device=device) if level == 0 else 2 * local
            c0 = codebook[off + first]
            c1 = codebook[off + first + 1]
            d0 = ((e_hat - c0) ** 2).sum(dim=1)
            d1 = ((e_hat - c1) ** 2).sum(dim=1)
            local = torch.where(d1 < d0, first + 1, first)
            paths[:, level] = off + local
    return paths.numpy() if is_np else paths


# -- encoder ------------------------------------------------------------------------------------


def _block(n_in, n_out, act=True):
    layers = [nn.Linear(n_in, n_out), nn.BatchNorm1d(n_out)]
    if act:
        layers.append(nn.LeakyReLU(0.1))
    return nn.Sequential(*layers)


# Initial scale (BatchNorm weight) of z and e [our choice]. The last BatchNorm of each output
# starts them at unit variance per dimension, well inside the width of the nu = 0.2 Student-t
# kernel, so clusters touch; Adam at lr 5e-3 grows the BatchNorm weight by about lr per step,
# too slowly for a few hundred steps. Measured on the planted 4-blob tree (tiny widths, 60
# epochs, 3 seeds): ACC 0.76-0.91 with (1, 1), 0.98-1.0 with (1, 10), 0.998-1.0 with (3, 10).
# On digits (defaults without decoder, seed 0) E_SCALE 30 against 10: 10-leaf tree DP 0.800
# against 0.688, ACC 0.906 against 0.809 (more compact clusters, so the top-down splits of
# the codebook fall into the gaps between them).
Z_SCALE, E_SCALE = 3.0, 30.0

# Learning rate of the codebook relative to ``lr`` [our choice]. Codes live in the unit-scale
# ê-space where digit clusters are 0.1-0.3 wide; at the full lr (5e-3, 240 Adam steps on
# digits) the forward HQL term drags the children towards the means of their rows (Lloyd
# steps), moving the boundary of an initial split that follows a gap into a cluster: on the
# stage-1 embeddings of digits (seeds 0-2, codebook_init="gap") 10-leaf dendrogram purity
# 0.793/0.792/0.792 at initialisation, 0.700/0.729/0.791 after stage 2 at the full lr,
# 0.793/0.792/0.792 at 0.1 lr. The codebook is its own optimizer parameter group.
CODEBOOK_LR_SCALE = 0.1


class Encoder(nn.Module):
    """MLP encoder: x -> (z, e) with z the latent (d_lat) and e the 2-D embedding (m)."""

    def __init__(self, n_in, hidden, n_layers, latent, head, n_components):
        super().__init__()
        layers = [_block(n_in, hidden)]
        layers += [_block(hidden, hidden) for _ in range(n_layers)]
        layers += [_block(hidden, hidden, act=False), _block(hidden, latent, act=False)]
        self.backbone = nn.Sequential(*layers)
        self.head = nn.Sequential(_block(latent, head), _block(head, n_components, act=False))
        with torch.no_grad():
            self.backbone[-1][1].weight.fill_(Z_SCALE)
            self.head[-1][1].weight.fill_(E_SCALE)

    def forward(self, x):
        z = self.backbone(x)
        return z, self.head(z)


# -- DDPM denoiser ------------------------------------------------------------------------------


class _RowNorm(nn.Module):
    """Per-row standardisation over features (eps 1e-5, no affine)."""

    def forward(self, x):
        # (x - row mean) / sqrt(row variance + 1e-5), biased variance: layer_norm's formula
        return nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)


def _lrelu():
    return nn.LeakyReLU(0.01)


class Denoiser(nn.Module):
    """eps_theta(x_t, t, q): residual MLP conditioned on the time step and the code path."""

    def __init__(self, n_features, n_cond, n_timesteps, width):
        super().__init__()
        self.time_embedding = nn.Embedding(n_timesteps, n_features)
        self.cond = nn.Sequential(
            nn.Linear(n_cond, 200), _lrelu(), nn.Linear(200, 200), _lrelu(),
            nn.Linear(200, n_features),
        )
        self.b1 = nn.Sequential(
            nn.Linear(n_features, width), _lrelu(), _RowNorm(), nn.Linear(width, n_features)
        )
        self.blocks = nn.ModuleList(
            nn.Sequential(
                _lrelu(), _RowNorm(), nn.Linear(n_features, width), _lrelu(), _RowNorm(),
                nn.Linear(width, n_features),
            )
            for _ in range(3)
        )

    def forward(self, x_t, t, q):
        s = self.time_embedding(t) + self.cond(q)
        a1 = self.b1((x_t + s) / 3)
        a2 = (self.blocks[0]((a1 + s) / 3) + a1) / 2
        a3 = (self.blocks[1]((a2 + s) / 3) + a2) / 2
        return (self.blocks[2]((a3 + s) / 3) + a1 + a3) / 3


# -- the module trained by skorch -------------------------------------------------------------


class HDTreeModule(nn.Module):
    """Encoder + codebook (+ denoiser and its EMA copy); forward depends on the stage.

    In eval mode ``forward(x)`` returns the scaled embedding ê (n, m). In training mode
    ``forward(x, row_index)`` (the batch's rows, an extra input of the adapter) returns a dict
    that :class:`HDTreeLoss` turns into per-sample losses: stage 1 encodes the batch and its
    positives (rows of the epoch's table set by :class:`StageCallback`), stages 2-3 route the
    frozen embedding (rows of a table computed once at stage-2 entry) through the codebook
    and draw the diffusion noise.
    """

    def __init__(self, n_features, *, hidden_size, n_layers, latent_dim, head_size,
                 n_components, n_levels, fit_decoder, n_timesteps, decoder_width,
                 clip_lo=None, clip_hi=None):
        super().__init__()
        self.n_levels = n_levels
        self.n_components = n_components
        self.n_codes = 2 ** (n_levels + 1) - 2
        self.encoder = Encoder(n_features, hidden_size, n_layers, latent_dim, head_size,
                               n_components)
        self.codebook = nn.Parameter(torch.zeros(self.n_codes, n_components))
        self.register_buffer("emb_mean", torch.zeros(n_components))
        self.register_buffer("emb_scale", torch.ones(n_components))
        self.fit_decoder = fit_decoder
        self.n_timesteps = n_timesteps
        if fit_decoder:
            self.denoiser = Denoiser(n_features, n_levels * n_components, n_timesteps,
                                     decoder_width)
            self.denoiser_ema = copy.deepcopy(self.denoiser).requires_grad_(False)
            scale = 1000.0 / n_timesteps
            betas = torch.linspace(scale * 1e-4, scale * 0.02, n_timesteps, dtype=torch.float64)
            betas = betas.clamp(max=0.999)
            self.register_buffer("betas", betas.float())
            self.register_buffer("alphas_bar", torch.cumprod(1 - betas, dim=0).float())
            # bounds of the generated rows (standardised units); none: unbounded
            self.register_buffer("clip_lo", torch.full((n_features,), -math.inf)
                                 if clip_lo is None else torch.as_tensor(clip_lo))
            self.register_buffer("clip_hi", torch.full((n_features,), math.inf)
                                 if clip_hi is None else torch.as_tensor(clip_hi))
        self.stage = 1
        self.frozen = False
        # whether the embedding scale and the codebook are initialised (stage-2 entry); a
        # buffer, so that restoring an earlier state (the divergence guard) resets it too
        self.register_buffer("stage2_entered", torch.zeros((), dtype=torch.bool))
        # per-epoch tables indexed by the batch's row indices (set by StageCallback): the
        # positives of stage 1 and, from stage 2 on, the frozen encoder's ê of every row
        self.positives_table = None
        self.e_hat_table = None

    # keep the frozen encoder (BatchNorm statistics) in eval mode whatever skorch asks
    def train(self, mode=True):
        super().train(mode)
        if self.frozen:
            self.encoder.eval()
        return self

    def embed(self, x):
        """Scaled 2-D embedding ê of ``x`` (no gradient once the encoder is frozen)."""
        with torch.set_grad_enabled(torch.is_grad_enabled() and not self.frozen):
            _, e = self.encoder(x)
        return (e - self.emb_mean) / (self.emb_scale + 1e-8)

    def condition(self, paths):
        """Concatenated codes of the paths (n, n_levels * m)."""
        return self.codebook[paths].reshape(paths.shape[0], -1)

    def forward(self, x, row_index=None):
        if not self.training:
            return self.embed(x)
        if x.shape[0] < 2:  # BatchNorm needs two rows: the batch is dropped
            zero = sum((p * 0).sum() for p in self.parameters() if p.requires_grad)
            return {"stage": 0, "zero": zero.reshape(1)}
        if self.stage == 1:
            table = self.positives_table
            pos = table[row_index.to(table.device)].to(x.device, x.dtype)
            z, e = self.encoder(torch.cat([x, pos], dim=0))
            return {"stage": 1, "z": z, "e": e}
        if self.e_hat_table is not None and row_index is not None:
            table = self.e_hat_table
            e_hat = table[row_index.to(table.device)]
        else:
            e_hat = self.embed(x)
        e_hat = e_hat.to(x.device, x.dtype).detach()
        paths = route(e_hat, self.codebook.detach(), self.n_levels)
        out = {"stage": self.stage, "e_hat": e_hat, "paths": paths,
               "codebook": self.codebook}
        if self.fit_decoder:
            n = x.shape[0]
            t = torch.randint(0, self.n_timesteps, (n,), device=x.device)
            eps = torch.randn_like(x)
            ab = self.alphas_bar[t].to(x.dtype).unsqueeze(1)
            x_t = torch.sqrt(ab) * x + torch.sqrt(1 - ab) * eps
            q = self.condition(paths).detach()
            out["eps"] = eps
            out["eps_pred"] = self.denoiser(x_t, t, q)
        return out

    @torch.no_grad()
    def sample(self, paths, generator):
        """Ancestral DDPM sampling ('fixedlarge') with the EMA denoiser, one row per path."""
        dtype, device = self.codebook.dtype, self.codebook.device
        q = self.condition(paths.to(device))
        n, n_features = paths.shape[0], self.clip_lo.shape[0]
        # the noise comes from a CPU generator (same draws on every device)
        x = torch.randn((n, n_features), generator=generator, dtype=dtype).to(device)
        betas = self.betas.to(dtype)
        abar = self.alphas_bar.to(dtype)
        den = self.denoiser_ema.eval()
        for t in range(self.n_timesteps - 1, -1, -1):
            tt = torch.full((n,), t, dtype=torch.long, device=device)
            eps = den(x, tt, q)
            x0 = (x - torch.sqrt(1 - abar[t]) * eps) / torch.sqrt(abar[t])
            x0 = torch.maximum(torch.minimum(x0, self.clip_hi.to(dtype)), self.clip_lo.to(dtype))
            abar_prev = abar[t - 1] if t > 0 else torch.ones((), dtype=dtype, device=device)
            mean = (betas[t] * torch.sqrt(abar_prev) / (1 - abar[t]) * x0
                    + (1 - abar_prev) * torch.sqrt(1 - betas[t]) / (1 - abar[t]) * x)
            if t > 0:
                noise = torch.randn((n, n_features), generator=generator, dtype=dtype).to(device)
                x = mean + torch.sqrt(betas[t]) * noise
            else:
                x = mean
        return x


class Embedder64(nn.Module):
    """Float64 copy of the trained encoder and scale: x -> ê, independent of the batch.

    Inference in float64 makes each row's embedding the same whether it is computed alone
    or in a batch (float32 matrix products round differently with the batch size).
    """

    def __init__(self, module):
        super().__init__()
        self.encoder = copy.deepcopy(module.encoder).double().eval()
        self.register_buffer("emb_mean", module.emb_mean.detach().clone().double())
        self.register_buffer("emb_scale", module.emb_scale.detach().clone().double())

    def forward(self, x):
        _, e = self.encoder(x.double())
        return (e - self.emb_mean) / (self.emb_scale + 1e-8)


# -- losses -------------------------------------------------------------------------------------


def _pairwise_distance(a, b):
    sq = (a * a).sum(1, keepdim=True) + (b * b).sum(1) - 2 * a @ b.T
    return torch.sqrt(sq.clamp(min=0) + 1e-12)


def soft_contrastive_loss(a, b, nu, exaggeration):
    """Per-row soft contrastive loss between rows ``a`` and their positives ``b``."""
    power = -(nu + 1) / 2

    def kernel(d):
        return (1 + (d + 1e-6) ** 2 / nu) ** power

    def normalised(k):
        diag = torch.diagonal(k)
        return k / (k.sum(dim=1, keepdim=True) - diag.unsqueeze(1))

    n = a.shape[0]
    eye = torch.eye(n, dtype=torch.bool, device=a.device)
    q_ab = normalised(kernel(_pairwise_distance(a, b)))
    q_aa = normalised(kernel(_pairwise_distance(a, a))).masked_fill(eye, 0.0)
    q_bb = normalised(kernel(_pairwise_distance(b, b))).masked_fill(eye, 0.0)
    attract = torch.log(torch.diagonal(q_ab))
    uniform = (torch.log(q_ab.sum(dim=0) + q_bb.sum(dim=1))
               + torch.log(q_aa.sum(dim=1) + q_ab.sum(dim=1)))
    return -(exaggeration * attract - uniform / 2)


def hql_loss(e_hat, paths, codebook, n_levels, ec_weight):
    """Per-row hierarchical quantisation loss (forward term per row + shared reverse term)."""
    n = e_hat.shape[0]
    total = torch.zeros(n, dtype=e_hat.dtype, device=e_hat.device)
    for level in range(n_levels):
        off = level_offset(level)
        n_level = 2 ** (level + 1)
        forward = ((codebook[paths[:, level]] - e_hat) ** 2).mean(dim=1)
        codes = codebook[off:off + n_level]
        with torch.no_grad():
            dist = torch.cdist(e_hat, codes.detach()) ** 2
            if level == 0:
                eligible = torch.ones_like(dist, dtype=torch.bool)
            else:
                parent_local = paths[:, level - 1] - level_offset(level - 1)
                child_parent = torch.arange(n_level, device=e_hat.device) // 2
                eligible = child_parent.unsqueeze(0) == parent_local.unsqueeze(1)
            dist = dist.masked_fill(~eligible, math.inf)
            nearest = dist.argmin(dim=0)
            valid = eligible.any(dim=0)
        reverse = ((codes[valid] - e_hat[nearest[valid]]) ** 2).mean()
        total = total + forward + ec_weight * 0.25 * reverse
    return total / n_levels


class HDTreeLoss(nn.Module):
    """Stage loss as per-sample losses (mean over the batch = the stage's loss)."""

    def __init__(self, nu, exaggeration, ec_weight, n_levels):
        super().__init__()
        self.nu = nu
        self.exaggeration = exaggeration
        self.ec_weight = ec_weight
        self.n_levels = n_levels

    def forward(self, y_pred, y_true):
        if isinstance(y_pred, torch.Tensor):
            # eval mode gives the embedding (the adapter's check of the final state): 0 per
            # row where it is finite, NaN where it is not
            return (y_pred * 0.0).sum(dim=1)
        stage = y_pred["stage"]
        if stage == 0:
            return y_pred["zero"]
        if stage == 1:
            n = y_pred["z"].shape[0] // 2
            losses = [soft_contrastive_loss(u[:n], u[n:], self.nu, self.exaggeration)
                      for u in (y_pred["z"], y_pred["e"])]
            return (losses[0] + losses[1]) / 2
        ddp = 0.0
        if "eps" in y_pred:
            ddp = ((y_pred["eps"] - y_pred["eps_pred"]) ** 2).mean(dim=1)
        if stage == 3:
            return 1e-4 * ddp
        hql = hql_loss(y_pred["e_hat"], y_pred["paths"], y_pred["codebook"], self.n_levels,
                       self.ec_weight)
        return 0.01 * (0.01 * ddp + 0.1 * hql)


@torch.no_grad()
def enter_stage2(module, X, init_codebook):
    """Fix the embedding scale, initialise the codebook and freeze the encoder.

    Does nothing when ``module.stage2_entered`` is set. A non-finite embedding (a diverged
    encoder) leaves the codebook and the flag alone; in training the next loss is then
    non-finite and the adapter's guard restores the last finite state.

    Parameters
    ----------
    module : HDTreeModule
        The module.
    X : ndarray of shape (n_samples, n_features)
        Standardised training rows, in the module's precision.
    init_codebook : callable
        ``init_codebook(e_hat) -> codes`` on the training ê (float64).
    """
    if bool(module.stage2_entered):
        return
    device = module.codebook.device
    module.eval()
    x = torch.as_tensor(X, device=device)
    e = torch.cat([module.encoder(x[s:s + 4096])[1] for s in range(0, len(x), 4096)])
    mean = e.mean(dim=0)
    scale = e.std(dim=0, unbiased=False)
    module.emb_mean.copy_(mean)
    module.emb_scale.copy_(scale)
    # the encoder is frozen in eval mode: every row's ê is fixed from here on
    module.e_hat_table = (e - mean) / (scale + 1e-8)
    e_hat = module.e_hat_table.cpu().double().numpy()
    module.frozen = True
    module.encoder.requires_grad_(False)
    if not np.all(np.isfinite(e_hat)):
        return
    module.codebook.copy_(torch.as_tensor(init_codebook(e_hat), dtype=module.codebook.dtype))
    if module.fit_decoder:
        module.denoiser_ema.load_state_dict(module.denoiser.state_dict())
    module.stage2_entered.fill_(True)


# -- training schedule as skorch callbacks -------------------------------------------------------


class StageCallback(Callback):
    """Stage switching, positives, learning-rate schedule and EMA.

    Divergence is the adapter's business (its :class:`~sklearn_icml26.base.DivergenceGuard`
    restores the last finite state); the estimator makes the stage-2 entry after training
    when the kept state predates it.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Standardised training rows, in the module's precision.
    neighbors : ndarray of shape (n_samples, n_neighbors)
        Nearest neighbours of each row (self excluded) for the positives.
    stage_epochs : tuple of int
        Epochs of stages 1, 2 and 3.
    seed : int
        Seed of the positives (combined with the epoch).
    init_codebook : callable
        ``init_codebook(e_hat) -> codes`` called at stage-2 entry on the training ê.
    ema_decay : float
        Upper bound of the EMA decay.
    warmup : int
        Linear warm-up epochs of the learning rate.
    """

    def __init__(self, X, neighbors, stage_epochs, seed, init_codebook, ema_decay, warmup=5):
        self.X = X
        self.neighbors = neighbors
        self.stage_epochs = stage_epochs
        self.seed = seed
        self.init_codebook = init_codebook
        self.ema_decay = ema_decay
        self.warmup = warmup

    def initialize(self):
        self.epoch_ = 0
        self.ema_steps_ = 0
        return self

    # helpers ----------------------------------------------------------------------------
    def _stage_of(self, epoch):
        e1, e2, _ = self.stage_epochs
        return 1 if epoch < e1 else (2 if epoch < e1 + e2 else 3)

    def _lr_factor(self, epoch):
        total = sum(self.stage_epochs)
        if epoch < self.warmup:
            return (epoch + 1) / self.warmup
        span = max(total - self.warmup, 1)
        return 0.5 * (1 + math.cos(math.pi * (epoch - self.warmup) / span))

    # skorch hooks -----------------------------------------------------------------------
    def on_train_begin(self, net, **kwargs):
        # the codebook gets its own parameter group (learning rate x CODEBOOK_LR_SCALE)
        codebook = net.module_.codebook
        optimizer = net.optimizer_
        for group in optimizer.param_groups:
            group["params"] = [p for p in group["params"] if p is not codebook]
        optimizer.add_param_group({"params": [codebook], "lr_scale": CODEBOOK_LR_SCALE})

    def on_epoch_begin(self, net, **kwargs):
        epoch = len(net.history) - 1
        self.epoch_ = epoch
        stage = self._stage_of(epoch)
        if stage >= 2:
            enter_stage2(net.module_, self.X, self.init_codebook)
        net.module_.stage = stage
        net.history.record("stage", stage)
        for group in net.optimizer_.param_groups:
            group["lr"] = net.lr * self._lr_factor(epoch) * group.get("lr_scale", 1.0)
        if stage == 1:
            rng = np.random.default_rng([self.seed, epoch])
            n, k = self.neighbors.shape
            j = self.neighbors[np.arange(n), rng.integers(k, size=n)]
            alpha = rng.random(n)[:, None].astype(self.X.dtype)
            net.module_.positives_table = torch.as_tensor(alpha * self.X + (1 - alpha) * self.X[j])

    @torch.no_grad()
    def on_batch_end(self, net, training=False, **kwargs):
        module = net.module_
        if not (training and module.stage >= 2 and module.fit_decoder):
            return
        decay = min(self.ema_decay, (1 + self.ema_steps_) / (10 + self.ema_steps_))
        for ema, p in zip(module.denoiser_ema.parameters(), module.denoiser.parameters(),
                          strict=True):
            ema.mul_(decay).add_(p.detach(), alpha=1 - decay)
        self.ema_steps_ += 1

    def on_train_end(self, net, **kwargs):
        # the estimator enters stage 2 after training if the kept state has not (a fit that
        # ended in stage 1, or a divergence guard that restored a stage-1 state)
        net.module_.positives_table = net.module_.e_hat_table = None
        net.module_.stage = 3 if net.module_.fit_decoder else 2
        net.module_.eval()
        # drop the training data from the callback so the fitted net pickles small
        self.X = self.neighbors = None
        self.init_codebook = None
