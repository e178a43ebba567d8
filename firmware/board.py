"""The launcher's wiring on a Raspberry Pi Pico (RP2040), in GP numbers. Edit this file to match your build.

docs/FIRMWARE.md has the wiring table. Inputs use the RP2040's internal pull-ups and are active low.
"""

BUTTON = 14  # the big button, to GND (physical pin 19)
BEAM = 15  # IR break-beam receiver at the card exit, low while a card blocks the beam (pin 20)
LID = 13  # lid switch to GND, closed = low (pin 17); None if the launcher has no lid switch
HOPPER = None  # optional sensor under the deck, low while cards remain (e.g. 12, pin 16); None: not fitted
MOTOR_IN1 = 16  # H-bridge IN1, PWM: forward (pin 21)
MOTOR_IN2 = 17  # H-bridge IN2, PWM: reverse (pin 22); same PWM slice as IN1
LED = "LED"  # the on-board LED: lit while the host has armed the board

PWM_FREQ = 20000  # Hz: above hearing, and DRV8833 / TB6612FNG switch it cleanly
MAX_RUN_MS = 20000  # no FIRE may run the motor longer, whatever the host asks
WDT_MS = 1000  # a main loop that stalls this long resets the board, and a reset board holds the motor off
