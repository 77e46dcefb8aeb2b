"""Progress bars read well in a log file: plain lines, no carriage returns, not too many."""

import io

from sklearn_icml26.utils._progress import progress_bar


def test_log_file_gets_plain_lines_first_and_final_state():
    log = io.StringIO()  # not a terminal
    for _ in progress_bar(range(500), verbose=1, file=log, desc="fits"):
        pass
    text = log.getvalue()
    assert "\r" not in text and "\x1b[" not in text
    lines = text.splitlines()
    # redrawn at most every 30 s: a fast loop writes its start and its final state only
    assert len(lines) == 2
    assert lines[0].startswith("fits:   0%") and "500/500" in lines[-1]
    assert all(ord(c) < 128 for c in text)  # ASCII bar


def test_every_redraw_is_its_own_line_when_asked_often():
    log = io.StringIO()
    for _ in progress_bar(range(4), verbose=1, file=log, mininterval=0, miniters=1):
        pass
    counts = [line.split("|")[2].split()[0] for line in log.getvalue().splitlines()]
    assert counts == ["0/4", "1/4", "2/4", "3/4", "4/4"]  # the final state once, not twice


def test_nested_bars_write_no_cursor_codes_to_a_log():
    # an inner bar (a demo inside the demo runner) makes tqdm move the cursor up between the
    # bars; a log file must get plain lines only
    log = io.StringIO()
    for _ in progress_bar(range(2), verbose=1, file=log, desc="outer"):
        for _ in progress_bar(range(3), verbose=1, file=log, desc="inner", leave=False):
            pass
    text = log.getvalue()
    assert "\x1b" not in text and "[A" not in text
    lines = text.splitlines()
    assert lines and all(line.startswith(("outer:", "inner:")) for line in lines)


def test_terminal_keeps_tqdm_in_place_redraws():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    for _ in progress_bar(range(3), verbose=1, file=term, mininterval=0, miniters=1):
        pass
    assert "\r" in term.getvalue()


def test_verbose_0_writes_nothing():
    log = io.StringIO()
    assert sum(progress_bar(range(3), verbose=0, file=log)) == 3
    assert log.getvalue() == ""


def test_the_closing_redraw_is_dropped_whatever_the_bar_width():
    """tqdm sizes the bar from the length of the timing text, so the closing redraw of the
    final state can have another bar width than the last update: still written once."""
    from sklearn_icml26.utils._progress import _LineWriter

    log = io.StringIO()
    writer = _LineWriter(log)
    writer.write("\rfit: 100%|#########| 4/4 [00:00<00:00, 9.99it/s]")
    writer.write("\rfit: 100%|########| 4/4 [00:00<00:00, 10.0it/s]")
    assert log.getvalue().splitlines() == ["fit: 100%|#########| 4/4 [00:00<00:00, 9.99it/s]"]
