"""make_memory_stream: planted facts among distractors, for streaming-memory tests."""

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_random_state

__all__ = ["make_memory_stream"]

_NAMES = """Anna Ben Carla David Elena Felix Greta Hugo Irene Jonas Kira Liam Maya Nico Olga Pablo
Quinn Rosa Sami Tara Umar Vera Walt Xenia Yusuf Zoe Aaron Bella Caleb Daria Emil Fiona Gavin
Hanna Ivan Julia Kevin Lena Marco Nadia Oscar Petra Rafael Sofia Tomas Ursula Victor Wanda Xavier
Yara Zane Alma Bruno Clara Dmitri Esther Franco Gloria Henrik Ingrid""".split()
_OBJECTS = """violin kayak lantern telescope compass typewriter banjo chessboard hammock microscope
accordion backpack bicycle camera drone easel flute globe harp kettle ladder mandolin notebook
oboe paddle quilt radio saxophone tripod ukulele vase wagon xylophone yoyo zither anchor bugle
cello drum fiddle gong harmonica inkwell jukebox kite loom metronome net oar piano quiver rake
sled tuba umbrella whistle sextant trombone sundial bellows""".split()
_PLACES = """attic garage cellar kitchen barn shed pantry studio hallway closet library workshop
basement porch garden greenhouse loft bedroom bathroom office cabin boathouse balcony veranda
courtyard stable chapel tower vault gallery lobby nursery parlor study terrace yard orchard
warehouse bunker cottage dock hangar kiosk mill observatory pavilion quarry ranch salon tavern
theater villa workroom alcove annex bakery canteen depot forge granary""".split()


def make_memory_stream(n_facts=50, n_distractors=500, n_sessions=10, random_state=None):
    """A shuffled stream of planted facts among distractors, each fact with its question.

    Fact i is ``"{name_i} keeps a {object_i} in the {place_i}."`` with distinct names and
    objects; a distractor is ``"{name} likes {object}s near the {place}."`` whose (name,
    object) pair is no fact's. Rows are shuffled and cut into ``n_sessions`` consecutive
    sessions; question i is ``"Where does {name_i} keep the {object_i}?"`` and is asked after
    its fact. The fact is then the only row sharing both its name and its object with the
    question, so every reasonable retriever ranks it first.

    Parameters
    ----------
    n_facts : int, default=50
        Planted facts (at most 60).
    n_distractors : int, default=500
        Distractor rows.
    n_sessions : int, default=10
        Consecutive sessions the stream is cut into.
    random_state : int, RandomState instance or None, default=None
        Seed of the distractors and the shuffle.

    Returns
    -------
    stream : Bunch
        ``texts`` (list of str), ``sessions`` (ndarray of int), ``covers`` (ndarray of int,
        the row index), ``queries`` (list of str), ``query_cover`` (ndarray of int: the row
        holding each fact), ``query_after`` (= ``query_cover``: the earliest row after which
        the question may be asked).

    Raises
    ------
    ValueError
        If ``n_facts`` is not in [1, 60] or ``n_sessions`` < 1.

    Examples
    --------
    >>> from sklearn_icml26.datasets import make_memory_stream
    >>> s = make_memory_stream(n_facts=3, n_distractors=5, n_sessions=2, random_state=0)
    >>> len(s.texts), len(s.queries)
    (8, 3)
    """
    if not 1 <= n_facts <= len(_NAMES):
        raise ValueError(f"n_facts must be in [1, {len(_NAMES)}]; got {n_facts}")
    if n_sessions < 1 or n_distractors < 0:
        raise ValueError(f"n_sessions must be >= 1 and n_distractors >= 0; got {n_sessions}, "
                         f"{n_distractors}")
    rng = check_random_state(random_state)
    facts = [(i, i, i) for i in range(n_facts)]
    rows = [f"{_NAMES[a]} keeps a {_OBJECTS[b]} in the {_PLACES[c]}." for a, b, c in facts]
    fact_pairs = {(a, b) for a, b, _ in facts}
    for _ in range(n_distractors):
        while True:
            a, b, c = (int(rng.randint(len(_NAMES))), int(rng.randint(len(_OBJECTS))),
                       int(rng.randint(len(_PLACES))))
            if (a, b) not in fact_pairs:
                break
        rows.append(f"{_NAMES[a]} likes {_OBJECTS[b]}s near the {_PLACES[c]}.")
    order = rng.permutation(len(rows))
    texts = [rows[i] for i in order]
    position = np.empty(len(rows), dtype=np.int64)
    position[order] = np.arange(len(rows))
    sessions = (np.arange(len(rows)) * n_sessions) // max(len(rows), 1)
    queries = [f"Where does {_NAMES[i]} keep the {_OBJECTS[i]}?" for i in range(n_facts)]
    cover = position[:n_facts]
    return Bunch(texts=texts, sessions=sessions.astype(np.int64), covers=np.arange(len(rows)),
                 queries=queries, query_cover=cover.copy(), query_after=cover.copy())
