"""causal_discovery estimators (see DESIGN.md)."""

__all__ = []
