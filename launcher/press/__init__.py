"""The press path: the controller that decides and commands the dispenser, the board's arm, how a press ended, the
hopper, wear and care, aiming, the workbench."""
