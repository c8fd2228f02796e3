//! The event queue: every source's next arrival and every event scheduled for later, in one
//! heap ordered by `(time, rank, tiebreak)`.
//!
//! At equal times, scheduled events (a delayed request's release) come before arrivals, since
//! they were decided earlier; scheduled events keep their scheduling order (a sequence number)
//! and arrivals their source order. Each source has at most one arrival queued, so its own
//! requests keep the order it produced them. Nothing depends on heap internals.

use crate::algorithms::{Cost, KeyId};
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// What happens at an event's time. Small (8 bytes) so that events move cheaply through the
/// heap: a retry's request waits in the queue's slab, the event holds its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The next request of source `source` arrives.
    Arrival {
        /// The source's index in the scenario.
        source: u16,
    },
    /// A delayed request of `key` (its client `client`, from `source`) leaves the shaper's
    /// queue for the backend.
    Release {
        /// The delayed request's key.
        key: KeyId,
        /// The client (interned user identity) that sent it.
        client: ClientId,
        /// The index of the source that sent it.
        source: u16,
        /// The units of cost the request settles (its actual cost, else its cost).
        units: Cost,
    },
    /// A client retries a rejected request, kept in slot `slot` until it is taken
    /// ([`EventQueue::take_retry`]).
    Retry {
        /// The request's slot in the queue's slab of waiting retries.
        slot: u32,
    },
}

/// The top bit of [`Event::order`]: set for arrivals, so that at equal times every scheduled
/// event (rank 0) comes first.
const ARRIVAL_RANK: u64 = 1 << 63;

/// One queued event: what happens, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When it happens, in ns of virtual time.
    pub time: Nanos,
    /// `(rank, tiebreak)` in one word: the rank in the top bit (0 for scheduled events, which
    /// come before arrivals at equal times), below it the sequence number of a scheduled event
    /// or the source index of an arrival.
    order: u64,
    /// What happens.
    pub kind: EventKind,
}

impl Event {
    /// The full order: `(time, rank, tiebreak)`.
    #[cfg(test)]
    fn order(&self) -> (Nanos, u8, u64) {
        (
            self.time,
            (self.order >> 63) as u8,
            self.order & !ARRIVAL_RANK,
        )
    }
}

impl Ord for Event {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (self.time, self.order).cmp(&(other.time, other.order))
    }
}

impl PartialOrd for Event {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Scheduling an event before the current time: a bug in a component, never silently accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("event scheduled at {at} ns, before the current time {now} ns")]
pub struct ScheduledInThePast {
    /// The time the event was scheduled for, in ns.
    pub at: Nanos,
    /// The queue's current time, in ns.
    pub now: Nanos,
}

/// A retried request waiting for its time, with its client's last backoff sleep.
type Waiting = (Arrival, Nanos);

/// The heap plus the earliest event held apart (`front`): a source whose next arrival is also the
/// next event (one busy source, the usual case) never goes through the heap.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// When set, earlier than every event in `heap` (orders are distinct: no ties).
    front: Option<Event>,
    heap: BinaryHeap<Reverse<Event>>,
    now: Nanos,
    seq: u64,
    /// The requests of scheduled retries, by slot; `free` lists the slots not in use, so the
    /// slab grows only to the most retries waiting at once.
    retries: Vec<Waiting>,
    free: Vec<u32>,
}

impl EventQueue {
    /// An empty queue with room for `n` events in its heap.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            ..EventQueue::default()
        }
    }

    /// Queues the next arrival of `source`.
    #[inline]
    pub fn push_arrival(&mut self, time: Nanos, source: u16) -> Result<(), ScheduledInThePast> {
        self.push(
            time,
            ARRIVAL_RANK | source as u64,
            EventKind::Arrival { source },
        )
    }

    /// Queues the next arrival of `source` and takes the next event: the same as
    /// [`EventQueue::push_arrival`] then [`EventQueue::pop`], but an arrival earlier than every
    /// queued event (one busy source) comes straight back without being stored and read again.
    // Inlined into the engine's loop so that the event comes back in registers: returned
    // through memory, written field by field and read back 16 bytes at a time, it stalled
    // the loop on store forwarding.
    #[inline(always)]
    pub fn push_arrival_pop(
        &mut self,
        time: Nanos,
        source: u16,
    ) -> Result<Option<Event>, ScheduledInThePast> {
        self.check(time)?;
        let order = ARRIVAL_RANK | source as u64;
        if self.front.is_none()
            && self
                .heap
                .peek()
                .is_none_or(|Reverse(top)| (time, order) < (top.time, top.order))
        {
            self.now = time;
            return Ok(Some(Event {
                time,
                order,
                kind: EventKind::Arrival { source },
            }));
        }
        Ok(self.push_then_pop(time, order, EventKind::Arrival { source }))
    }

    /// [`EventQueue::push`] then [`EventQueue::pop`], for an event already checked.
    #[inline(never)]
    fn push_then_pop(&mut self, time: Nanos, order: u64, kind: EventKind) -> Option<Event> {
        self.push(time, order, kind)
            .expect("checked against the current time");
        self.pop()
    }

    /// Schedules the release of a delayed request of `key` and `client` settling `units`
    /// (`time` may equal the current time).
    pub fn schedule_release(
        &mut self,
        time: Nanos,
        key: KeyId,
        client: ClientId,
        source: u16,
        units: Cost,
    ) -> Result<(), ScheduledInThePast> {
        self.schedule(
            time,
            EventKind::Release {
                key,
                client,
                source,
                units,
            },
        )
    }

    /// Schedules a retry of `arrival` at its time, `previous_sleep` being its client's last
    /// backoff sleep; both come back from [`EventQueue::take_retry`].
    pub fn schedule_retry(
        &mut self,
        arrival: Arrival,
        previous_sleep: Nanos,
    ) -> Result<(), ScheduledInThePast> {
        self.check(arrival.time)?;
        let waiting = (arrival, previous_sleep);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.retries[slot as usize] = waiting;
                slot
            }
            None => {
                self.retries.push(waiting);
                u32::try_from(self.retries.len() - 1).expect("fewer than 2^32 retries waiting")
            }
        };
        self.schedule(arrival.time, EventKind::Retry { slot })
    }

    /// The request of a popped [`EventKind::Retry`] and its client's last sleep; frees the slot.
    #[inline]
    pub fn take_retry(&mut self, slot: u32) -> Waiting {
        self.free.push(slot);
        self.retries[slot as usize]
    }

    fn schedule(&mut self, time: Nanos, kind: EventKind) -> Result<(), ScheduledInThePast> {
        let seq = self.seq;
        debug_assert!(
            seq < ARRIVAL_RANK,
            "sequence numbers stay below the rank bit"
        );
        self.seq += 1;
        self.push(time, seq, kind)
    }

    #[inline]
    fn check(&self, time: Nanos) -> Result<(), ScheduledInThePast> {
        if time < self.now {
            return Err(ScheduledInThePast {
                at: time,
                now: self.now,
            });
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, time: Nanos, order: u64, kind: EventKind) -> Result<(), ScheduledInThePast> {
        self.check(time)?;
        let event = Event { time, order, kind };
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
        q.schedule_release(10, 7, 7, 1, 1).unwrap();
        q.schedule_release(10, 8, 8, 1, 1).unwrap();
        q.push_arrival(5, 1).unwrap();
        let kinds: Vec<EventKind> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::Arrival { source: 1 },
                EventKind::Release {
                    key: 7,
                    client: 7,
                    source: 1,
                    units: 1
                },
                EventKind::Release {
                    key: 8,
                    client: 8,
                    source: 1,
                    units: 1
                },
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
            q.schedule_release(9, 0, 0, 0, 1),
            Err(ScheduledInThePast { at: 9, now: 10 })
        );
        assert!(q.schedule_release(10, 0, 0, 0, 1).is_ok());
        let past = Arrival::new(9, 0, 0, 0);
        assert_eq!(
            q.schedule_retry(past, 0),
            Err(ScheduledInThePast { at: 9, now: 10 })
        );
        assert!(q.retries.is_empty(), "a refused retry takes no slot");
    }

    #[test]
    fn retry_slots_are_reused() {
        let mut q = EventQueue::default();
        let a = |t, key| Arrival::new(t, key, 0, 0);
        q.schedule_retry(a(5, 1), 11).unwrap();
        q.schedule_retry(a(7, 2), 22).unwrap();
        let Some(Event {
            kind: EventKind::Retry { slot },
            ..
        }) = q.pop()
        else {
            panic!("a retry first")
        };
        assert_eq!(q.take_retry(slot), (a(5, 1), 11));
        q.schedule_retry(a(6, 3), 33).unwrap();
        assert_eq!(q.retries.len(), 2, "the freed slot was reused");
        let mut taken = Vec::new();
        while let Some(e) = q.pop() {
            let EventKind::Retry { slot } = e.kind else {
                panic!("only retries queued")
            };
            taken.push(q.take_retry(slot));
        }
        assert_eq!(taken, [(a(6, 3), 33), (a(7, 2), 22)]);
    }

    mod reference {
        //! The queue against a plain `BinaryHeap` of whole events ordered by
        //! `(time, rank, tiebreak)`: the order of the queue's doc, nothing else.
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Full {
            Arrival { source: u16 },
            Release { key: KeyId, source: u16 },
            Retry { arrival: Arrival, sleep: Nanos },
        }

        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        struct RefEvent {
            time: Nanos,
            rank: u8,
            tiebreak: u64,
            what: Full,
        }

        impl Ord for RefEvent {
            fn cmp(&self, other: &Self) -> Ordering {
                (self.time, self.rank, self.tiebreak).cmp(&(other.time, other.rank, other.tiebreak))
            }
        }
        impl PartialOrd for RefEvent {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        #[derive(Debug, Clone)]
        enum Op {
            /// An arrival of `source` this long after now (skipped if it has one queued).
            Arrive(u64, u16),
            /// The same, then a pop, in one call ([`EventQueue::push_arrival_pop`]).
            ArrivePop(u64, u16),
            Release(u64, KeyId, u16),
            Retry(u64, KeyId, u32, Nanos),
            Pop,
        }

        fn op() -> impl Strategy<Value = Op> {
            // Small gaps and few sources, so that equal times (the tie-breaks) are common.
            prop_oneof![
                (0..3u64, 0..4u16).prop_map(|(d, s)| Op::Arrive(d, s)),
                (0..3u64, 0..4u16).prop_map(|(d, s)| Op::ArrivePop(d, s)),
                (0..3u64, 0..50u32, 0..4u16).prop_map(|(d, k, s)| Op::Release(d, k, s)),
                (0..3u64, 0..50u32, 0..5u32, 0..1000u64)
                    .prop_map(|(d, k, n, sl)| Op::Retry(d, k, n, sl)),
                Just(Op::Pop),
                Just(Op::Pop),
            ]
        }

        /// The queue beside a reference heap, fed the same operations.
        struct Both {
            q: EventQueue,
            reference: BinaryHeap<Reverse<RefEvent>>,
            now: u64,
            seq: u64,
            queued: [bool; 4],
            popped: Vec<Option<(Nanos, Full)>>,
            expected: Vec<Option<(Nanos, Full)>>,
        }

        impl Both {
            fn queue_reference(&mut self, time: Nanos, rank: u8, tiebreak: u64, what: Full) {
                self.reference.push(Reverse(RefEvent {
                    time,
                    rank,
                    tiebreak,
                    what,
                }));
            }

            /// `arrival`: an arrival of this source at this time to queue first, in the same
            /// call as the pop on our side.
            fn pop_both(&mut self, arrival: Option<(Nanos, u16)>) {
                let event = match arrival {
                    Some((time, source)) => {
                        self.queue_reference(time, 1, source as u64, Full::Arrival { source });
                        self.q.push_arrival_pop(time, source).unwrap()
                    }
                    None => self.q.pop(),
                };
                let q = &mut self.q;
                let ours = event.map(|e| {
                    let what = match e.kind {
                        EventKind::Arrival { source } => Full::Arrival { source },
                        EventKind::Release { key, source, .. } => Full::Release { key, source },
                        EventKind::Retry { slot } => {
                            let (arrival, sleep) = q.take_retry(slot);
                            Full::Retry { arrival, sleep }
                        }
                    };
                    (e.time, what)
                });
                let theirs = self.reference.pop().map(|Reverse(e)| (e.time, e.what));
                if let Some((t, Full::Arrival { source })) = theirs {
                    self.now = t;
                    self.queued[source as usize] = false;
                } else if let Some((t, _)) = theirs {
                    self.now = t;
                }
                self.popped.push(ours);
                self.expected.push(theirs);
            }

            fn apply(&mut self, op: Op) {
                let now = self.now;
                match op {
                    Op::Arrive(_, source) | Op::ArrivePop(_, source)
                        if self.queued[source as usize] => {}
                    Op::Arrive(d, source) => {
                        self.queued[source as usize] = true;
                        self.q.push_arrival(now + d, source).unwrap();
                        self.queue_reference(now + d, 1, source as u64, Full::Arrival { source });
                    }
                    Op::Release(d, key, source) => {
                        self.q
                            .schedule_release(now + d, key, key, source, 1)
                            .unwrap();
                        self.queue_reference(now + d, 0, self.seq, Full::Release { key, source });
                        self.seq += 1;
                    }
                    Op::Retry(d, key, attempt, sleep) => {
                        let arrival = Arrival {
                            attempt,
                            ..Arrival::new(now + d, key, key + 1, (key % 3) as u16)
                        };
                        self.q.schedule_retry(arrival, sleep).unwrap();
                        self.queue_reference(now + d, 0, self.seq, Full::Retry { arrival, sleep });
                        self.seq += 1;
                    }
                    Op::ArrivePop(d, source) => {
                        self.queued[source as usize] = true;
                        self.pop_both(Some((now + d, source)));
                    }
                    Op::Pop => self.pop_both(None),
                }
            }
        }

        proptest! {
            #[test]
            fn pops_in_the_reference_order(ops in proptest::collection::vec(op(), 0..200)) {
                let mut both = Both {
                    q: EventQueue::with_capacity(2),
                    reference: BinaryHeap::new(),
                    now: 0,
                    seq: 0,
                    queued: [false; 4],
                    popped: Vec::new(),
                    expected: Vec::new(),
                };
                for op in ops {
                    both.apply(op);
                }
                while !both.reference.is_empty() {
                    both.pop_both(None);
                }
                let q = &mut both.q;
                prop_assert_eq!(q.pop(), None);
                prop_assert_eq!(both.popped, both.expected);
                // Every slot was given back: the slab holds at most the most retries waiting.
                prop_assert_eq!(q.free.len(), q.retries.len());
            }
        }
    }
}
