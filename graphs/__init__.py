"""Strategy graphs: wiring and routing of the nodes in ``agents``."""
