"""The game at the table as the phones see it: the current game, declarations, options, requests, views, the history,
summaries and exports."""
