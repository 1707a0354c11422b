"""The evaluation commands of the ``scanrag`` CLI, one module each, registered through the
``scanrag.commands`` entry points: ``score``, ``report``, ``export``, ``agreement``,
``retrieve eval`` and ``import``."""
