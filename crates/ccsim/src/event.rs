//! The event queue: a binary min-heap keyed by `(time, insertion sequence)`, so
//! events at the same instant run in the order they were scheduled and every run is
//! deterministic.

use crate::ids::{FlowId, LinkId};
use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Everything that can happen. Plain data, no closures: the heap stays compact and
/// dispatch is a `match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link finished serialising the packet it was sending.
    LinkTxDone(LinkId),
    /// The packet at the head of a link's propagation pipe reaches the far end.
    LinkDeliver(LinkId),
    /// A flow's application has data to write (next CBR message, on/off transition).
    AppWake(FlowId),
    /// A TCP connection's timer (RTO, delayed ACK, pacing) may be due: flow and
    /// connection index.
    TransportTimer(FlowId, u32),
    /// Periodic sampling of queues.
    SampleQueues,
    /// Periodic sampling of TCP state.
    SampleState,
}

/// Heap entry. `key` packs `(time, seq)` into one `u128` (time in the high half) so
/// ordering is a single integer comparison on the hot path.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    #[inline]
    fn time(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    /// Events popped so far (for the events-per-second figure).
    pub processed: u64,
    /// Entries superseded since the last purge (an upper bound: some of them have
    /// already popped); see [`EventQueue::purge_due`].
    superseded: u64,
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { key: ((time as u128) << 64) | seq as u128, event });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.time(), e.event))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.time())
    }

    /// An entry already in the queue will be ignored when it pops (a transport
    /// timer re-armed earlier leaves its later entry behind).
    #[inline]
    pub fn mark_superseded(&mut self) {
        self.superseded += 1;
    }

    /// Whether superseded entries may make up half the heap: every pop pays for them
    /// (paced flows re-arm their timer once per burst, leaving an RTO-distant entry
    /// each time).
    #[inline]
    pub fn purge_due(&self) -> bool {
        self.superseded >= 64 && self.superseded * 2 >= self.heap.len() as u64
    }

    /// Drops the entries `keep` rejects (an O(n) rebuild; the pop order of the rest is
    /// unchanged, keys being unique).
    pub fn purge(&mut self, mut keep: impl FnMut(Nanos, &Event) -> bool) {
        self.heap.retain(|e| keep(e.time(), &e.event));
        self.superseded = 0;
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::AppWake(FlowId(1)));
        q.schedule(3, Event::AppWake(FlowId(2)));
        q.schedule(5, Event::AppWake(FlowId(3)));
        q.schedule(5, Event::AppWake(FlowId(4)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::AppWake(FlowId(2))),
                (5, Event::AppWake(FlowId(1))),
                (5, Event::AppWake(FlowId(3))),
                (5, Event::AppWake(FlowId(4))),
            ]
        );
    }

    #[test]
    fn purge_drops_rejected_entries_and_keeps_the_order_of_the_rest() {
        let mut q = EventQueue::default();
        for (t, f) in [(9, 1), (4, 2), (9, 3), (7, 4), (4, 5)] {
            q.schedule(t, Event::TransportTimer(FlowId(f), 0));
            q.mark_superseded();
        }
        q.purge(|t, ev| !(t == 9 && *ev == Event::TransportTimer(FlowId(1), 0)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, e)| (t, e)).collect();
        let ev = |f| Event::TransportTimer(FlowId(f), 0);
        assert_eq!(order, vec![(4, ev(2)), (4, ev(5)), (7, ev(4)), (9, ev(3))]);
        assert!(!q.purge_due());
    }
}
