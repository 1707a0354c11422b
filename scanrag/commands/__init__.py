"""Built-in sub-commands of the ``scanrag`` CLI, registered via entry points."""
