//! What this host has in use, for the control plane's placement: the
//! busy share of its cpus since the last reading (`/proc/stat`) and its
//! memory in use (`MemTotal - MemAvailable`, which leaves out what the
//! kernel can reclaim). Host-wide rather than per sandbox: the worker, its
//! sandboxes and everything else on the host take from the same room, and
//! it reads the same under cgroup v1 and v2.

/// Cpu time counters of the `cpu` line of /proc/stat: (busy, total).
pub fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is
    // already counted in user and nice).
    if v.len() < 4 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let idle = at(3) + at(4);
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    Some((busy, busy + idle))
}

/// Memory in use, in MiB, from /proc/meminfo.
pub fn parse_meminfo(meminfo: &str) -> Option<i64> {
    let field = |name: &str| {
        meminfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<i64>().ok())
    };
    let (total, available) = (field("MemTotal:")?, field("MemAvailable:")?);
    Some((total - available).max(0) / 1024)
}

/// Readings of the host's load, each against the one before.
#[derive(Default)]
pub struct Load {
    last: Option<(u64, u64)>,
}

impl Load {
    /// Cpu in use (thousandths of a core, averaged since the last call;
    /// zero on the first) and memory in use (MiB).
    pub fn sample(&mut self) -> (i64, i64) {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let now = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| parse_stat(&s));
        let cpu = match (self.last, now) {
            (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
                (b1.saturating_sub(b0) as f64 / (t1 - t0) as f64 * cpus * 1000.0) as i64
            }
            _ => 0,
        };
        if now.is_some() {
            self.last = now;
        }
        let mem = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| parse_meminfo(&s))
            .unwrap_or(0);
        (cpu, mem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc_stat_and_meminfo() {
        let stat = "cpu  100 5 45 800 50 0 0 0 0 0\ncpu0 50 2 20 400 25 0 0 0 0 0\n";
        assert_eq!(parse_stat(stat), Some((150, 1000)));
        assert_eq!(parse_stat("intr 1 2\n"), None);
        let mi = "MemTotal:       24000000 kB\nMemFree:  1000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(parse_meminfo(mi), Some(3906));
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
        // The live host reads, and a second reading has a cpu figure.
        let mut l = Load::default();
        let (_, mem) = l.sample();
        assert!(mem > 0);
        let (cpu, _) = l.sample();
        assert!(cpu >= 0);
    }
}
