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
//!
//! What it fences is its fence scope (`wpb::FenceScope`): only what
//! another worker could start. The server says in each renewal what the
//! worker's peers allow; a wider scope is applied at once (the fence task
//! tells the keeper, then marks it applied), a narrower one only once a
//! beat reporting it has been renewed, i.e. stored. Beats report the
//! narrower of the two, so the control plane never holds a scope wider
//! than the one applied here, and never moves a sandbox left running.

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
    /// Reports sent while the lease was lapsed: the control plane may
    /// not have stored them (its database was what kept the lease from
    /// being renewed), so they are sent once more after the next renewal,
    /// which says the database is back. A report of a generation already
    /// moved on is refused there as stale.
    unconfirmed: Mutex<Vec<wpb::SandboxStatus>>,
    /// Those, due again (sent once more, then forgotten).
    again: Mutex<Vec<wpb::SandboxStatus>>,
    /// Woken when the applied scope widens: a beat reports it at once.
    pub scope_changed: tokio::sync::Notify,
}

/// A fence scope as an order (UNSPECIFIED is NONE).
pub fn rank(s: wpb::FenceScope) -> u8 {
    match s {
        wpb::FenceScope::Unspecified | wpb::FenceScope::None => 0,
        wpb::FenceScope::Movable => 1,
        wpb::FenceScope::Shared => 2,
    }
}

/// The narrower of two scopes, UNSPECIFIED read as NONE.
fn narrower(a: wpb::FenceScope, b: wpb::FenceScope) -> wpb::FenceScope {
    match rank(a).min(rank(b)) {
        0 => wpb::FenceScope::None,
        1 => wpb::FenceScope::Movable,
        _ => wpb::FenceScope::Shared,
    }
}

#[derive(Debug, Default)]
struct State {
    /// Until when the lease holds (None: no server has granted one).
    until: Option<Instant>,
    /// The beats sent, with when, and the scope each reported.
    sent: VecDeque<(u64, Instant, wpb::FenceScope)>,
    /// The scope the last renewal allows.
    wanted: wpb::FenceScope,
    /// The scope applied (the keeper told), which the fence stops.
    applied: wpb::FenceScope,
    next_seq: u64,
    /// A lapse not yet acted on.
    lapsed: bool,
    /// Between a lapse taken and its reports kept.
    fencing: bool,
}

impl Lease {
    /// Numbers a beat about to be sent, with the scope it reports: the
    /// narrower of the applied and the wanted.
    pub fn beat(&self) -> (u64, wpb::FenceScope) {
        let mut s = self.inner.lock().expect("lease");
        s.next_seq += 1;
        let seq = s.next_seq;
        let reported = narrower(s.applied, s.wanted);
        s.sent.push_back((seq, Instant::now(), reported));
        if s.sent.len() > KEPT {
            s.sent.pop_front();
        }
        (seq, reported)
    }

    /// The scope the keeper must be told now: the applied one, or the
    /// wanted one if wider (then `applied` marks it applied).
    pub fn scope_to_apply(&self) -> wpb::FenceScope {
        let s = self.inner.lock().expect("lease");
        if rank(s.wanted) > rank(s.applied) {
            s.wanted
        } else {
            s.applied
        }
    }

    /// The keeper was told `scope`: a wider one is applied from now (and a
    /// beat reports it at once).
    pub fn applied(&self, scope: wpb::FenceScope) {
        let mut s = self.inner.lock().expect("lease");
        if rank(scope) > rank(s.applied) {
            s.applied = scope;
            self.scope_changed.notify_one();
        }
    }

    /// What the fence stops now.
    pub fn scope(&self) -> wpb::FenceScope {
        let s = self.inner.lock().expect("lease").applied;
        narrower(s, s)
    }

    /// A registration sent at `sent` was acknowledged with a lease.
    pub fn granted(&self, sent: Instant, valid_for: Duration) {
        self.extend(sent + valid_for);
    }

    /// The server stored a renewal on beat `seq`, allowing `scope`.
    pub fn renewed(&self, seq: u64, valid_for: Duration, scope: wpb::FenceScope) {
        let sent = {
            let mut s = self.inner.lock().expect("lease");
            s.wanted = scope;
            let sent = s.sent.iter().find(|(n, ..)| *n == seq).copied();
            // Narrower: once a beat saying so is stored.
            if let Some((_, _, reported)) = sent
                && rank(reported) <= rank(scope)
                && rank(scope) < rank(s.applied)
            {
                s.applied = scope;
            }
            sent.map(|(_, t, _)| t)
        };
        // A renewal of a beat no longer kept is too old to count, and one
        // already over (a beat answered late) says nothing.
        if let Some(sent) = sent
            && sent + valid_for > Instant::now()
        {
            self.extend(sent + valid_for);
            // The database took this renewal: what it may have missed of
            // the fence's reports goes again.
            let due = std::mem::take(&mut *self.unconfirmed.lock().expect("unconfirmed"));
            self.again.lock().expect("again").extend(due);
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

    /// The reports not sent yet (kept to be sent once more after the
    /// next renewal: see `unconfirmed`).
    pub fn take_reports(&self) -> Vec<wpb::SandboxStatus> {
        let mut taken = std::mem::take(&mut *self.reports.lock().expect("reports"));
        self.unconfirmed
            .lock()
            .expect("unconfirmed")
            .extend(taken.iter().cloned());
        taken.append(&mut self.again.lock().expect("again"));
        taken
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
        let none = wpb::FenceScope::None;
        // No lease granted: nothing to fence.
        assert!(!l.take_lapse());
        l.granted(Instant::now(), Duration::from_millis(50));
        assert!(!l.take_lapse());
        let (seq, _) = l.beat();
        std::thread::sleep(Duration::from_millis(80));
        // The renewal of a beat sent 80 ms ago, valid 50 ms: already over.
        l.renewed(seq, Duration::from_millis(50), none);
        assert!(l.take_lapse());
        assert!(!l.take_lapse());
        // A fresh beat renews; a lapse noticed only at the renewal (the
        // process was stopped) still fences.
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_millis(30), none);
        assert!(!l.take_lapse());
        std::thread::sleep(Duration::from_millis(40));
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_secs(10), none);
        assert!(l.take_lapse(), "the lapse before the renewal is acted on");
        assert!(!l.take_lapse());
        // A renewal of an unknown beat counts for nothing.
        l.renewed(9999, Duration::from_secs(100), none);
        // The control plane says it is moving this worker's sandboxes:
        // fence now, though the lease still holds by this clock.
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_secs(10), none);
        assert!(!l.take_lapse());
        l.revoke();
        assert!(l.take_lapse());
        assert_eq!(l.until(), None);
    }

    /// The scope the control plane can know is never wider than the one
    /// applied: wider at once (once the keeper is told), narrower only
    /// once a beat saying so is renewed.
    #[test]
    fn fenced_reports_go_once_more_after_the_next_renewal() {
        let l = Lease::default();
        let st = |id: &str| wpb::SandboxStatus {
            sandbox_id: id.into(),
            fenced: true,
            ..Default::default()
        };
        l.report(vec![st("sbx_a")]);
        assert_eq!(l.take_reports().len(), 1);
        assert!(l.take_reports().is_empty(), "not again before a renewal");
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_secs(5), wpb::FenceScope::None);
        let again = l.take_reports();
        assert_eq!(again.len(), 1, "once more after the renewal");
        assert_eq!(again[0].sandbox_id, "sbx_a");
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_secs(5), wpb::FenceScope::None);
        assert!(l.take_reports().is_empty(), "and then no more");
    }

    #[test]
    fn a_scope_widens_at_once_and_narrows_only_once_reported() {
        use wpb::FenceScope::{Movable, None, Shared};
        let l = Lease::default();
        l.granted(Instant::now(), Duration::from_secs(10));
        assert_eq!((l.scope(), l.beat().1), (None, None));
        // The peers allow SHARED: beats report NONE until it is applied.
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_secs(10), Shared);
        assert_eq!(l.scope(), None);
        assert_eq!(l.beat().1, None, "not applied yet: not reported");
        assert_eq!(l.scope_to_apply(), Shared);
        l.applied(Shared);
        assert_eq!((l.scope(), l.beat().1), (Shared, Shared));
        // Narrower: reported at once, applied only once that beat is
        // renewed; a renewal of an earlier beat changes nothing.
        let (early, _) = l.beat();
        l.renewed(early, Duration::from_secs(10), Movable);
        assert_eq!(l.scope(), Shared, "its beat reported SHARED");
        assert_eq!(l.scope_to_apply(), Shared);
        let (seq, reported) = l.beat();
        assert_eq!(reported, Movable);
        assert_eq!(l.scope(), Shared);
        l.renewed(seq, Duration::from_secs(10), Movable);
        assert_eq!(l.scope(), Movable);
        // Wider again while narrowing: at once.
        let (seq, _) = l.beat();
        l.renewed(seq, Duration::from_secs(10), Shared);
        assert_eq!(l.scope_to_apply(), Shared);
        l.applied(Shared);
        assert_eq!(l.scope(), Shared);
    }
}
