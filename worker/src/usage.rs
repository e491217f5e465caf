//! What one sandbox uses now: cpu and memory from its cgroup, disk from
//! its filesystem. The cgroup is found from the container's init
//! (`/proc/PID/cgroup`) rather than from the runtime's naming, so the same
//! code reads libcontainer's and an OCI CLI runtime's sandboxes, on cgroup
//! v1, v2 and this host's hybrid of the two. Cpu in use is a rate, so it
//! needs two readings: the one before is kept per sandbox and used when it
//! is recent enough; otherwise the call waits a short window itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The shortest and longest windows a cpu rate is averaged over.
const MIN_WINDOW: Duration = Duration::from_millis(100);
const MAX_WINDOW: Duration = Duration::from_secs(10);

/// A sandbox's usage at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    pub cpu_time: Duration,
    pub cpu_cores: f64,
    pub mem_used_bytes: u64,
    pub disk_used_bytes: u64,
    pub disk_total_bytes: u64,
}

/// The files that hold one cgroup's counters.
#[derive(Debug, PartialEq)]
pub struct CgroupFiles {
    /// cpuacct.usage (nanoseconds) on v1, cpu.stat (`usage_usec`) on v2.
    pub cpu: PathBuf,
    /// memory.usage_in_bytes on v1, memory.current on v2.
    pub memory: PathBuf,
}

/// Finds the counters of the cgroup that `proc_cgroup` (a process's
/// /proc/PID/cgroup) names, through the mounts in `mountinfo`. A v1
/// controller's own hierarchy wins over the unified one, as in the kernel.
pub fn cgroup_files(proc_cgroup: &str, mountinfo: &str) -> Option<CgroupFiles> {
    let mut v1: HashMap<String, String> = HashMap::new();
    let mut v2: Option<String> = None;
    for line in proc_cgroup.lines() {
        let mut it = line.splitn(3, ':');
        let (_, ctrls, path) = (it.next()?, it.next()?, it.next()?);
        if ctrls.is_empty() {
            v2 = Some(path.to_string());
        } else {
            for c in ctrls.split(',') {
                v1.insert(c.to_string(), path.to_string());
            }
        }
    }
    let mut v1_mounts: HashMap<String, PathBuf> = HashMap::new();
    let mut v2_mount: Option<PathBuf> = None;
    for line in mountinfo.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let mount_point = pre.split(' ').nth(4)?;
        let mut post = post.split(' ');
        let (fstype, _, opts) = (post.next()?, post.next()?, post.next().unwrap_or(""));
        match fstype {
            "cgroup2" => v2_mount = Some(PathBuf::from(mount_point)),
            "cgroup" => {
                for o in opts.split(',') {
                    v1_mounts.insert(o.to_string(), PathBuf::from(mount_point));
                }
            }
            _ => {}
        }
    }
    let join = |mount: &Path, path: &str| mount.join(path.trim_start_matches('/'));
    let v1_file =
        |ctrl: &str, file: &str| Some(join(v1_mounts.get(ctrl)?, v1.get(ctrl)?).join(file));
    let v2_file = |file: &str| Some(join(v2_mount.as_deref()?, v2.as_deref()?).join(file));
    Some(CgroupFiles {
        cpu: v1_file("cpuacct", "cpuacct.usage").or_else(|| v2_file("cpu.stat"))?,
        memory: v1_file("memory", "memory.usage_in_bytes").or_else(|| v2_file("memory.current"))?,
    })
}

/// Cpu time from cpuacct.usage (ns) or cpu.stat's `usage_usec`.
pub fn parse_cpu(file: &Path, text: &str) -> Option<Duration> {
    if file.ends_with("cpu.stat") {
        let usec = text
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec "))?
            .trim()
            .parse()
            .ok()?;
        Some(Duration::from_micros(usec))
    } else {
        Some(Duration::from_nanos(text.trim().parse().ok()?))
    }
}

fn read_counters(f: &CgroupFiles) -> std::io::Result<(Duration, u64)> {
    let bad = |what: &str| std::io::Error::other(format!("{what} does not read"));
    let cpu = parse_cpu(&f.cpu, &std::fs::read_to_string(&f.cpu)?).ok_or_else(|| bad("cpu"))?;
    let mem = std::fs::read_to_string(&f.memory)?
        .trim()
        .parse()
        .map_err(|_| bad("memory"))?;
    Ok((cpu, mem))
}

/// Used and total bytes of the filesystem at `path`.
pub fn disk_usage(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a zeroed statvfs is a valid out-parameter.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `s` a valid out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let frsize = s.f_frsize as u64;
    let total = s.f_blocks as u64 * frsize;
    Ok((total - s.f_bfree as u64 * frsize, total))
}

/// The last cpu reading of each sandbox, for the next call's rate.
#[derive(Default)]
pub struct Sampler(Mutex<HashMap<String, (Instant, Duration)>>);

impl Sampler {
    /// Reads the sandbox whose init is `pid` and whose disk is mounted at
    /// `disk`.
    pub async fn read(&self, id: &str, pid: u32, disk: &Path) -> std::io::Result<Usage> {
        let proc_cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))?;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")?;
        let files = cgroup_files(&proc_cgroup, &mountinfo)
            .ok_or_else(|| std::io::Error::other("the sandbox's cgroup is not found"))?;
        let (mut cpu, mut mem) = read_counters(&files)?;
        let mut now = Instant::now();
        let before = self
            .0
            .lock()
            .expect("sampler")
            .get(id)
            .copied()
            .filter(|(at, used)| {
                let age = now - *at;
                (MIN_WINDOW..=MAX_WINDOW).contains(&age) && *used <= cpu
            });
        let (at, used) = match before {
            Some(b) => b,
            None => {
                let b = (now, cpu);
                tokio::time::sleep(MIN_WINDOW).await;
                (cpu, mem) = read_counters(&files)?;
                now = Instant::now();
                b
            }
        };
        self.0
            .lock()
            .expect("sampler")
            .insert(id.to_string(), (now, cpu));
        let cores = (cpu - used).as_secs_f64() / (now - at).as_secs_f64().max(1e-3);
        let (disk_used, disk_total) = disk_usage(disk)?;
        Ok(Usage {
            cpu_time: cpu,
            cpu_cores: cores,
            mem_used_bytes: mem,
            disk_used_bytes: disk_used,
            disk_total_bytes: disk_total,
        })
    }

    /// Forgets a sandbox that is gone.
    pub fn forget(&self, id: &str) {
        self.0.lock().expect("sampler").remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID_MOUNTS: &str = "\
25 30 0:23 / /sys rw,nosuid - sysfs sysfs rw
31 25 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755
32 31 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate
36 31 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
37 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
";

    #[test]
    fn finds_v1_controllers_before_the_unified_hierarchy() {
        let pc = "12:memory:/talon/sbx_a\n4:cpu,cpuacct:/talon/sbx_a\n0::/talon/sbx_a\n";
        let f = cgroup_files(pc, HYBRID_MOUNTS).unwrap();
        assert_eq!(
            f.cpu,
            PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/talon/sbx_a/cpuacct.usage")
        );
        assert_eq!(
            f.memory,
            PathBuf::from("/sys/fs/cgroup/memory/talon/sbx_a/memory.usage_in_bytes")
        );
    }

    #[test]
    fn reads_v2_alone() {
        let mounts = "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let f = cgroup_files("0::/talon/sbx_b\n", mounts).unwrap();
        assert_eq!(f.cpu, PathBuf::from("/sys/fs/cgroup/talon/sbx_b/cpu.stat"));
        assert_eq!(
            f.memory,
            PathBuf::from("/sys/fs/cgroup/talon/sbx_b/memory.current")
        );
        // Without any mount for the controllers, nothing is found.
        assert_eq!(cgroup_files("0::/x\n", ""), None);
    }

    #[test]
    fn parses_both_cpu_counters() {
        let v2 = "usage_usec 2500000\nuser_usec 1\n";
        assert_eq!(
            parse_cpu(Path::new("/c/cpu.stat"), v2),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(
            parse_cpu(Path::new("/c/cpuacct.usage"), "1500000000\n"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_cpu(Path::new("/c/cpuacct.usage"), "x"), None);
    }

    #[tokio::test]
    async fn reads_this_process_and_its_disk() {
        // The test's own cgroup stands in for a sandbox's: both counters
        // read, and spinning shows up as cpu in use.
        let s = Sampler::default();
        let pid = std::process::id();
        let first = s.read("self", pid, Path::new("/")).await.unwrap();
        assert!(first.mem_used_bytes > 0);
        assert!(first.disk_total_bytes >= first.disk_used_bytes);
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(150) {
            std::hint::black_box(0u64.wrapping_add(1));
        }
        let second = s.read("self", pid, Path::new("/")).await.unwrap();
        assert!(second.cpu_time > first.cpu_time);
        assert!(second.cpu_cores > 0.2, "{second:?}");
    }
}
