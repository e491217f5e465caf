//! sandboxctl against a live `talon up` (scripts/test.sh runs this with
//! TALON_GRPC_URL and TALON_API_KEY set; without them it says so and
//! checks nothing).

use std::process::Command;

fn live() -> Option<(String, String)> {
    Some((
        std::env::var("TALON_GRPC_URL").ok()?,
        std::env::var("TALON_API_KEY").ok()?,
    ))
}

fn ctl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sandboxctl"))
        .args(args)
        .output()
        .expect("sandboxctl runs")
}

/// `exec --timeout` says that the process timed out: its exit code alone
/// (137, a kill) read like a crash.
#[test]
fn exec_says_when_a_process_timed_out() {
    let Some(_) = live() else {
        eprintln!("skipped: needs TALON_GRPC_URL and TALON_API_KEY (scripts/test.sh sets them)");
        return;
    };
    let created = ctl(&["create"]);
    assert!(created.status.success(), "{created:?}");
    let id = String::from_utf8(created.stdout)
        .unwrap()
        .trim()
        .to_string();
    let out = ctl(&["exec", "--timeout", "1", &id, "--", "sleep", "30"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(137), "{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    // A process that ends by itself says nothing of the kind.
    let out = ctl(&["exec", &id, "--", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("timed out"));
    assert!(ctl(&["rm", &id]).status.success());
}

/// `agent run` streams a run (output on stdout and stderr, file changes
/// on stderr), exits with the agent's code, and `agent connect` replays
/// it by id through the Rust SDK's reattach.
#[test]
fn agent_run_streams_and_exits_with_the_agents_code() {
    let Some(_) = live() else {
        eprintln!("skipped: needs TALON_GRPC_URL and TALON_API_KEY (scripts/test.sh sets them)");
        return;
    };
    let created = ctl(&["create"]);
    assert!(created.status.success(), "{created:?}");
    let id = String::from_utf8(created.stdout)
        .unwrap()
        .trim()
        .to_string();
    let script = "read t; echo \"got $t\"; echo err >&2; echo x > /workspace/ctl.txt; exit 3";
    let out = ctl(&[
        "agent", "run", &id, "--prompt", "a task", "--", "/bin/sh", "-c", script,
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(stdout, "got a task\n");
    assert!(
        stderr.contains("err") && stderr.contains("~ /workspace/ctl.txt (create)"),
        "{stderr}"
    );
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split_whitespace().next())
        .expect("the run id")
        .to_string();
    let again = ctl(&[
        "-o", "json", "agent", "connect", &id, &run_id, "--after", "1",
    ]);
    let lines = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(3));
    assert!(!lines.contains("\"started\""), "{lines}");
    assert!(
        lines.lines().last().unwrap().contains("\"completed\""),
        "{lines}"
    );
    let _ = ctl(&["rm", &id]);
}

/// `browser start` prints the CDP URL (json: every field), `cdp-url` a
/// fresh one, `screenshot -O -` writes the PNG to stdout, and after
/// `stop` `cdp-url` fails saying why.
#[test]
fn browser_start_screenshot_cdp_url_and_stop() {
    let Some(_) = live() else {
        eprintln!("skipped: needs TALON_GRPC_URL and TALON_API_KEY (scripts/test.sh sets them)");
        return;
    };
    let created = ctl(&["create", "--memory-mib", "1024"]);
    assert!(created.status.success(), "{created:?}");
    let id = String::from_utf8(created.stdout)
        .unwrap()
        .trim()
        .to_string();
    let out = ctl(&[
        "-o",
        "json",
        "browser",
        "start",
        &id,
        "--window-size",
        "900,600",
    ]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "running");
    assert_eq!(v["window_size"], "900,600");
    assert!(v["cdp_url"].as_str().unwrap().contains("/cdp/"), "{v}");
    let url = ctl(&["browser", "cdp-url", &id]);
    assert!(url.status.success());
    assert!(String::from_utf8_lossy(&url.stdout).contains(&format!("/cdp/{id}/")));
    let shot = ctl(&["browser", "screenshot", &id, "-O", "-"]);
    assert!(shot.status.success(), "{shot:?}");
    assert!(shot.stdout.starts_with(b"\x89PNG\r\n\x1a\n"));
    let stop = ctl(&["browser", "stop", &id]);
    assert!(stop.status.success());
    assert_eq!(String::from_utf8_lossy(&stop.stdout).trim(), "stopped");
    let url = ctl(&["browser", "cdp-url", &id]);
    assert!(!url.status.success());
    assert!(String::from_utf8_lossy(&url.stderr).contains("not running"));
    let _ = ctl(&["rm", &id]);
}

/// `snapshot create|ls|get|rm`, `create --snapshot` and `fork`: a file
/// written before the snapshot is in the sandboxes made from it.
#[test]
fn snapshot_create_from_it_and_fork() {
    let Some(_) = live() else {
        eprintln!("skipped: needs TALON_GRPC_URL and TALON_API_KEY (scripts/test.sh sets them)");
        return;
    };
    let text = |o: std::process::Output| {
        assert!(o.status.success(), "{o:?}");
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let id = text(ctl(&["create"]));
    text(ctl(&[
        "exec",
        &id,
        "--",
        "sh",
        "-c",
        "echo kept > /workspace/s.txt",
    ]));
    let snap = text(ctl(&[
        "snapshot",
        "create",
        &id,
        "--name",
        &format!("ctl-{id}"),
    ]));
    assert!(snap.starts_with("snp_"), "{snap}");
    assert!(text(ctl(&["snapshot", "ls", "--sandbox", &id])).contains(&snap));
    let again = text(ctl(&["create", "--snapshot", &snap]));
    let cat = |sbx: &str| text(ctl(&["exec", sbx, "--", "cat", "/workspace/s.txt"]));
    assert_eq!(cat(&again), "kept");
    let forks = text(ctl(&["fork", &id, "--count", "2"]));
    let forks: Vec<&str> = forks.lines().collect();
    assert_eq!(forks.len(), 2, "{forks:?}");
    for f in &forks {
        assert_eq!(cat(f), "kept");
    }
    text(ctl(&["snapshot", "rm", &snap]));
    assert!(!ctl(&["snapshot", "get", &snap]).status.success());
    let mut all = vec![id.as_str(), again.as_str()];
    all.extend(&forks);
    assert!(ctl(&[&["rm"][..], &all[..]].concat()).status.success());
}
