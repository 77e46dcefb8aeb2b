"""Real datasets (``load_*``, read from the data home) and generators (``make_*``).

Every loader reads ``<data_home>/<dataset>/`` (see :func:`get_data_home`), downloads missing
files from their original public source with a pinned SHA-256 when it can, and returns a
:class:`sklearn.utils.Bunch` with ``data``, ``target`` where it exists, ``frame`` and ``DESCR``
(source and citation). :func:`clear_data_home` empties the data home.
"""

from ._base import clear_data_home, get_data_home
from ._cause_effect import (
    load_cause_effect_baseline_scores,
    load_cause_effect_pairs,
    make_lsnm_pairs,
    make_skewed_lsnm_dag,
    make_skewed_lsnm_pair,
)
from ._edit_stream import make_edit_stream
from ._ese import (
    load_ese_covid_victoria,
    load_ese_exchange_rates,
    load_ese_synthetic,
    load_seasonal_panel,
    make_interacting_systems,
)
from ._holder import make_holder_regression
from ._images import make_bar_images, make_digits_on_canvas, make_local_pattern_images
from ._locomo import load_locomo
from ._longitudinal import load_btheb, load_respiratory, make_longitudinal_rct
from ._memory_stream import make_memory_stream
from ._mpf import load_mpf_shape, make_layered_sheets, make_thin_shell
from ._offline_rl import make_offline_rl_dataset
from ._pde import make_pde_collocation
from ._reading_episodes import make_locomo_episodes, make_planted_episodes
from ._safety import load_multilingual_safety
from ._sensor_streams import load_air_quality, load_basic_motions, make_sensor_outages
from ._single_cell import (
    load_krumsiek11,
    load_paul15,
    make_branching_trajectory,
    make_hierarchical_blobs,
)

__all__ = [
    "clear_data_home",
    "get_data_home",
    "load_air_quality",
    "load_basic_motions",
    "load_btheb",
    "load_cause_effect_baseline_scores",
    "load_cause_effect_pairs",
    "load_ese_covid_victoria",
    "load_ese_exchange_rates",
    "load_ese_synthetic",
    "load_krumsiek11",
    "load_locomo",
    "load_mpf_shape",
    "load_multilingual_safety",
    "load_paul15",
    "load_respiratory",
    "load_seasonal_panel",
    "make_bar_images",
    "make_branching_trajectory",
    "make_digits_on_canvas",
    "make_edit_stream",
    "make_hierarchical_blobs",
    "make_holder_regression",
    "make_interacting_systems",
    "make_layered_sheets",
    "make_local_pattern_images",
    "make_locomo_episodes",
    "make_longitudinal_rct",
    "make_lsnm_pairs",
    "make_memory_stream",
    "make_offline_rl_dataset",
    "make_pde_collocation",
    "make_planted_episodes",
    "make_sensor_outages",
    "make_skewed_lsnm_dag",
    "make_skewed_lsnm_pair",
    "make_thin_shell",
]
