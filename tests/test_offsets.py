"""Offsets with lanes: records a caller keeps in order (the mirror's streams) hold the commit
point without a call per record, and still appear in the commit's metadata."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from kheaders._offsets import Offsets, decode_done

TP = ("orders", 0)


class Lane:
    """Offsets settled oldest first, as a stream of copies to one partition is."""

    def __init__(self) -> None:
        self.queue: deque[int] = deque()

    def oldest(self) -> int | None:
        return self.queue[0] if self.queue else None

    def unsettled(self) -> Iterator[int]:
        return iter(self.queue)

    def __len__(self) -> int:
        return len(self.queue)


def read(offsets: Offsets, lanes: list[Lane], count: int) -> None:
    """Read ``count`` records, putting record i into lane i % len(lanes)."""
    for offset in range(count):
        offsets.high[TP] = offset + 1
        lanes[offset % len(lanes)].queue.append(offset)


def test_a_lane_holds_the_commit_point_at_its_oldest_record() -> None:
    offsets = Offsets()
    lane = Lane()
    offsets.add_lane(TP, lane)
    read(offsets, [lane], 5)
    assert [(p.offset, p.metadata) for p in offsets.to_commit()] == [(0, None)]
    assert offsets.open_count() == 5
    lane.queue.popleft()
    lane.queue.popleft()
    assert [p.offset for p in offsets.to_commit()] == [2]
    lane.queue.clear()
    assert [(p.offset, p.metadata) for p in offsets.to_commit()] == [(5, None)]
    assert offsets.open_count() == 0


def test_records_settled_beyond_another_lane_s_oldest_travel_in_the_metadata() -> None:
    offsets = Offsets()
    even, odd = Lane(), Lane()
    offsets.add_lane(TP, even)
    offsets.add_lane(TP, odd)
    read(offsets, [even, odd], 6)  # even: 0 2 4, odd: 1 3 5
    odd.queue.clear()  # 1, 3 and 5 settled; 0, 2 and 4 not
    (point,) = offsets.to_commit()
    assert point.offset == 0
    assert decode_done(point.offset, point.metadata) == ([0, 2, 4], 6)


def test_lanes_and_records_started_one_by_one_make_one_commit_point() -> None:
    offsets = Offsets()
    lane = Lane()
    offsets.add_lane(TP, lane)
    read(offsets, [lane], 4)
    lane.queue.clear()
    offsets.start(TP, 1)  # a copy sent again after an error, tracked on its own
    (point,) = offsets.to_commit()
    assert point.offset == 1
    offsets.settle(TP, 1)
    assert [p.offset for p in offsets.to_commit()] == [4]


def test_a_forgotten_partition_drops_its_lanes() -> None:
    offsets = Offsets()
    lane = Lane()
    offsets.add_lane(TP, lane)
    read(offsets, [lane], 3)
    offsets.forget({TP})
    assert offsets.to_commit() == []
    assert offsets.open_count() == 0


def point(offsets: Offsets) -> tuple[int, str | None]:
    """The one commit point ``offsets`` hands out for TP now."""
    (tp,) = offsets.to_commit()
    return tp.offset, tp.metadata


def test_records_settled_in_order_commit_past_the_last_with_no_metadata() -> None:
    offsets = Offsets()
    for offset in range(5):
        offsets.settled_now(TP, offset)
    assert point(offsets) == (5, None)
    assert offsets.open_count() == 0


def test_a_record_started_among_in_order_ones_holds_the_point_then_lets_it_go() -> None:
    offsets = Offsets()
    offsets.settled_now(TP, 0)
    offsets.settled_now(TP, 1)
    offsets.start(TP, 2)  # out of order from here: its outcome comes later
    offsets.settled_now(TP, 3)
    offsets.settled_now(TP, 4)
    assert point(offsets) == (2, "kheaders.done/1:1+2")  # never past the record in hand
    offsets.settle(TP, 2)
    assert point(offsets) == (5, None)
    offsets.settled_now(TP, 5)  # in order again
    assert point(offsets) == (6, None)
    assert offsets.open_count() == 0


def test_records_started_then_settled_newest_first_commit_only_below_the_oldest_open() -> None:
    offsets = Offsets()
    for offset in range(3):
        offsets.start(TP, offset)
    offsets.settle(TP, 2)
    offsets.settle(TP, 0)
    assert point(offsets) == (1, "kheaders.done/1:1+1")
    offsets.settle(TP, 1)
    assert point(offsets) == (3, None)
    offsets.settled_now(TP, 3)
    assert point(offsets) == (4, None)
