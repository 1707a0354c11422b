"""Judge prompts, one module per judge. Each module exposes ``PROMPT_HASH`` (a
``scanrag.hashing.stable_hash`` of its template text, so any wording change changes the hash
recorded with every judgment) and a function building the chat messages."""
