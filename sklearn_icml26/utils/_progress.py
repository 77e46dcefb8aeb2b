"""Progress bars shared by long fits, demos and benchmarks (tqdm)."""

import re
import sys

from tqdm.auto import tqdm

# cursor moves tqdm writes to redraw nested bars in place ("\x1b[A" and the like)
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BAR = re.compile(r"\|[^|]*\|")  # the bar between the two pipes of tqdm's default format

# outside a terminal a bar is redrawn at most this often (seconds): one line per redraw in a log
_LOG_INTERVAL = 30.0


class _LineWriter:
    """A stream for tqdm outside a terminal: every redraw becomes one plain line.

    tqdm redraws its bar in place with carriage returns (and, for nested bars, cursor-up escape
    codes), which a log file keeps as one long line full of ``\\r`` and stray ``[A``; here the
    codes are dropped and each redraw is written as its own line instead.
    """

    def __init__(self, stream):
        self.stream = stream
        self._last = None

    def write(self, text):
        text = _ANSI_ESCAPE.sub("", text).replace("\r", "").rstrip("\n")
        # closing redraws the final state once more (only its timing differs): a log needs it
        # once. The state is the text before the timing, without the bar itself, whose width
        # follows the length of the timing text (a rate of 9.9 it/s or of 10.0 it/s)
        state = _BAR.sub("|", text.rsplit("[", 1)[0])
        if text.strip() and state != self._last:
            self.stream.write(text + "\n")
            self._last = state

    def flush(self):
        getattr(self.stream, "flush", lambda: None)()


# inside Jupyter tqdm.auto is the notebook widget, which does not write to a stream
_NOTEBOOK = any(cls.__module__ == "tqdm.notebook" for cls in tqdm.__mro__)


def _is_terminal(stream):
    return bool(getattr(stream, "isatty", lambda: False)())


def progress_bar(iterable=None, *, verbose=1, **kwargs):
    """Wrap ``iterable`` in a tqdm progress bar shown when ``verbose`` is positive.

    In a terminal the bar redraws in place. Written to a log file (or any stream that is not a
    terminal) it prints plain ASCII lines, one per redraw and at most one every 30 seconds
    (plus the final state), so logs stay readable.

    Parameters
    ----------
    iterable : iterable, default=None
        What to iterate over; ``None`` gives a manual bar (``update``).
    verbose : int or bool, default=1
        Show the bar when truthy; otherwise the bar is disabled and costs nothing.
    **kwargs : dict
        Passed to :class:`tqdm.tqdm` (``total``, ``desc``, ``unit``, ``file``, ...).

    Returns
    -------
    bar : tqdm.tqdm
        The (possibly disabled) progress bar.

    Examples
    --------
    >>> from sklearn_icml26.utils._progress import progress_bar
    >>> sum(progress_bar(range(3), verbose=0))
    3
    """
    stream = kwargs.get("file", sys.stderr)
    if verbose and not _NOTEBOOK and not _is_terminal(stream):
        kwargs["file"] = _LineWriter(stream)
        kwargs.setdefault("mininterval", _LOG_INTERVAL)
        kwargs.setdefault("ascii", True)
        kwargs.setdefault("ncols", 100)
    return tqdm(iterable, disable=not verbose, **kwargs)
