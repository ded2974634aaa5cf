"""Adversarial submission: a file that defines no `add` at all."""

import tilelang  # noqa: F401
