"""The shared judge-and-score stage. Depends only on ``scanrag`` schemas and the gateway.

Each judge's prompt sits beside the scorer that sends it: ``<family>/prompt.py`` (DocScope's
three judges: ``docscope/answer_prompt.py``, ``fact_prompt.py``, ``region_prompt.py``). A
prompt module exposes its ``PROMPT_HASH`` (a ``scanrag.hashing.stable_hash`` of its template
text, so any wording change changes the hash recorded with every judgment) and a function
building the chat messages.
"""
