//! What integration tests of several crates need from the machine: the
//! static agent (scripts/build-agent.sh) and the debootstrap test image
//! (scripts/test-image.sh). Each is built once per machine or checkout by
//! its script; this runs the script once per test process and gives the
//! path it printed. Not used by the worker itself.

use std::path::PathBuf;
use std::sync::OnceLock;

fn script_output(name: &str) -> PathBuf {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name);
    let out = std::process::Command::new("bash")
        .arg(&script)
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    assert!(out.status.success(), "{} failed", script.display());
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The static talon-agent, debug profile.
pub fn static_agent() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| script_output("build-agent.sh")).clone()
}

/// The root of a minimal Debian bookworm made by debootstrap.
pub fn debian_rootfs() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| script_output("test-image.sh")).clone()
}

/// gVisor's runsc, pinned and static (scripts/install-runsc.sh).
pub fn runsc() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| script_output("install-runsc.sh")).clone()
}
