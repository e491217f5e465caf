//! Placement: the connected, undrained worker with the most free capacity
//! that fits the request. Pure, so it is tested without workers.
//!
//! What "free" means is the operator's choice (`Placement`). By default a
//! worker is as full as its host really is: the cpu and memory it reports
//! in use, plus a floor for each sandbox placed since that report. Idle
//! sandboxes use almost nothing, so a host takes as many as it can really
//! run; limits still cap each sandbox. `Limits` counts every sandbox at its
//! limits instead, so nothing is placed that could not all run at its
//! limits at once (cpu times the worker's overcommit).

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Amount {
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub sandboxes: i64,
}

/// How placement counts what a worker holds (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Each live sandbox at its limits; paused ones without their cpu.
    Limits,
    /// What the worker reports in use, and a floor per sandbox placed
    /// since; a new sandbox needs its floor free, and its limits must fit
    /// the worker's capacity.
    Usage {
        cpu_floor_millis: i64,
        memory_floor_mib: i64,
    },
}

impl Placement {
    /// A worker's candidate: `held` is what its live sandboxes hold at
    /// their limits (`sandboxes` their count), `used` its last report.
    pub fn candidate(
        self,
        worker_id: String,
        capacity: Amount,
        held: Amount,
        used: Option<Amount>,
    ) -> Candidate {
        let allocated = match self {
            Placement::Limits => held,
            Placement::Usage {
                cpu_floor_millis,
                memory_floor_mib,
            } => {
                let used = used.unwrap_or_default();
                // Placed since the report: not in its figures yet.
                let new = (held.sandboxes - used.sandboxes).max(0);
                Amount {
                    cpu_millis: used.cpu_millis + new * cpu_floor_millis,
                    memory_mib: used.memory_mib + new * memory_floor_mib,
                    sandboxes: held.sandboxes,
                }
            }
        };
        Candidate {
            worker_id,
            capacity,
            allocated,
        }
    }

    /// What the fair share is a share of, from the workers' `total`
    /// capacity: by limits, every dimension; by usage, the sandbox slots
    /// only, since a sum of limits says nothing of the room hosts have
    /// (cpu and memory are then left uncapped).
    pub fn share_of(self, total: Amount) -> Amount {
        match self {
            Placement::Limits => total,
            Placement::Usage { .. } => Amount {
                cpu_millis: i64::MAX,
                memory_mib: i64::MAX,
                sandboxes: total.sandboxes,
            },
        }
    }

    /// What a sandbox of limits `req` takes from a worker's free room.
    fn demand(self, req: &Amount) -> Amount {
        match self {
            Placement::Limits => req.clone(),
            Placement::Usage {
                cpu_floor_millis,
                memory_floor_mib,
            } => Amount {
                cpu_millis: cpu_floor_millis.min(req.cpu_millis),
                memory_mib: memory_floor_mib.min(req.memory_mib),
                sandboxes: req.sandboxes,
            },
        }
    }
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

/// Picks a worker for a sandbox of limits `req`, or None when none fits.
pub fn place<'a>(
    candidates: &'a [Candidate],
    req: &Amount,
    mode: Placement,
) -> Option<&'a Candidate> {
    let demand = mode.demand(req);
    let within = |c: &Candidate| {
        req.cpu_millis <= c.capacity.cpu_millis && req.memory_mib <= c.capacity.memory_mib
    };
    candidates
        .iter()
        .filter(|c| within(c) && c.fits(&demand))
        .max_by(|a, b| {
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
        assert_eq!(place(&ws, &req, Placement::Limits).unwrap().worker_id, "b");
        let big = Amount {
            cpu_millis: 3500,
            memory_mib: 512,
            sandboxes: 1,
        };
        assert!(place(&ws, &big, Placement::Limits).is_none());
        assert!(place(&[], &req, Placement::Limits).is_none());
    }

    #[test]
    fn usage_placement_counts_what_is_used_and_a_floor_for_the_unreported() {
        let a = |cpu, mem, n| Amount {
            cpu_millis: cpu,
            memory_mib: mem,
            sandboxes: n,
        };
        let mode = Placement::Usage {
            cpu_floor_millis: 10,
            memory_floor_mib: 32,
        };
        let cap = a(8000, 24_000, 500);
        let one = a(1000, 512, 1);
        // 100 idle sandboxes at 1 cpu and 512 MiB each: their limits are
        // 100 cpus and 50 GiB, but the host reports 300 millis and 2 GiB
        // in use, so there is room; by limits there is none.
        let held = a(100_000, 51_200, 100);
        let used = a(300, 2000, 100);
        let c = mode.candidate("w".into(), cap.clone(), held.clone(), Some(used.clone()));
        assert_eq!(c.allocated, a(300, 2000, 100));
        assert!(place(std::slice::from_ref(&c), &one, mode).is_some());
        let l = Placement::Limits.candidate("w".into(), cap.clone(), held.clone(), Some(used));
        assert!(place(&[l], &one, Placement::Limits).is_none());
        // Ten placed since the report count at the floor until the next.
        let held = a(110_000, 56_320, 110);
        let c = mode.candidate("w".into(), cap.clone(), held, Some(a(300, 2000, 100)));
        assert_eq!(c.allocated, a(400, 2320, 110));
        // Before any report, every sandbox is at the floor.
        let c = mode.candidate("w".into(), cap.clone(), a(5000, 2560, 5), None);
        assert_eq!(c.allocated, a(50, 160, 5));
        // Memory really in use is honest: a host that is full refuses.
        let full = mode.candidate("w".into(), cap.clone(), a(0, 0, 3), Some(a(0, 23_990, 3)));
        assert!(place(&[full], &one, mode).is_none());
        // A sandbox larger than the worker never fits, however idle it is.
        let c = mode.candidate("w".into(), cap.clone(), a(0, 0, 0), Some(a(0, 0, 0)));
        assert!(place(std::slice::from_ref(&c), &a(9000, 512, 1), mode).is_none());
        assert!(place(std::slice::from_ref(&c), &a(1000, 30_000, 1), mode).is_none());
        // The fair share caps slots only: limits say nothing of room.
        let share = mode.share_of(cap.clone());
        assert_eq!(
            over_share(&a(100_000, 51_200, 100), &one, &share, 0.5),
            None
        );
        assert!(over_share(&a(0, 0, 250), &one, &share, 0.5).is_some());
        assert_eq!(Placement::Limits.share_of(cap.clone()), cap);
        // The slot count still holds.
        let c = mode.candidate("w".into(), cap, a(0, 0, 500), Some(a(0, 0, 500)));
        assert!(place(&[c], &one, mode).is_none());
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
