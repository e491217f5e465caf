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
}
