//! The worker's view of its lease, and fencing.
//!
//! The control plane renews a worker's lease on its heartbeats and says so
//! (`LeaseRenewed`, naming the beat). The worker counts each renewal from
//! when it *sent* that beat, on its own monotonic clock, so its view of
//! the lease ends no later than the database's (which counts from when the
//! renewal was stored, after the beat arrived). When that view lapses, the
//! autopilot may move the worker's sandboxes elsewhere once its grace
//! period is over, so the worker stops them first: it fences itself. A
//! lapse is never forgotten by a later renewal: if the worker noticed it
//! late (its process was stopped, say), the next renewal still fences
//! before anything else.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use talon_proto::talon::worker::v1 as wpb;

/// Beats whose send times are kept for their renewals.
const KEPT: usize = 256;

#[derive(Debug, Default)]
pub struct Lease {
    inner: Mutex<State>,
    /// What fencing stopped, for the next session to report.
    reports: Mutex<Vec<wpb::SandboxStatus>>,
}

#[derive(Debug, Default)]
struct State {
    /// Until when the lease holds (None: no server has granted one).
    until: Option<Instant>,
    /// The beats sent, with when.
    sent: VecDeque<(u64, Instant)>,
    next_seq: u64,
    /// A lapse not yet acted on.
    lapsed: bool,
    /// Between a lapse taken and its reports kept.
    fencing: bool,
}

impl Lease {
    /// Numbers a beat about to be sent.
    pub fn beat(&self) -> u64 {
        let mut s = self.inner.lock().expect("lease");
        s.next_seq += 1;
        let seq = s.next_seq;
        s.sent.push_back((seq, Instant::now()));
        if s.sent.len() > KEPT {
            s.sent.pop_front();
        }
        seq
    }

    /// A registration sent at `sent` was acknowledged with a lease.
    pub fn granted(&self, sent: Instant, valid_for: Duration) {
        self.extend(sent + valid_for);
    }

    /// The server stored a renewal on beat `seq`.
    pub fn renewed(&self, seq: u64, valid_for: Duration) {
        let sent = {
            let s = self.inner.lock().expect("lease");
            s.sent.iter().find(|(n, _)| *n == seq).map(|(_, t)| *t)
        };
        // A renewal of a beat no longer kept is too old to count, and one
        // already over (a beat answered late) says nothing.
        if let Some(sent) = sent
            && sent + valid_for > Instant::now()
        {
            self.extend(sent + valid_for);
        }
    }

    fn extend(&self, to: Instant) {
        let mut s = self.inner.lock().expect("lease");
        let now = Instant::now();
        if s.until.is_some_and(|u| u <= now) {
            s.lapsed = true;
        }
        if s.until.is_none_or(|u| to > u) {
            s.until = Some(to);
        }
    }

    /// The control plane says this worker's sandboxes are being moved: it
    /// fences now, whatever its own view of the lease.
    pub fn revoke(&self) {
        let mut s = self.inner.lock().expect("lease");
        s.lapsed = true;
        s.until = None;
    }

    /// Until when the lease holds, as last renewed.
    pub fn until(&self) -> Option<Instant> {
        self.inner.lock().expect("lease").until
    }

    /// Whether the lease is lapsed or being acted on: what the worker then
    /// sees die is its own fence's doing (or its keeper's), reported as
    /// fenced, not as a sandbox that died.
    pub fn fencing(&self) -> bool {
        let s = self.inner.lock().expect("lease");
        s.fencing || s.lapsed || s.until.is_some_and(|u| u <= Instant::now())
    }

    /// Keeps reports of fenced sandboxes until a session sends them; the
    /// fence is done.
    pub fn report(&self, fenced: Vec<wpb::SandboxStatus>) {
        self.reports.lock().expect("reports").extend(fenced);
        self.inner.lock().expect("lease").fencing = false;
    }

    /// The reports not sent yet.
    pub fn take_reports(&self) -> Vec<wpb::SandboxStatus> {
        std::mem::take(&mut *self.reports.lock().expect("reports"))
    }

    /// Whether the worker must fence now: its lease lapsed (noticed now or
    /// at a renewal). Clears the mark; the caller fences.
    pub fn take_lapse(&self) -> bool {
        let mut s = self.inner.lock().expect("lease");
        let now = Instant::now();
        let lapsed_now = s.until.is_some_and(|u| u <= now);
        let lapsed = s.lapsed || lapsed_now;
        s.lapsed = false;
        s.fencing |= lapsed;
        if lapsed_now {
            // Acted on once; the next lapse needs a renewal first.
            s.until = None;
        }
        lapsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renewal_counts_from_its_beat_and_a_lapse_is_not_forgotten() {
        let l = Lease::default();
        // No lease granted: nothing to fence.
        assert!(!l.take_lapse());
        l.granted(Instant::now(), Duration::from_millis(50));
        assert!(!l.take_lapse());
        let seq = l.beat();
        std::thread::sleep(Duration::from_millis(80));
        // The renewal of a beat sent 80 ms ago, valid 50 ms: already over.
        l.renewed(seq, Duration::from_millis(50));
        assert!(l.take_lapse());
        assert!(!l.take_lapse());
        // A fresh beat renews; a lapse noticed only at the renewal (the
        // process was stopped) still fences.
        let seq = l.beat();
        l.renewed(seq, Duration::from_millis(30));
        assert!(!l.take_lapse());
        std::thread::sleep(Duration::from_millis(40));
        let seq = l.beat();
        l.renewed(seq, Duration::from_secs(10));
        assert!(l.take_lapse(), "the lapse before the renewal is acted on");
        assert!(!l.take_lapse());
        // A renewal of an unknown beat counts for nothing.
        l.renewed(9999, Duration::from_secs(100));
        // The control plane says it is moving this worker's sandboxes:
        // fence now, though the lease still holds by this clock.
        let seq = l.beat();
        l.renewed(seq, Duration::from_secs(10));
        assert!(!l.take_lapse());
        l.revoke();
        assert!(l.take_lapse());
        assert_eq!(l.until(), None);
    }
}
