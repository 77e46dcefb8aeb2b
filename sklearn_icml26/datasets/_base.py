"""The data home and the one download helper every loader uses."""

import functools
import os
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["RemoteFile", "clear_data_home", "fetch_files", "get_data_home"]

DATA_HOME_ENV = "SKLEARN_ICML26_DATA"


def get_data_home(data_home=None):
    """Return the folder where the package keeps its datasets, creating it if needed.

    The folder is, in order of precedence: the ``data_home`` argument, the environment variable
    ``SKLEARN_ICML26_DATA``, then ``~/sklearn_icml26_data``. Each dataset lives in a sub-folder
    named after it (e.g. ``ese_xu2026/``), exactly as in the project's shared data folder.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder to use instead of the default; ``~`` is expanded.

    Returns
    -------
    data_home : pathlib.Path
        The data home as an absolute path, which exists on return.

    Examples
    --------
    >>> from sklearn_icml26.datasets import get_data_home
    >>> get_data_home("/tmp/my_data").name
    'my_data'
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV, os.path.join("~", "sklearn_icml26_data"))
    path = Path(data_home).expanduser().resolve()  # absolute: messages name the real folder
    path.mkdir(parents=True, exist_ok=True)
    return path


def clear_data_home(data_home=None):
    """Delete the data home and everything in it.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder to delete; resolved as in :func:`get_data_home`.

    Examples
    --------
    >>> from sklearn_icml26.datasets import clear_data_home, get_data_home
    >>> folder = get_data_home("/tmp/sklearn_icml26_scratch")
    >>> clear_data_home(folder)
    >>> folder.exists()
    False
    """
    shutil.rmtree(get_data_home(data_home))


@dataclass(frozen=True)
class RemoteFile:
    """A dataset file and where to download it from when it is not in the data home.

    Parameters
    ----------
    path : str
        Path of the file inside the dataset's folder, with ``/`` separators.
    url : str or None
        The file's original public address; ``None`` when it cannot be downloaded.
    sha256 : str or None
        Pinned SHA-256 of the file; the download is rejected when it differs.
    """

    path: str
    url: str | None = None
    sha256: str | None = None


@functools.cache
def read_registry(name):
    """The pinned hashes of a dataset's files, from the package's registry text file.

    The registries (``sklearn_icml26/datasets/registry/<name>``) are in :mod:`pooch`'s registry
    format: one file per line, its path (quoted when it has spaces) and its SHA-256; ``#``
    starts a comment. They are data, read by :meth:`pooch.Pooch.load_registry`, not code.

    Parameters
    ----------
    name : str
        File name of the registry, e.g. ``"ese.txt"``.

    Returns
    -------
    sha256 : dict of str to str
        Path inside the dataset's folder (``/`` separators) to its lower-case hex SHA-256, in
        the file's order. Cached: the same dict on every call; do not modify it.

    Examples
    --------
    >>> from sklearn_icml26.datasets._base import read_registry
    >>> len(read_registry("cause_effect_baselines.txt"))
    7
    """
    import pooch

    registry = pooch.create(path=".", base_url="")  # a reader only: nothing is fetched
    with resources.files(__package__).joinpath("registry", name).open(encoding="utf-8") as f:
        registry.load_registry(f)
    return {path: digest.removeprefix("sha256:") for path, digest in registry.registry.items()}


def _missing_parents(path, stop):
    """The folders above ``path`` (up to, not including, ``stop``) that do not exist, top first."""
    parents = []
    for parent in path.parents:
        if parent == stop or parent.exists():
            break
        parents.append(parent)
    return parents[::-1]


def fetch_files(dataset, files, data_home=None, download_if_missing=True):
    """Make sure the files of a dataset are in the data home, downloading the missing ones.

    Files already in ``<data_home>/<dataset>/`` are used as they are. Missing files are
    downloaded with :mod:`pooch` from their original public address and checked against their
    pinned SHA-256.

    Parameters
    ----------
    dataset : str
        Name of the dataset folder inside the data home.
    files : sequence of RemoteFile
        The files the loader needs.
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    download_if_missing : bool, default=True
        If False, raise instead of downloading.

    Returns
    -------
    folder : pathlib.Path
        ``<data_home>/<dataset>``, holding every requested file.

    Raises
    ------
    OSError
        If files are missing and cannot be downloaded (no address, no network,
        ``download_if_missing=False`` or a checksum mismatch). The message names the missing
        files, the data home, and how to provide them.
    """
    folder = get_data_home(data_home) / dataset
    missing = [f for f in files if not (folder / f.path).is_file()]
    if not missing:
        return folder

    def _fail(reason):
        shown = 5  # a dataset can have hundreds of files: name a few, count the rest
        names = ", ".join(f.path for f in missing[:shown])
        if len(missing) > shown:
            names += f" and {len(missing) - shown} more"
        sources = [f"{f.path} <- {f.url}" for f in missing if f.url][:2]
        hint = f" Sources, e.g.: {'; '.join(sources)}." if sources else ""
        return OSError(
            f"Dataset {dataset!r}: missing file(s) {names} in {folder} ({reason}). Copy them "
            f"there, or point data_home / the {DATA_HOME_ENV} environment variable at a folder "
            f"that holds {dataset}/.{hint}"
        )

    if not download_if_missing:
        raise _fail("download_if_missing=False")
    no_url = [f.path for f in missing if f.url is None]
    if no_url:
        raise _fail(f"no public download address for {len(no_url)} of them")

    import pooch

    # folders made for this download only; removed again if it fails, so that no empty folder
    # is left to look like a dataset
    created = []
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # pooch's own "Downloading data from ..." would repeat our line
    try:
        for f in missing:
            target = folder / f.path
            created.extend(_missing_parents(target, stop=folder.parent))
            target.parent.mkdir(parents=True, exist_ok=True)
            print(f"Downloading {f.url} to {target}")
            try:
                pooch.retrieve(
                    f.url,
                    known_hash=f"sha256:{f.sha256}" if f.sha256 else None,
                    fname=target.name,
                    path=target.parent,
                    progressbar=False,
                )
            except BaseException as exc:  # network, HTTP, checksum; also an interrupt
                for path in reversed(created):  # deepest first; only the ones still empty
                    if path.is_dir() and not any(path.iterdir()):
                        path.rmdir()
                if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit
                    raise
                # the first line names the problem (no network, HTTP status, checksum); the
                # chained exception keeps the whole story
                first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                if len(first_line) > 200:
                    first_line = first_line[:197] + "..."
                raise _fail(f"download of {f.path} failed: {type(exc).__name__}"
                            + (f": {first_line}" if first_line else "")) from exc
    finally:
        logger.setLevel(level)
    return folder
