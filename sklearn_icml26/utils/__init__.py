"""Utilities shared by the estimators: discovery, versions, progress bars."""

from ._progress import progress_bar
from ._show_versions import show_versions
from .discovery import all_estimators

__all__ = ["all_estimators", "progress_bar", "show_versions"]
