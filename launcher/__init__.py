"""UNO Attack launcher controller: firing schedule, closed-loop dispensing and a live page for the table."""

__version__ = "0.1.0"
