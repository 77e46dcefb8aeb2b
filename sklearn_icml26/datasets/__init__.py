"""Real datasets (``load_*``, read from the data home) and generators (``make_*``).

Every loader reads ``<data_home>/<dataset>/`` (see :func:`get_data_home`), downloads missing
files from their original public source with a pinned SHA-256 when it can, and returns a
:class:`sklearn.utils.Bunch` with ``data``, ``target`` where it exists, ``frame`` and ``DESCR``
(source and citation).
"""

from ._base import RemoteFile, clear_data_home, fetch_files, get_data_home

__all__ = ["RemoteFile", "clear_data_home", "fetch_files", "get_data_home"]

from ._mpf import MPF_SHAPES, load_mpf_shape, make_layered_sheets, make_thin_shell  # noqa: E402

__all__ += ["MPF_SHAPES", "load_mpf_shape", "make_layered_sheets", "make_thin_shell"]

from ._ese import (  # noqa: E402
    load_ese_covid_victoria,
    load_ese_exchange_rates,
    load_ese_synthetic,
    make_interacting_systems,
)

__all__ += ["load_ese_covid_victoria", "load_ese_exchange_rates", "load_ese_synthetic",
            "make_interacting_systems"]

from ._longitudinal import load_btheb, load_respiratory, make_longitudinal_rct  # noqa: E402

__all__ += ["load_btheb", "load_respiratory", "make_longitudinal_rct"]

from ._cause_effect import (  # noqa: E402
    load_cause_effect_baseline_scores,
    load_cause_effect_pairs,
    make_lsnm_pairs,
    make_skewed_lsnm_dag,
    make_skewed_lsnm_pair,
)

__all__ += ["load_cause_effect_baseline_scores", "load_cause_effect_pairs", "make_lsnm_pairs",
            "make_skewed_lsnm_dag", "make_skewed_lsnm_pair"]

from ._single_cell import (  # noqa: E402
    load_krumsiek11,
    load_paul15,
    make_branching_trajectory,
    make_hierarchical_blobs,
)

__all__ += ["load_krumsiek11", "load_paul15", "make_branching_trajectory",
            "make_hierarchical_blobs"]

from ._holder import make_holder_regression  # noqa: E402

__all__ += ["make_holder_regression"]

from ._offline_rl import (  # noqa: E402
    OFFLINE_RL_ENVS,
    evaluate_offline_rl_policy,
    make_offline_rl_dataset,
)

__all__ += ["OFFLINE_RL_ENVS", "evaluate_offline_rl_policy", "make_offline_rl_dataset"]

from ._pde import make_pde_collocation  # noqa: E402

__all__ += ["make_pde_collocation"]

from ._edit_stream import make_edit_stream  # noqa: E402

__all__ += ["make_edit_stream"]

from ._images import (  # noqa: E402
    make_bar_images,
    make_digits_on_canvas,
    make_local_pattern_images,
)

__all__ += ["make_bar_images", "make_digits_on_canvas", "make_local_pattern_images"]

from ._locomo import LOCOMO_CATEGORY_NAMES, load_locomo  # noqa: E402

__all__ += ["LOCOMO_CATEGORY_NAMES", "load_locomo"]

from ._memory_stream import make_memory_stream  # noqa: E402

__all__ += ["make_memory_stream"]

from ._sensor_streams import (  # noqa: E402
    load_air_quality,
    load_basic_motions,
    make_sensor_outages,
)

__all__ += ["load_air_quality", "load_basic_motions", "make_sensor_outages"]

from ._safety import load_multilingual_safety  # noqa: E402

__all__ += ["load_multilingual_safety"]
