//! Windowed running minimum/maximum with three samples (Kathleen Nichols' algorithm,
//! Linux lib/win_minmax.c). Linux uses it for `tcp_min_rtt` (window
//! `net.ipv4.tcp_min_rtt_wlen` = 300 s) and BBR for its bandwidth max filter (10
//! rounds) and min-RTT filter (10 s); this one type serves all of them.

/// One (time, value) sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Sample {
    t: u64,
    v: u32,
}

/// Best, second-best and third-best samples in successive sub-windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    /// Current estimate (0 before any sample, as Linux's zeroed struct).
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    pub fn reset(&mut self, t: u64, v: u32) -> u32 {
        let s = Sample { t, v };
        self.s = [s; 3];
        v
    }

    /// `minmax_subwin_update`: as time passes, promote the newer samples so the
    /// estimate never holds a value older than the window.
    fn subwin_update(&mut self, win: u64, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // Best sample expired: the second and third move up.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed without a second choice: take one.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`.
    pub fn running_max(&mut self, win: u64, t: u64, v: u32) -> u32 {
        let val = Sample { t, v };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_min`.
    pub fn running_min(&mut self, win: u64, t: u64, v: u32) -> u32 {
        let val = Sample { t, v };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v <= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_min_forgets_values_older_than_the_window() {
        let mut m = MinMax::default();
        m.reset(0, 100);
        assert_eq!(m.running_min(10, 1, 150), 100);
        assert_eq!(m.running_min(10, 5, 120), 100);
        // At t = 11 the 100 sample is older than the window: the next best (from the
        // later sub-windows) takes over.
        assert_eq!(m.running_min(10, 11, 130), 120);
        assert_eq!(m.running_min(10, 12, 90), 90);
    }

    #[test]
    fn running_max_tracks_peak() {
        let mut m = MinMax::default();
        assert_eq!(m.running_max(10, 0, 5), 5);
        assert_eq!(m.running_max(10, 3, 3), 5);
        assert_eq!(m.running_max(10, 4, 8), 8);
    }
}
