"""surface estimators (see DESIGN.md)."""

__all__ = []
