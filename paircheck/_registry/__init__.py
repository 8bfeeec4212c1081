"""The curated registry of documented target/draft pairs (data: ``registry/*.toml``).

The data lives in TOML so that adding a pair is a data change reviewed against its
source, not a code change. ``schema`` validates it, ``load`` loads and queries it,
``identity`` says which model a name, repo or path means, ``consult`` turns matches into
notes for a check (never part of the verdict), ``readme`` keeps the README table current.
"""
