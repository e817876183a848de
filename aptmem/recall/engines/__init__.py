"""The engines of the recall index, behind one Protocol (:class:`~aptmem.recall.engines.base.Engine`),
built by one registry: :data:`ENGINES` maps a name to a factory.

=================  ====================================================  =========================
name               what                                                  needs
=================  ====================================================  =========================
``fts``            SQLite FTS5, our analysis (words, identifiers, CJK    nothing (the default)
                   bigrams), relation words expanded by a shipped
                   bilingual lexicon, BM25
``fts_plain``      ``fts``'s table, no lexicon expansion                 nothing
``fts_untyped``    ``fts`` without its ranking of the question's terms   nothing
                   near a value of the type it asks for
``fts_trigram``    SQLite FTS5 ``trigram`` tokenizer, BM25               nothing
``wordllama``      WordLlama 256-d embeddings, exact cosine              extra ``recall-embed``
``use``            USE multilingual v3 512-d embeddings, exact cosine    extra ``recall-multilingual``
``fts_xl``         ``fts`` + query translation zh<->en (CC-CEDICT),      extra ``recall-crosslingual``
                   the two rankings fused (RRF)
``hybrid``         ``fts``, its best 10 reordered by WordLlama's cosine  extra ``recall-embed``
                   of each record's closest line or sentence
``hybrid_union``   ``fts``'s candidates and ``wordllama``'s 10 nearest,  extra ``recall-embed``
                   fused (RRF) before ``fts``'s coverage rerank
``hybrid_rrf``     ``fts`` + ``wordllama``, reciprocal rank fusion       extra ``recall-embed``
``hybrid_use``     ``fts`` + ``use``, reciprocal rank fusion             extra ``recall-multilingual``
=================  ====================================================  =========================
"""

from __future__ import annotations

from collections.abc import Callable

from aptmem.errors import UnknownRecallEngine
from aptmem.recall.engines.base import Engine, Filter, InstallSize, install_size
from aptmem.recall.engines.crosslingual import CrossLingualEngine
from aptmem.recall.engines.dense_rerank import DenseRerankEngine
from aptmem.recall.engines.embed import UseEmbedder, WordLlamaEmbedder, embedding_engine
from aptmem.recall.engines.fts import fts_bigram, fts_plain, fts_trigram, fts_untyped
from aptmem.recall.engines.hybrid import HybridEngine, UnionEngine

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Resolve", "Engine", "Filter", "InstallSize", "get_engine", "install_size"]

DEFAULT_ENGINE = "fts"

#: A factory gets ``resolve``, which returns the (shared) engine of a name: a composite engine
#: is built from the very engines the index maintains, so their tables and caches are shared.
Resolve = Callable[[str], Engine]

ENGINES: dict[str, Callable[[Resolve], Engine]] = {
    "fts": lambda resolve: fts_bigram(),
    "fts_plain": lambda resolve: fts_plain(),
    "fts_untyped": lambda resolve: fts_untyped(),
    "fts_trigram": lambda resolve: fts_trigram(),
    "fts_xl": lambda resolve: CrossLingualEngine("fts_xl", resolve("fts")),
    "wordllama": lambda resolve: embedding_engine(WordLlamaEmbedder),
    "use": lambda resolve: embedding_engine(UseEmbedder),
    "hybrid": lambda resolve: DenseRerankEngine("hybrid", resolve("fts"), WordLlamaEmbedder, WordLlamaEmbedder.requires,
                                                WordLlamaEmbedder.extra),
    "hybrid_union": lambda resolve: UnionEngine("hybrid_union", resolve("fts"), resolve("wordllama")),
    "hybrid_rrf": lambda resolve: HybridEngine("hybrid_rrf", [resolve("fts"), resolve("wordllama")]),
    "hybrid_use": lambda resolve: HybridEngine("hybrid_use", [resolve("fts"), resolve("use")]),
}


def get_engine(name: str, resolve: Resolve | None = None) -> Engine:
    """Build the engine registered as ``name``; :class:`UnknownRecallEngine` if there is none.

    ``resolve`` gives the parts of a composite engine (default: new ones from this registry).
    """
    try:
        factory = ENGINES[name]
    except KeyError:
        raise UnknownRecallEngine(name, tuple(ENGINES)) from None
    return factory(resolve or get_engine)
