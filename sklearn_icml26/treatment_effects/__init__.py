"""treatment_effects estimators (see DESIGN.md)."""

__all__ = []
