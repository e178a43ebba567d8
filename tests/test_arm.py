"""The board's arm on its own (launcher/press/arm.py), against a board that records what it is asked: when it is armed,
that the host takes the arm back before it decides, and that a fire told more than once is one press.
tests/test_reflex.py runs the same protocol end to end (controller, serial link, firmware)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from launcher.fairplay.schedule import Outcome
from launcher.hardware.base import DispenseResult, FireJob
from launcher.press.arm import BoardArm

NEXT = Outcome(press=4, cards=2, tension=0.5)


class Fire:
    """A fire the board made from its arm; the arm only tells one from another."""

    def wait(self) -> DispenseResult:
        raise AssertionError("the arm never waits for a fire")


class Board:
    """A board with a reflex: records its arms; `disarm()` answers `fired_first` (a fire it made before it gave the
    arm back), after `meanwhile()` (what the link's thread does while the host waits for the answer)."""

    def __init__(self) -> None:
        self.when_reflex: Callable[[FireJob], None] | None = None
        self.arms: list[int] = []
        self.disarms = 0
        self.fired_first: FireJob | None = None
        self.meanwhile: Callable[[], None] = lambda: None

    def arm(self, cards: int) -> bool:
        self.arms.append(cards)
        return True

    def disarm(self) -> FireJob | None:
        self.disarms += 1
        self.meanwhile()
        return self.fired_first


class Host:
    """The controller's side: what fires next, and the presses claimed and taken (and whether the lock was held)."""

    def __init__(self, board: Board | None) -> None:
        self.lock = threading.Lock()
        self.next: tuple[Outcome, int] | None = (NEXT, 2)
        self.claimed: list[tuple[Outcome | None, FireJob, bool]] = []
        self.taken: list[tuple[str, bool]] = []
        self.arm = BoardArm(board, lock=self.lock, next_press=lambda: self.next, claim=self.claim, take=self.take)

    def claim(self, armed: Outcome | None, job: FireJob) -> str:
        self.claimed.append((armed, job, self.lock.locked()))
        return f"press {len(self.claimed)}"

    def take(self, press: str) -> None:
        self.taken.append((press, self.lock.locked()))

    def refresh(self) -> None:
        with self.lock:
            self.arm.refresh()


def test_the_board_is_armed_with_the_next_fire_and_never_while_paused() -> None:
    board = Board()
    host = Host(board)
    assert board.when_reflex == host.arm.fired
    host.refresh()
    assert board.arms == [2] and host.arm.armed is NEXT
    with host.arm.paused():
        assert board.disarms == 1 and host.arm.armed is None
        host.refresh()
        assert board.arms == [2]
    assert board.arms == [2, 2] and host.arm.armed is NEXT  # armed again at the end
    host.next = None
    with host.arm.deciding():
        host.arm.refresh()  # a press that does not fire at once: no arm
    assert board.arms == [2, 2] and host.arm.armed is None


def test_a_fire_told_twice_is_claimed_once_as_the_press_it_was_armed_for() -> None:
    board = Board()
    host = Host(board)
    host.refresh()
    fire = Fire()
    host.arm.fired(fire)
    host.arm.fired(fire)
    assert host.claimed == [(NEXT, fire, True)]
    assert host.taken == [("press 1", False)]  # claimed with the lock held, taken without it
    assert host.arm.armed is None


def test_deciding_takes_the_arm_back_first_and_a_fire_told_by_the_link_and_the_answer_is_one_press() -> None:
    board = Board()
    host = Host(board)
    host.refresh()
    fire = Fire()
    board.fired_first = fire
    board.meanwhile = lambda: host.arm.fired(fire)  # the link tells of it too, while the host waits for the answer
    with host.arm.deciding():
        assert host.lock.locked() and host.arm.armed is None and board.disarms == 1
        taken_inside = list(host.taken)
    assert host.claimed == [(NEXT, fire, True)]  # one press, told by the link and by the disarm's answer
    assert taken_inside == [("press 1", False)] and host.taken == taken_inside


def test_a_fire_the_disarm_tells_of_is_taken_only_once_the_lock_is_let_go() -> None:
    board = Board()
    host = Host(board)
    host.refresh()
    board.fired_first = fire = Fire()
    with host.arm.deciding():
        assert host.claimed == [(NEXT, fire, True)] and host.taken == []
    assert host.taken == [("press 1", False)]


def test_a_board_greeted_again_holds_no_arm_and_is_not_asked_for_it_back() -> None:
    board = Board()
    host = Host(board)
    host.refresh()
    with host.lock:
        host.arm.forget()
    with host.arm.deciding():
        pass
    assert board.disarms == 0


def test_without_a_reflex_the_arm_is_only_the_lock() -> None:
    host = Host(None)
    host.refresh()
    with host.arm.deciding():
        assert host.lock.locked()
    assert host.arm.armed is None and host.claimed == []
