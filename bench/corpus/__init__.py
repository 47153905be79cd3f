"""Deterministic benchmark corpus: a memoryui workspace repository with realistic history.

Benchmarks and tests need a workspace that looks like months of agents writing memory (daily
logs, curated MEMORY.md files, notes, world topics, a few human corrections), with git history in
memoryui's exact commit format. The same preset and seed always give byte-identical files and the
same commit shas, so figures from different runs compare like for like.

The history is streamed into one `git fast-import` process: the large preset (about 20k files and
20k commits) would take far too long with one `git commit` per write.

The ``imported`` variant is the same history without what a memoryui-written workspace has
(no commit-graph, no memoryui state under ``.git``): a team's existing repository as it would
arrive, so the benchmarks show whether memoryui gives such a workspace what git needs.

Usage: ``python -m bench.corpus --preset small|large|huge --dir DIR [--imported] [--force]
[--seed N]``
"""

from __future__ import annotations

from bench.corpus.build import build_corpus, main
from bench.corpus.names import handbook_path, paraphrase_facts, scope_names, world_topic_names
from bench.corpus.presets import END_DATE, PRESETS, Preset
from bench.corpus.vocabulary import (
    CAUSES,
    CUSTOMERS,
    JOBS,
    NAMED_CODES,
    PEOPLE,
    REGIONS,
    SERVICES,
    SYMPTOMS,
    VENDORS,
)

__all__ = [
    "CAUSES", "CUSTOMERS", "END_DATE", "JOBS", "NAMED_CODES", "PEOPLE", "PRESETS", "REGIONS",
    "SERVICES", "SYMPTOMS", "VENDORS", "Preset", "build_corpus", "handbook_path", "main",
    "paraphrase_facts", "scope_names", "world_topic_names",
]
