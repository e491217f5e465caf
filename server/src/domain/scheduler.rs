//! Placement: the connected, undrained worker with the most free capacity
//! that fits the request. Pure, so it is tested without workers.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Amount {
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub sandboxes: i64,
}

#[derive(Clone, Debug)]
pub struct Candidate {
    pub worker_id: String,
    pub capacity: Amount,
    pub allocated: Amount,
}

impl Candidate {
    fn free(&self) -> Amount {
        Amount {
            cpu_millis: self.capacity.cpu_millis - self.allocated.cpu_millis,
            memory_mib: self.capacity.memory_mib - self.allocated.memory_mib,
            sandboxes: self.capacity.sandboxes - self.allocated.sandboxes,
        }
    }

    fn fits(&self, req: &Amount) -> bool {
        let f = self.free();
        f.cpu_millis >= req.cpu_millis
            && f.memory_mib >= req.memory_mib
            && f.sandboxes >= req.sandboxes
    }

    /// The smallest free fraction over the three dimensions: a worker is as
    /// free as its scarcest resource.
    fn score(&self) -> f64 {
        let f = self.free();
        let frac = |free: i64, cap: i64| {
            if cap <= 0 {
                0.0
            } else {
                free as f64 / cap as f64
            }
        };
        frac(f.cpu_millis, self.capacity.cpu_millis)
            .min(frac(f.memory_mib, self.capacity.memory_mib))
            .min(frac(f.sandboxes, self.capacity.sandboxes))
    }
}

/// Fairness between tenants: one tenant may hold at most `share` of the
/// capacity of the connected workers (cpu, memory and sandbox slots
/// each), whatever its quota, so that it can't fill the platform and leave
/// another tenant's create refused. A cap, not a reservation: with more
/// tenants than 1/share they can still fill it together. The words of the
/// refusal, when `held + req` is over the cap.
pub fn over_share(held: &Amount, req: &Amount, total: &Amount, share: f64) -> Option<String> {
    if share >= 1.0 {
        return None;
    }
    let cap = |t: i64| (t as f64 * share).floor() as i64;
    let dims = [
        (
            "cpu millis",
            held.cpu_millis,
            req.cpu_millis,
            total.cpu_millis,
        ),
        (
            "MiB of memory",
            held.memory_mib,
            req.memory_mib,
            total.memory_mib,
        ),
        ("sandboxes", held.sandboxes, req.sandboxes, total.sandboxes),
    ];
    dims.into_iter()
        .find(|(_, h, r, t)| h + r > cap(*t))
        .map(|(what, h, r, t)| {
            format!(
                "fair share: the tenant holds {h} + {r} {what}, over its share of the platform ({:.0}% of {t}); \
                 delete or stop sandboxes, or ask the operator for more capacity",
                share * 100.0
            )
        })
}

/// Picks a worker for `req`, or None when none fits.
pub fn place<'a>(candidates: &'a [Candidate], req: &Amount) -> Option<&'a Candidate> {
    candidates.iter().filter(|c| c.fits(req)).max_by(|a, b| {
        a.score()
            .total_cmp(&b.score())
            .then(a.free().memory_mib.cmp(&b.free().memory_mib))
            .then(b.worker_id.cmp(&a.worker_id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, cap: (i64, i64, i64), used: (i64, i64, i64)) -> Candidate {
        Candidate {
            worker_id: id.into(),
            capacity: Amount {
                cpu_millis: cap.0,
                memory_mib: cap.1,
                sandboxes: cap.2,
            },
            allocated: Amount {
                cpu_millis: used.0,
                memory_mib: used.1,
                sandboxes: used.2,
            },
        }
    }

    #[test]
    fn picks_most_free_that_fits() {
        let req = Amount {
            cpu_millis: 1000,
            memory_mib: 512,
            sandboxes: 1,
        };
        let ws = vec![
            c("a", (4000, 8192, 10), (3000, 1024, 2)),
            c("b", (4000, 8192, 10), (1000, 1024, 2)),
            c("full", (4000, 8192, 10), (4000, 8192, 10)),
        ];
        assert_eq!(place(&ws, &req).unwrap().worker_id, "b");
        let big = Amount {
            cpu_millis: 3500,
            memory_mib: 512,
            sandboxes: 1,
        };
        assert!(place(&ws, &big).is_none());
        assert!(place(&[], &req).is_none());
    }

    #[test]
    fn one_tenant_may_not_take_more_than_its_share() {
        let a = |cpu, mem, n| Amount {
            cpu_millis: cpu,
            memory_mib: mem,
            sandboxes: n,
        };
        let total = a(8000, 16384, 100);
        assert_eq!(
            over_share(&a(3000, 1024, 3), &a(1000, 512, 1), &total, 0.5),
            None
        );
        let cpu = over_share(&a(4000, 1024, 4), &a(1000, 512, 1), &total, 0.5).unwrap();
        assert!(
            cpu.contains("4000 + 1000 cpu millis") && cpu.contains("50% of 8000"),
            "{cpu}"
        );
        let mem = over_share(&a(0, 8000, 1), &a(100, 512, 1), &total, 0.5).unwrap();
        assert!(mem.contains("MiB"), "{mem}");
        let n = over_share(&a(0, 0, 50), &a(0, 0, 1), &total, 0.5).unwrap();
        assert!(n.contains("sandboxes"), "{n}");
        // A share of 1 is no cap; no capacity at all is over any share.
        assert_eq!(
            over_share(&a(8000, 16384, 100), &a(1, 1, 1), &total, 1.0),
            None
        );
        assert!(over_share(&a(0, 0, 0), &a(1, 1, 1), &a(0, 0, 0), 0.5).is_some());
    }
}
