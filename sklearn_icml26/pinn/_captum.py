"""captum's Arnoldi influence on a fitted PINN: the reference the package's influence is
checked against (tests and benchmark). Needs the optional ``captum`` package.

captum 0.9 does not export ``ArnoldiInfluenceFunction``; it lives in
``captum.influence._core.arnoldi_influence_function``. The PINN is wrapped so that its forward
returns ``[u, rho_1, ..., rho_K]`` on inputs ``[x, term mask]``; the training loss is
``sum_k rho_k^2 + 0 * u`` (every parameter takes part) and the test loss is ``u``, both
per-sample (``reduction = "none"``).
"""

import copy
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ._residuals import batched_residuals

__all__ = []


class _CaptumPINN(nn.Module):
    def __init__(self, net, problem, n_inputs):
        super().__init__()
        self.net = net
        self.problem = problem
        self.n_inputs = n_inputs

    def forward(self, z):
        x, mask = z[:, : self.n_inputs], z[:, self.n_inputs :]
        with torch.enable_grad():
            rho = batched_residuals(self.net, self.problem, x, mask)
        return torch.cat([self.net(x), rho], dim=1)


class _TrainLoss(nn.Module):
    reduction = "none"

    def forward(self, out, labels):
        return (out[:, 1:] ** 2).sum(dim=1) + 0.0 * out[:, 0]


class _TestLoss(nn.Module):
    reduction = "none"

    def forward(self, out, labels):
        return out[:, 0]


def captum_arnoldi_influence(estimator, X_test, *, arnoldi_dim=200, projection_dim=50,
                             damping=1e-3, eig_tol=1e-4, arnoldi_tol=1e-8, batch_size=256,
                             checkpoint_dir, seed=0):
    """Influence of every training point on ``u`` at ``X_test`` by captum's Arnoldi method.

    Parameters
    ----------
    estimator : PINNRegressor
        A fitted PINN with a problem and ``train_hidden=True`` (no data term).
    X_test : ndarray of shape (n_test, n_inputs)
        Test points.
    arnoldi_dim, projection_dim : int
        captum's ``arnoldi_dim`` and ``projection_dim``.
    damping, eig_tol : float
        captum's ``hessian_reg`` and ``hessian_inverse_tol``.
    arnoldi_tol : float, default=1e-8
        captum's Arnoldi breakdown tolerance (its default 0.1 can stop the iteration early).
    batch_size : int, default=256
        Batch size of captum's data loaders.
    checkpoint_dir : str or path-like
        Folder for the checkpoint captum loads the parameters from.
    seed : int, default=0
        captum's seed of the Arnoldi start vector.

    Returns
    -------
    influence : ndarray of shape (n_test, n_train)
        captum's scores (no minus sign, like :meth:`PINNInfluence.influence`).
    """
    from captum.influence._core.arnoldi_influence_function import ArnoldiInfluenceFunction
    from torch.utils.data import DataLoader, TensorDataset

    net = copy.deepcopy(estimator.module_).to(torch.float64)
    model = _CaptumPINN(net, estimator.problem, estimator.n_features_in_)
    path = Path(checkpoint_dir) / "pinn_captum.pt"
    torch.save(model.state_dict(), path)
    X = np.asarray(estimator.X_train_, dtype=np.float64)
    M = estimator.point_terms_.astype(np.float64)
    train = TensorDataset(torch.tensor(np.c_[X, M]), torch.zeros(len(X)))
    test_mask = np.zeros((len(X_test), M.shape[1]))
    test = (torch.tensor(np.c_[np.asarray(X_test, dtype=np.float64), test_mask]),
            torch.zeros(len(X_test)))

    def load(model, path):
        model.load_state_dict(torch.load(path, weights_only=True))
        return 1.0

    influence = ArnoldiInfluenceFunction(
        model, DataLoader(train, batch_size=batch_size), str(path), load,
        loss_fn=_TrainLoss(), test_loss_fn=_TestLoss(), batch_size=batch_size,
        projection_dim=projection_dim, seed=seed, arnoldi_dim=arnoldi_dim,
        arnoldi_tol=arnoldi_tol, hessian_reg=damping, hessian_inverse_tol=eig_tol,
        projection_on_cpu=True)
    return influence.influence(test).detach().numpy().astype(np.float64)
