"""Fair play: the firing schedule, its shuffles, seal-commit-reveal, the phones' mixing, the drand beacon, the shuffle
record and its checkers."""
