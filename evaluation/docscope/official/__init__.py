"""DocScope's official profile: what its released scorers read and print, reimplemented.

:mod:`.view` reads a trajectory (or an imported ``infer.jsonl`` record) as the released
scorers do and reads their judges' replies; :mod:`.parser` is our reimplementation of the
released reply parser; :mod:`.fact_prompt` is our fact-judge prompt under the released
policy; :mod:`.population` is the population an ``infer.jsonl`` import scores;
:mod:`.summary` prints the blocks ``summarize_eval.py`` prints.
"""
