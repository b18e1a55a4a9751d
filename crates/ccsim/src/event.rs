//! The event queue: a binary min-heap keyed by `(time, insertion sequence)`, so
//! events at the same instant run in the order they were scheduled and every run is
//! deterministic.

use crate::ids::{FlowId, LinkId};
use crate::time::Nanos;

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

impl Event {
    /// Packs the event into one word for the heap: tag in the top byte, the second
    /// operand (a connection index, at most 64) in the next 24 bits, the first in the
    /// low 32.
    #[inline]
    fn encode(self) -> u64 {
        let (tag, a, b) = match self {
            Event::LinkTxDone(l) => (0u64, l.0, 0u32),
            Event::LinkDeliver(l) => (1, l.0, 0),
            Event::AppWake(f) => (2, f.0, 0),
            Event::TransportTimer(f, k) => (3, f.0, k),
            Event::SampleQueues => (4, 0, 0),
            Event::SampleState => (5, 0, 0),
        };
        debug_assert!(b < 1 << 24);
        tag << 56 | (b as u64) << 32 | a as u64
    }

    #[inline]
    fn decode(code: u64) -> Event {
        let a = code as u32;
        match code >> 56 {
            0 => Event::LinkTxDone(LinkId(a)),
            1 => Event::LinkDeliver(LinkId(a)),
            2 => Event::AppWake(FlowId(a)),
            3 => Event::TransportTimer(FlowId(a), ((code >> 32) & 0xFF_FFFF) as u32),
            4 => Event::SampleQueues,
            _ => Event::SampleState,
        }
    }
}

/// Heap entry: three plain words. (With a `u128` key and the event enum beside it,
/// `BinaryHeap::pop`'s swap stored the entry in 8-byte halves and read it straight
/// back in 16-byte loads, a store-forwarding stall that was a fifth of the event
/// loop's time.)
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Nanos,
    seq: u64,
    code: u64,
}

impl Entry {
    /// Order: time, then insertion sequence.
    #[inline]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

/// A binary min-heap of [`Entry`] (a hand-written one: see `Entry`).
#[derive(Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    next_seq: u64,
    /// Events popped so far (for the events-per-second figure).
    pub processed: u64,
    /// Entries superseded since the last purge (an upper bound: some of them have
    /// already popped); see [`EventQueue::purge_due`].
    superseded: u64,
    /// The event `pop` returned is still at the root: the first event its handler
    /// schedules takes its place (one sift instead of a removal and an insertion), and
    /// [`EventQueue::done`] removes it if the handler scheduled nothing.
    top_taken: bool,
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { time, seq, code: event.encode() };
        if self.top_taken {
            // Every event scheduled now comes after the one being handled (a later
            // time, or the same time with a larger sequence number), so it may take
            // the root's place and sink.
            self.top_taken = false;
            self.sift_down(e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    /// Puts `e` at the root and lets it sink to its place.
    #[inline]
    fn sift_down(&mut self, e: Entry) {
        let k = e.key();
        let mut i = 0;
        while let Some(c) = self.smaller_child(i) {
            if self.heap[c].key() >= k {
                break;
            }
            self.heap[i] = self.heap[c];
            i = c;
        }
        self.heap[i] = e;
    }

    /// The child of `i` with the smaller key, if `i` has children.
    #[inline]
    fn smaller_child(&self, i: usize) -> Option<usize> {
        let (h, c) = (&self.heap, 2 * i + 1);
        if c >= h.len() {
            return None;
        }
        // Branch-free (which child is smaller is a coin flip to the predictor): a lone
        // last child compares with itself.
        let r = (c + 1).min(h.len() - 1);
        Some(c + usize::from(h[r].key() < h[c].key()))
    }

    /// Puts `e` in the hole at `i` or above. `e` comes in registers: reading it back
    /// from the slot just written would stall on store forwarding.
    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        let h = &mut self.heap;
        let k = e.key();
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key() <= k {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    /// The earliest event. It stays in the queue until the next `schedule` (which
    /// replaces it) or [`EventQueue::done`]; call `done` once its handler has run.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        debug_assert!(!self.top_taken, "pop without done");
        let top = *self.heap.first()?;
        self.top_taken = true;
        self.processed += 1;
        Some((top.time, Event::decode(top.code)))
    }

    /// Ends the handling of the popped event: removes it unless something replaced it.
    #[inline]
    pub fn done(&mut self) {
        if self.top_taken {
            self.top_taken = false;
            self.remove_top();
        }
    }

    fn remove_top(&mut self) {
        let last = self.heap.pop().expect("not empty");
        if !self.heap.is_empty() {
            // Floyd's bottom-up deletion (as std's BinaryHeap): walk the hole down to a
            // leaf along the smaller children, then let the last entry rise from there;
            // it usually belongs near the bottom.
            let mut i = 0;
            while let Some(c) = self.smaller_child(i) {
                self.heap[i] = self.heap[c];
                i = c;
            }
            self.sift_up(i, last);
        }
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        debug_assert!(!self.top_taken, "peek before done");
        self.heap.first().map(|e| e.time)
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
        debug_assert!(!self.top_taken, "purge during an event");
        self.heap.retain(|e| keep(e.time, &Event::decode(e.code)));
        for i in 0..self.heap.len() {
            let e = self.heap[i];
            self.sift_up(i, e);
        }
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

    impl EventQueue {
        /// `pop` then `done`: the event's handler scheduled nothing.
        fn pop_done(&mut self) -> Option<(Nanos, Event)> {
            let x = self.pop();
            self.done();
            x
        }
    }

    #[test]
    fn an_event_scheduled_by_a_handler_takes_the_handled_ones_place() {
        let mut q = EventQueue::default();
        for (t, f) in [(5, 1), (9, 2), (7, 3)] {
            q.schedule(t, Event::AppWake(FlowId(f)));
        }
        // The handler of t=5 schedules two events: the first replaces it at the root.
        assert_eq!(q.pop(), Some((5, Event::AppWake(FlowId(1)))));
        q.schedule(8, Event::AppWake(FlowId(4)));
        q.schedule(5, Event::AppWake(FlowId(5)));
        q.done();
        let order: Vec<_> = std::iter::from_fn(|| q.pop_done()).collect();
        let ev = |f| Event::AppWake(FlowId(f));
        assert_eq!(order, vec![(5, ev(5)), (7, ev(3)), (8, ev(4)), (9, ev(2))]);
    }

    #[test]
    fn earliest_first_and_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::AppWake(FlowId(1)));
        q.schedule(3, Event::AppWake(FlowId(2)));
        q.schedule(5, Event::AppWake(FlowId(3)));
        q.schedule(5, Event::AppWake(FlowId(4)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_done()).collect();
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
    fn pops_in_key_order_for_random_schedules_and_events_round_trip() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut want = vec![];
        let mut seq = 0u64;
        for round in 0..50 {
            for _ in 0..rng.random_range(0..40) {
                let t = rng.random_range(0..200u64);
                let ev = match rng.random_range(0..6) {
                    0 => Event::LinkTxDone(LinkId(rng.random())),
                    1 => Event::LinkDeliver(LinkId(rng.random())),
                    2 => Event::AppWake(FlowId(rng.random())),
                    3 => Event::TransportTimer(FlowId(rng.random()), rng.random_range(0..64)),
                    4 => Event::SampleQueues,
                    _ => Event::SampleState,
                };
                q.schedule(t + round * 10, ev);
                want.push((t + round * 10, seq, ev));
                seq += 1;
            }
            // Pop a few between rounds, as the simulation does: a handler may schedule
            // events (at or after its own time) before it is done.
            for _ in 0..rng.random_range(0..20).min(want.len()) {
                want.sort_by_key(|&(t, s, _)| (t, s));
                let (t, _, ev) = want.remove(0);
                assert_eq!(q.pop(), Some((t, ev)));
                for _ in 0..rng.random_range(0..3) {
                    let later = t + rng.random_range(0..30u64);
                    q.schedule(later, Event::SampleQueues);
                    want.push((later, seq, Event::SampleQueues));
                    seq += 1;
                }
                q.done();
            }
        }
        want.sort_by_key(|&(t, s, _)| (t, s));
        let rest: Vec<_> = std::iter::from_fn(|| q.pop_done()).collect();
        assert_eq!(rest, want.iter().map(|&(t, _, ev)| (t, ev)).collect::<Vec<_>>());
    }

    #[test]
    fn purge_drops_rejected_entries_and_keeps_the_order_of_the_rest() {
        let mut q = EventQueue::default();
        for (t, f) in [(9, 1), (4, 2), (9, 3), (7, 4), (4, 5)] {
            q.schedule(t, Event::TransportTimer(FlowId(f), 0));
            q.mark_superseded();
        }
        q.purge(|t, ev| !(t == 9 && *ev == Event::TransportTimer(FlowId(1), 0)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_done()).map(|(t, e)| (t, e)).collect();
        let ev = |f| Event::TransportTimer(FlowId(f), 0);
        assert_eq!(order, vec![(4, ev(2)), (4, ev(5)), (7, ev(4)), (9, ev(3))]);
        assert!(!q.purge_due());
    }
}
