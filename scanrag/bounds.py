"""The ceilings of every whole number a config or a flag sets (README, "Experiment config").

Plain integers with no imports, so a command can bound its flags while it registers
(``scanrag --help`` stays light); the config models declare their fields with
:data:`scanrag.counts.Count` and these bounds.
"""

# The ceilings (README, "Experiment config"): far above any real use, low enough that a typo
# (a run of extra zeros) is refused rather than obeyed.
SEED_MAX = 2**32 - 1
MAX_CONCURRENCY = 1_024  # items, or calls to one server, in flight
MAX_CONTEXT = 10_000_000  # tokens of a model's window or reply
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # a provider's sampling seed
MAX_ROWS = 100_000_000  # a dataset's limit
MAX_TOKENS_BUDGET = 10**12
MAX_PAGES = 100_000
MAX_IMAGES = 1_000
MAX_CHARS_PER_PAGE = 10_000_000
MAX_CPUS = 4_096
MAX_IN_FLIGHT = 100_000
MAX_RESTARTS = 100
MAX_RETRIES = 20
MAX_RESAMPLES = 1_000_000
