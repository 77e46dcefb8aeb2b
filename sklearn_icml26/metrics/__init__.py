"""Field metrics (Chamfer distance, dendrogram purity, weighted accuracy, ...)."""

__all__ = []
