"""Baton: an approval-first terminal conductor for coding agents."""

__version__ = "0.1.0"
