"""Access: who may act at the table (PINs, sessions, the doorbell, budgets) and the guarded server's connections, turns
and request bodies."""
