//! FIFO helper for the hot queues (qdiscs, link pipes, ACK out-queues).

use std::collections::VecDeque;

/// `pop_front` that rewinds an emptied ring to its start.
///
/// A `VecDeque` keeps advancing its head around the whole capacity it once grew to:
/// a queue that usually holds one or two packets but once held thousands would touch
/// a new cache line on every push and pop. `clear` on an empty deque resets the head
/// to slot 0, so a mostly-empty queue stays in the same few lines.
#[inline]
pub fn pop_front_rewind<T>(q: &mut VecDeque<T>) -> Option<T> {
    let x = q.pop_front();
    if q.is_empty() {
        q.clear();
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_fifo_order_across_rewinds() {
        let mut q: VecDeque<u32> = VecDeque::with_capacity(4);
        let mut out = vec![];
        for round in 0..5u32 {
            for i in 0..3 {
                q.push_back(round * 10 + i);
            }
            out.push(pop_front_rewind(&mut q).unwrap());
            while let Some(x) = pop_front_rewind(&mut q) {
                out.push(x);
            }
            assert!(pop_front_rewind(&mut q).is_none());
        }
        let want: Vec<u32> = (0..5).flat_map(|r| (0..3).map(move |i| r * 10 + i)).collect();
        assert_eq!(out, want);
    }
}
