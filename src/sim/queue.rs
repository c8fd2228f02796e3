//! The event queue: every source's next arrival and every event scheduled for later, in one
//! heap ordered by `(time, rank, tiebreak)`.
//!
//! At equal times, scheduled events (a delayed request's release) come before arrivals, since
//! they were decided earlier; scheduled events keep their scheduling order (a sequence number)
//! and arrivals their source order. Each source has at most one arrival queued, so its own
//! requests keep the order it produced them. Nothing depends on heap internals.

use crate::algorithms::KeyId;
use crate::time::Nanos;
use crate::traffic::Arrival;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// What happens at an event's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The next request of source `source` arrives.
    Arrival { source: u16 },
    /// A delayed request of `key` (from `source`) leaves the shaper's queue for the backend.
    Release { key: KeyId, source: u16 },
    /// A client retries a rejected request. `previous_sleep` is its last backoff sleep.
    Retry {
        arrival: Arrival,
        previous_sleep: Nanos,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: Nanos,
    pub kind: EventKind,
    /// Scheduled events before arrivals, at equal times.
    rank: u8,
    /// Sequence number of a scheduled event, source index of an arrival.
    tiebreak: u64,
}

impl Event {
    fn order(&self) -> (Nanos, u8, u64) {
        (self.time, self.rank, self.tiebreak)
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order().cmp(&other.order())
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Scheduling an event before the current time: a bug in a component, never silently accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("event scheduled at {at} ns, before the current time {now} ns")]
pub struct ScheduledInThePast {
    pub at: Nanos,
    pub now: Nanos,
}

/// The heap plus the earliest event held apart (`front`): a source whose next arrival is also the
/// next event (one busy source, the usual case) never goes through the heap.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// When set, earlier than every event in `heap` (orders are distinct: no ties).
    front: Option<Event>,
    heap: BinaryHeap<Reverse<Event>>,
    now: Nanos,
    seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            front: None,
            heap: BinaryHeap::with_capacity(n),
            now: 0,
            seq: 0,
        }
    }

    /// Queues the next arrival of `source`.
    pub fn push_arrival(&mut self, time: Nanos, source: u16) -> Result<(), ScheduledInThePast> {
        self.push(time, 1, source as u64, EventKind::Arrival { source })
    }

    /// Schedules an event for later (`time` may equal the current time).
    pub fn schedule(&mut self, time: Nanos, kind: EventKind) -> Result<(), ScheduledInThePast> {
        let seq = self.seq;
        self.seq += 1;
        self.push(time, 0, seq, kind)
    }

    fn push(
        &mut self,
        time: Nanos,
        rank: u8,
        tiebreak: u64,
        kind: EventKind,
    ) -> Result<(), ScheduledInThePast> {
        if time < self.now {
            return Err(ScheduledInThePast {
                at: time,
                now: self.now,
            });
        }
        let event = Event {
            time,
            kind,
            rank,
            tiebreak,
        };
        match self.front {
            Some(front) if event < front => {
                self.heap.push(Reverse(front));
                self.front = Some(event);
            }
            Some(_) => self.heap.push(Reverse(event)),
            None if self.heap.peek().is_none_or(|Reverse(top)| event < *top) => {
                self.front = Some(event)
            }
            None => self.heap.push(Reverse(event)),
        }
        Ok(())
    }

    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        match &self.front {
            Some(e) => Some(e.time),
            None => self.heap.peek().map(|Reverse(e)| e.time),
        }
    }

    /// Takes the next event and advances the current time to it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let event = match self.front.take() {
            Some(e) => e,
            None => self.heap.pop()?.0,
        };
        self.now = event.time;
        Some(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_order_scheduled_then_sources_in_order() {
        let mut q = EventQueue::default();
        q.push_arrival(10, 2).unwrap();
        q.push_arrival(10, 0).unwrap();
        q.schedule(10, EventKind::Release { key: 7, source: 1 })
            .unwrap();
        q.schedule(10, EventKind::Release { key: 8, source: 1 })
            .unwrap();
        q.push_arrival(5, 1).unwrap();
        let kinds: Vec<EventKind> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::Arrival { source: 1 },
                EventKind::Release { key: 7, source: 1 },
                EventKind::Release { key: 8, source: 1 },
                EventKind::Arrival { source: 0 },
                EventKind::Arrival { source: 2 },
            ]
        );
    }

    #[test]
    fn the_front_event_and_the_heap_pop_in_one_order() {
        let mut q = EventQueue::default();
        let mut popped = Vec::new();
        // Interleave pushes and pops so events move between the front slot and the heap.
        for (i, t) in [30u64, 10, 20, 10, 40, 5].into_iter().enumerate() {
            q.push_arrival(t.max(q.now), i as u16).unwrap();
            if i % 2 == 1 {
                popped.push(q.pop().unwrap().order());
            }
        }
        while let Some(e) = q.pop() {
            popped.push(e.order());
        }
        // Pushed (30,0) (10,1) | pop (10,1) | (20,2) (10,3) | pop (10,3) | (40,4) (10,5) | pop.
        assert_eq!(
            popped,
            [
                (10, 1, 1),
                (10, 1, 3),
                (10, 1, 5),
                (20, 1, 2),
                (30, 1, 0),
                (40, 1, 4)
            ]
        );
    }

    #[test]
    fn refuses_the_past() {
        let mut q = EventQueue::default();
        q.push_arrival(10, 0).unwrap();
        q.pop();
        assert_eq!(
            q.schedule(9, EventKind::Release { key: 0, source: 0 }),
            Err(ScheduledInThePast { at: 9, now: 10 })
        );
        assert!(
            q.schedule(10, EventKind::Release { key: 0, source: 0 })
                .is_ok()
        );
    }
}
