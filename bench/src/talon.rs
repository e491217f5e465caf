//! The figures measured through the public API of a real `talon up`, each
//! beside its baseline. Sandboxes are made with the SDK (gRPC), the way
//! an agent framework would.

use crate::baseline::{self, OciBaseline};
use crate::platform::{Options, Platform};
use crate::probes::*;
use crate::stats::Stats;
use crate::{Args, Row};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use talon_sdk::{Client, CreateOptions, RunOptions, Sandbox};

pub(crate) fn row(
    key: &str,
    figure: &str,
    unit: &str,
    talon: Stats,
    baseline: &str,
    base: Stats,
    target: (&str, Option<bool>),
) -> Row {
    let ratio = if base.p50 > 0.0 {
        talon.p50 / base.p50
    } else {
        0.0
    };
    Row {
        key: key.into(),
        figure: figure.into(),
        unit: unit.into(),
        talon,
        baseline: baseline.into(),
        base,
        ratio,
        target: target.0.into(),
        meets: target.1,
        goal: None,
    }
}

pub(crate) fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

pub(crate) async fn exec_true(sb: &Sandbox) -> anyhow::Result<()> {
    let r = sb
        .commands()
        .run(&argv(&["true"]), RunOptions::default())
        .await?;
    anyhow::ensure!(r.exit_code == 0, "true exited {}", r.exit_code);
    Ok(())
}

/// Create (wait until running) and the first exec, timed; the sandbox.
pub(crate) async fn create_to_ready(
    c: &Client,
    o: CreateOptions,
) -> anyhow::Result<(Duration, Duration, Sandbox)> {
    let t0 = Instant::now();
    let sb = c.create(o).await?;
    let created = t0.elapsed();
    exec_true(&sb).await?;
    Ok((t0.elapsed(), created, sb))
}

pub(crate) async fn timed<F, Fut>(
    warmup: usize,
    runs: usize,
    mut f: F,
) -> anyhow::Result<Vec<Duration>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Duration>>,
{
    for _ in 0..warmup {
        f().await?;
    }
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        v.push(f().await?);
    }
    Ok(v)
}

pub(crate) fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    // The baselines are synchronous and short; run them on this thread
    // of the runtime's blocking pool so no async work shares the core.
    std::thread::spawn(f)
        .join()
        .map_err(|_| anyhow::anyhow!("baseline thread panicked"))?
}

pub async fn run_all(
    args: &Args,
    talon: &Path,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<Row>> {
    const FIGURES: &[&str] = &[
        "create",
        "pool",
        "exec",
        "pty",
        "file",
        "get",
        "browser",
        "code",
        "snapshot",
        "gvisor",
        "density",
        "sdk",
        "multi",
        "durability",
        "console",
    ];
    if let Some(bad) = args.only.iter().find(|o| !FIGURES.contains(&o.as_str())) {
        anyhow::bail!("--only {bad}: not one of {}", FIGURES.join(", "));
    }
    let (runs, warm) = (args.runs(), args.warmup());
    let density = args.density_max();
    let p = Platform::up(Options {
        talon,
        agent: &args.agent,
        max_sandboxes: density + 8,
        // cpu limits are time shares; the density run asks 250m of each.
        extra: argv(&["--prewarm-pool-size", "0", "--cpu-overcommit", "200"]),
    })
    .await?;
    let c = p.client().await?;
    raise_quota(&p, density + 8).await?;
    let mut rows = Vec::new();
    let want = |k: &str| args.only.is_empty() || args.only.iter().any(|o| o == k);

    // -- create to ready, cold, against the OCI runtimes on the same bundle
    let cold_runs = runs.min(50);
    let mut total = Vec::new();
    let mut create_only = Vec::new();
    for i in 0..if want("create") { warm + cold_runs } else { 0 } {
        let (t, created, sb) = create_to_ready(&c, CreateOptions::default()).await?;
        if i >= warm {
            total.push(t);
            create_only.push(created);
        }
        sb.kill().await?;
    }
    eprintln!("create-to-ready (cold): {:?}", Stats::ms(&total));
    // A live sandbox whose bundle the baselines run.
    let sb = c.create(CreateOptions::default()).await?;
    let work = tempfile::Builder::new()
        .prefix("talon-bench-oci-")
        .tempdir_in("/var/tmp")?;
    let mut oci = Vec::new();
    for rt in baseline::runtimes()
        .into_iter()
        .filter(|_| want("create") || want("pool"))
    {
        let b = OciBaseline::new(&rt, &p.sandbox_dir(sb.id()), work.path(), &["/bin/true"])?;
        let v = blocking(move || b.timed_runs("bench", warm, cold_runs))?;
        eprintln!("{rt} run true: {:?}", Stats::ms(&v.1));
        oci.push(v);
    }
    anyhow::ensure!(
        !oci.is_empty() || !(want("create") || want("pool")),
        "neither runc nor crun is installed"
    );
    let runc = oci.first().map(|o| Stats::ms(&o.1));
    if want("create") {
        let runc = runc.clone().expect("measured above");
        let cold = Stats::ms(&total);
        rows.push(row(
            "create_cold",
            "create-to-ready, cold (Create + first exec)",
            "ms",
            cold.clone(),
            &format!("`{} run` true", oci[0].0.runtime),
            runc.clone(),
            ("p50 < 50 ms", Some(cold.p50 < 50.0)),
        ));
        for (b, v) in oci.iter().skip(1) {
            rows.push(row(
                &format!("create_cold_vs_{}", b.runtime),
                "create-to-ready, cold",
                "ms",
                cold.clone(),
                &format!("`{} run` true", b.runtime),
                Stats::ms(v),
                ("p50 < 50 ms", Some(cold.p50 < 50.0)),
            ));
        }
        rows.push(row(
            "create_call",
            "Create(wait_until_running) alone",
            "ms",
            Stats::ms(&create_only),
            &format!("`{} run` true", oci[0].0.runtime),
            runc.clone(),
            ("", None),
        ));
    }

    // -- exec round trip
    if want("exec") {
        // Talon's runs and the baseline's alternate, so that both see the
        // same machine: a sub-ms fork+exec moves with the host's load,
        // and run back to back the two halves saw different moments.
        let (mut v, mut base) = (Vec::new(), Vec::new());
        for i in 0..warm * 4 + runs * 2 {
            let t0 = Instant::now();
            exec_true(&sb).await?;
            let t = t0.elapsed();
            let b = blocking(baseline::fork_exec_true)?;
            if i >= warm * 4 {
                v.push(t);
                base.push(b);
            }
        }
        let ex = Stats::ms(&v);
        let meets = ex.p50 < 2.0;
        rows.push(row(
            "exec_true",
            "exec round trip of `true`, output collected",
            "ms",
            ex,
            "fork+exec `true`",
            Stats::ms(&base),
            ("p50 < 2 ms", Some(meets)),
        ));
    }

    // -- PTY keystroke echo
    if want("pty") {
        let v = pty_echo(&c, sb.id(), warm * 4, runs * 2).await?;
        let n = warm * 4 + runs * 2;
        // The baseline is one unary RPC to the same server: a keystroke's
        // echo is a few such hops, so the ratio says how many, and both
        // sides scale alike with the host's CPU and wake-up latency. The
        // host PTY echo of the same program is only a note: a few µs of
        // kernel work whose p50 moved 10-140 µs between hosts and runs,
        // which swung its ratio from 30x to 178x with talon unchanged.
        let rpc = rpc_round_trips(&p, warm * 4, runs * 2).await?;
        let host = blocking(move || {
            let mut pty = baseline::HostPty::open()?;
            let mut v = Vec::new();
            for i in 0..n {
                let t = pty.echo_once()?;
                if i >= warm * 4 {
                    v.push(t);
                }
            }
            Ok(v)
        })?;
        let pt = Stats::ms(&v);
        let (meets, talon_p50) = (pt.p50 < 1.0, pt.p50);
        rows.push(row(
            "pty_echo",
            "PTY keystroke echo (raw-mode cat)",
            "ms",
            pt,
            "gRPC health Check, same server, one client",
            Stats::ms(&rpc),
            ("< 1 ms", Some(meets)),
        ));
        let host = Stats::ms(&host);
        notes.push(format!(
            "PTY: the same program on a host PTY echoes in {:.3} ms p50 ({:.3} p99): {:.0}x under talon's, kernel work only.",
            host.p50,
            host.p99,
            if host.p50 > 0.0 { talon_p50 / host.p50 } else { 0.0 },
        ));
    }

    // -- file API: write then read N MiB
    if want("file") {
        let mib = args.file_mib();
        let data: Arc<Vec<u8>> =
            Arc::new((0..mib << 20).map(|i| (i * 7 + i / 4093) as u8).collect());
        let file_runs = if args.short { 2 } else { 5 };
        let (mut w, mut r) = (Vec::new(), Vec::new());
        for i in 0..file_runs + 1 {
            let t0 = Instant::now();
            sb.files().write("/tmp/bench.bin", &data).await?;
            let tw = t0.elapsed();
            let t1 = Instant::now();
            let back = sb.files().read("/tmp/bench.bin").await?;
            let tr = t1.elapsed();
            anyhow::ensure!(
                back.len() == data.len() && back == *data,
                "the file came back different"
            );
            if i > 0 {
                w.push(tw);
                r.push(tr);
            }
        }
        let rate =
            |v: &[Duration]| Stats::of(v.iter().map(|d| mib as f64 / d.as_secs_f64()).collect());
        let dir = p.dir.path().to_path_buf();
        let d2 = data.clone();
        let (bw, br) = blocking(move || {
            let (mut bw, mut br) = (Vec::new(), Vec::new());
            for i in 0..file_runs + 1 {
                let (w, r) = baseline::raw_file(&dir, &d2)?;
                if i > 0 {
                    bw.push(w);
                    br.push(r);
                }
            }
            Ok((bw, br))
        })?;
        let both = |a: &[Duration], b: &[Duration]| -> Vec<Duration> {
            a.iter().zip(b).map(|(x, y)| *x + *y).collect()
        };
        let wr = Stats::of(
            both(&w, &r)
                .iter()
                .map(|d| 2.0 * mib as f64 / d.as_secs_f64())
                .collect(),
        );
        let base_wr = Stats::of(
            both(&bw, &br)
                .iter()
                .map(|d| 2.0 * mib as f64 / d.as_secs_f64())
                .collect(),
        );
        for (key, figure, t, b, target) in [
            (
                "file_write",
                format!("file write, {mib} MiB"),
                rate(&w),
                rate(&bw),
                ("", None),
            ),
            (
                "file_read",
                format!("file read, {mib} MiB"),
                rate(&r),
                rate(&br),
                ("", None),
            ),
            (
                "file_write_read",
                format!("file write then read, {mib} MiB"),
                wr.clone(),
                base_wr,
                (">= 500 MiB/s", Some(wr.p50 >= 500.0)),
            ),
        ] {
            let mut x = row(
                key,
                &figure,
                "MiB/s",
                t,
                "raw local write+fsync / read",
                b,
                target,
            );
            // A rate: the baseline's over ours, so higher is worse here too.
            x.ratio = if x.talon.p50 > 0.0 {
                x.base.p50 / x.talon.p50
            } else {
                0.0
            };
            rows.push(x);
        }
        notes.push(format!(
        "File figures: {file_runs} runs after one warm-up; the API writes atomically (temp file, fsync, rename), and so does the baseline."
    ));
    }

    // -- GetSandbox under 64 concurrent clients
    if want("get") {
        let secs = args.load_secs();
        let (lat, rps) = load(&p, args.clients, secs, Some(sb.id().to_string())).await?;
        let (blat, brps) = load(&p, args.clients, secs, None).await?;
        let meets = rps >= 5000.0 && lat.p99 < 10.0;
        rows.push(row(
            "get_sandbox_latency",
            &format!("GetSandbox latency, {} clients", args.clients),
            "ms",
            lat,
            "gRPC health Check, same server",
            blat,
            ("p99 < 10 ms", Some(meets)),
        ));
        let mut x = row(
            "get_sandbox_rate",
            &format!("GetSandbox throughput, {} clients", args.clients),
            "calls/s",
            Stats::one(rps),
            "gRPC health Check, same server",
            Stats::one(brps),
            (">= 5000/s", Some(rps >= 5000.0)),
        );
        x.ratio = if rps > 0.0 { brps / rps } else { 0.0 };
        rows.push(x);
    }

    // -- the sandbox's browser: start until its DevTools answer
    if want("browser") && std::path::Path::new(crate::baseline::CHROMIUM).exists() {
        let n = if args.short { 5 } else { 20 };
        // Chromium's start is a burst of processes: the sandbox gets the
        // host's cores, as the baseline has them (under a 1-core quota it
        // takes about twice as long).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
        let bsb = c
            .create(CreateOptions {
                cpu_millis: Some(cores * 1000),
                memory_mib: Some(1024),
                ..Default::default()
            })
            .await?;
        let v = timed(1, n, || async {
            let t0 = Instant::now();
            bsb.browser().start(None, None).await?;
            let t = t0.elapsed();
            bsb.browser().stop().await?;
            Ok(t)
        })
        .await?;
        bsb.kill().await?;
        let base = blocking(move || {
            let profile = tempfile::tempdir()?;
            let mut v = Vec::new();
            for i in 0..=n {
                let t = crate::baseline::chromium_until_cdp(profile.path())?;
                if i > 0 {
                    v.push(t);
                }
            }
            Ok(v)
        })?;
        rows.push(row(
            "browser_start",
            "browser start until its DevTools answer",
            "ms",
            Stats::ms(&v),
            "the same Chromium on the host, same flags",
            Stats::ms(&base),
            ("", None),
        ));
    }
    // -- a code context: RunCode of `1+1` in a warm Python context
    if want("code") && baseline::has_ipykernel() {
        let n = if args.short { 20 } else { 100 };
        let csb = c
            .create(CreateOptions {
                memory_mib: Some(512),
                ..Default::default()
            })
            .await?;
        let ctx = csb
            .code()
            .create_context(talon_sdk::CodeLanguage::Python, None)
            .await?;
        let id = ctx.context_id.clone();
        // Talon's runs and the baseline's alternate, so that both see the
        // same machine.
        let mut jc = baseline::JupyterBaseline::start().await?;
        let (mut v, mut base) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..3 + n {
            let t0 = Instant::now();
            let x = csb
                .code()
                .run("1+1", talon_sdk::RunIn::Context(&id), None, |_| {})
                .await?;
            let t = t0.elapsed();
            anyhow::ensure!(x.text() == Some("2"), "1+1 gave {x:?}");
            let b = jc.run().await?;
            if i >= 3 {
                v.push(t);
                base.push(b);
            }
        }
        jc.stop().await?;
        csb.kill().await?;
        rows.push(row(
            "code_run",
            "RunCode of 1+1 in a warm Python context",
            "ms",
            Stats::ms(&v),
            "the same ipykernel driven by jupyter_client on the host",
            Stats::ms(&base),
            ("", None),
        ));
    }
    // -- snapshots: CreateSnapshot of a workspace, and a fork of 5
    if want("snapshot") {
        crate::snapshots::rows(&p, &c, args, &mut rows, notes).await?;
    }
    // -- the gvisor isolation level, against runsc on the same bundle
    if want("gvisor") {
        crate::gvisor::rows(&p, &c, args, &mut rows, notes).await?;
    }
    sb.kill().await?;

    // -- the same through the other SDKs, over REST
    if want("sdk") {
        crate::sdks::rows(args, &p, &c, &mut rows).await?;
    }

    // -- density
    if want("density") {
        let (per, n, why) =
            density_run(&c, density, Duration::from_secs(args.density_secs())).await?;
        notes.push(format!("Density: {n} idle sandboxes started ({why})."));
        let m = n.clamp(1, 50);
        let sb = c.create(CreateOptions::default()).await?;
        let bdir = p.sandbox_dir(sb.id());
        let wp = work.path().to_path_buf();
        let base_per = blocking(move || {
            let b = OciBaseline::new("runc", &bdir, &wp, &["sleep", "infinity"])?;
            let before = settle_memory();
            for i in 0..m {
                b.start_detached(&format!("idle-{i}"))?;
            }
            let after = settle_memory();
            eprintln!(
                "density baseline: {m} runc containers, in use {} -> {} MiB",
                before >> 20,
                after >> 20
            );
            for i in 0..m {
                b.delete(&format!("idle-{i}"));
            }
            Ok(after.saturating_sub(before) as f64 / m as f64 / (1 << 20) as f64)
        })?;
        sb.kill().await?;
        notes.push(format!("Density baseline: {m} `runc run --detach` containers of `sleep infinity` on the same bundle."));
        rows.push(row(
            "density",
            "host memory per idle sandbox",
            "MiB",
            Stats::one(per),
            "runc container of `sleep`",
            Stats::one(base_per),
            ("< 8 MiB, 500 sandboxes", Some(per < 8.0 && n >= 500)),
        ));
    }
    drop(c);
    drop(p);

    // -- the web console, in Chromium against its stand-in gateway
    if want("console") {
        crate::console::rows(args, &mut rows, notes)?;
    }

    // -- several servers and workers: GetSandbox through two, failover
    if want("durability") {
        crate::durability::rows(args, talon, &mut rows, notes).await?;
    }
    if want("multi") {
        crate::multinode::rows(args, talon, &mut rows, notes).await?;
    }

    // -- create to ready from the prewarm pool, on a platform with one
    if args.pool_size > 0 && want("pool") {
        let runc = runc.expect("measured above");
        let p = Platform::up(Options {
            talon,
            agent: &args.agent,
            max_sandboxes: 64,
            extra: vec!["--prewarm-pool-size".into(), args.pool_size.to_string()],
        })
        .await?;
        let c = p.client().await?;
        let pool_runs = runs.min(50);
        let mut v = Vec::new();

        // Pools form on demand: the first create of a shape is cold and
        // asks the worker to keep that shape ready.
        c.create(CreateOptions::default()).await?.kill().await?;
        let mut hits0 = 0.0;
        for i in 0..warm + pool_runs {
            // The pool is filled in the background; time a claim, not a refill.
            wait_pool(&p, 1.0).await?;
            if i == warm {
                hits0 = p.metric("sandbox_prewarm_hits_total").await?;
            }
            let (t, _, sb) = create_to_ready(&c, CreateOptions::default()).await?;
            if i >= warm {
                v.push(t);
            }
            sb.kill().await?;
        }
        // The worker reports its counters as they change; give it a beat.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let hits = p.metric("sandbox_prewarm_hits_total").await? - hits0;
        let misses = pool_runs as f64 - hits;
        let pool = Stats::ms(&v);
        notes.push(format!(
            "From the pool (size {}): {hits} of {pool_runs} timed creates were pool hits ({misses} built cold).",
            args.pool_size
        ));
        let meets = pool.p50 < 10.0;
        rows.insert(
            rows.len().min(1),
            row(
                "create_pool",
                "create-to-ready, from the prewarm pool",
                "ms",
                pool,
                &format!("`{} run` true", oci[0].0.runtime),
                runc,
                ("p50 < 10 ms", Some(meets)),
            ),
        );
    }
    Ok(rows)
}
