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
