"""How far back the state may be read: the instants ``as_of_time`` may name."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent_memory.domain.errors import FailedPrecondition, FieldViolation, check

# How long the history behind as-of reads is kept unless the settings say otherwise.
DEFAULT_HISTORY = timedelta(days=90)
# The field every as-of read is asked through.
AS_OF_FIELD = "as_of_time"
# A clock of another replica may run a little ahead: an instant this far past ours is
# still the present.
CLOCK_SKEW = timedelta(seconds=5)


def check_as_of(as_of: datetime, *, now: datetime, kept: timedelta) -> None:
    """``as_of`` may be read: not in the future, and not before the history kept.

    Raises:
        InvalidArgument: ``as_of`` is in the future (reason ``IN_THE_FUTURE``).
        FailedPrecondition: the history of ``as_of`` is no longer kept (reason
            ``HISTORY_PRUNED``, with the oldest instant that may be read).
    """
    if as_of > now + CLOCK_SKEW:
        check(
            [
                FieldViolation(
                    AS_OF_FIELD,
                    f"{as_of.isoformat()} is in the future; the state of an instant "
                    "is read once it has passed",
                    "IN_THE_FUTURE",
                )
            ]
        )
    horizon = now - kept
    if as_of < horizon:
        raise FailedPrecondition(
            f"{AS_OF_FIELD} {as_of.isoformat()} is before the history kept, which "
            f"starts at {horizon.isoformat()} ({kept.days} days back; "
            "MEMORY_HISTORY_DAYS sets it)",
            reason="HISTORY_PRUNED",
            metadata={"oldest_kept": horizon.isoformat()},
        )
