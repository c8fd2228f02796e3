//! Python `limits` from PyPI: not yet profiled (see docs/profiles.md).
