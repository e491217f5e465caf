//! Secrets: write-only, encrypted at rest, tenant-scoped, and delivered to
//! the worker inside the sandbox spec.

mod common;
use common::*;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1 as pb;
use tonic::Code;

fn put(name: &str, value: &str, delivery: pb::SecretDelivery) -> pb::PutSecretRequest {
    pb::PutSecretRequest {
        name: name.into(),
        value: value.into(),
        delivery: delivery as i32,
        expire_time: None,
    }
}

async fn secret_client(
    s: &Server,
    token: &str,
) -> pb::secret_service_client::SecretServiceClient<Authed> {
    let b = Bearer(Some(format!("Bearer {token}").parse().unwrap()));
    pb::secret_service_client::SecretServiceClient::with_interceptor(s.channel().await, b)
}

#[tokio::test]
async fn secrets_are_write_only_scoped_and_encrypted() {
    let s = Server::start().await;
    let a = tenant(&s, "sa").await;
    let b = tenant(&s, "sb").await;
    let mut ca = secret_client(&s, &a.developer).await;
    let mut cb = secret_client(&s, &b.developer).await;
    let plain = "sk-live-very-secret-value-0123456789";
    ca.put_secret(put("OPENAI_API_KEY", plain, pb::SecretDelivery::Env))
        .await
        .unwrap();
    ca.put_secret(put(
        "OPENAI_API_KEY",
        "replaced-value-abcdefghijkl",
        pb::SecretDelivery::Env,
    ))
    .await
    .unwrap();
    let list = ca
        .list_secrets(pb::ListSecretsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .secrets;
    assert_eq!(list.len(), 1, "a put with the same name replaces");
    assert_eq!(list[0].name, "OPENAI_API_KEY");
    assert!(
        cb.list_secrets(pb::ListSecretsRequest::default())
            .await
            .unwrap()
            .into_inner()
            .secrets
            .is_empty()
    );
    assert_eq!(
        code(
            cb.delete_secret(pb::DeleteSecretRequest {
                name: "OPENAI_API_KEY".into()
            })
            .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            ca.put_secret(put("lower-case", "x", pb::SecretDelivery::Env))
                .await
        ),
        Code::InvalidArgument
    );
    let big = "x".repeat(64 * 1024 + 1);
    assert_eq!(
        code(
            ca.put_secret(put("BIG", &big, pb::SecretDelivery::Env))
                .await
        ),
        Code::InvalidArgument
    );
    // Neither value is in the database files in clear.
    for f in ["talon.db", "talon.db-wal"] {
        let bytes = std::fs::read(s.data_dir().join(f)).unwrap_or_default();
        for v in [plain, "replaced-value-abcdefghijkl"] {
            assert!(
                !bytes.windows(v.len()).any(|w| w == v.as_bytes()),
                "{v} in clear in {f}"
            );
        }
    }
    ca.delete_secret(pb::DeleteSecretRequest {
        name: "OPENAI_API_KEY".into(),
    })
    .await
    .unwrap();
    assert!(
        ca.list_secrets(pb::ListSecretsRequest::default())
            .await
            .unwrap()
            .into_inner()
            .secrets
            .is_empty()
    );
}

#[tokio::test]
async fn named_secrets_reach_the_worker_in_the_spec() {
    let s = Server::start().await;
    let t = tenant(&s, "inject").await;
    let mut w = TestWorker::connect(&s, "wrk_s", Behaviour::Obey).await;
    let mut sec = secret_client(&s, &t.developer).await;
    sec.put_secret(put("TOKEN", "tok-123", pb::SecretDelivery::Env))
        .await
        .unwrap();
    sec.put_secret(put("CERT", "-----BEGIN-----", pb::SecretDelivery::File))
        .await
        .unwrap();
    let mut dev = s.as_(&t.developer).await;
    let mk = |names: Vec<&str>, env: Vec<(&str, &str)>| pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            secret_names: names.into_iter().map(String::from).collect(),
            env: env
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }),
        wait_until_running: true,
        wait_timeout: None,
        ..Default::default()
    };
    let sb = dev
        .sandboxes
        .create_sandbox(mk(vec!["TOKEN", "CERT"], vec![("PLAIN", "1")]))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(sb.secret_names, vec!["TOKEN", "CERT"]);
    let cmd = tokio::time::timeout(Duration::from_secs(5), w.commands.recv())
        .await
        .unwrap()
        .unwrap();
    let Some(wpb::command::Action::Create(c)) = cmd.action else {
        panic!("{cmd:?}")
    };
    let spec = c.spec.unwrap();
    assert_eq!(spec.env.get("TOKEN").map(String::as_str), Some("tok-123"));
    assert_eq!(spec.env.get("PLAIN").map(String::as_str), Some("1"));
    assert_eq!(
        spec.secret_files.get("CERT").map(Vec::as_slice),
        Some(&b"-----BEGIN-----"[..])
    );
    assert!(!spec.env.contains_key("CERT"));
    // A missing secret or a clash with env creates nothing.
    assert_eq!(
        code(dev.sandboxes.create_sandbox(mk(vec!["NOPE"], vec![])).await),
        Code::FailedPrecondition
    );
    assert_eq!(
        code(
            dev.sandboxes
                .create_sandbox(mk(vec!["TOKEN"], vec![("TOKEN", "x")]))
                .await
        ),
        Code::InvalidArgument
    );
    let all = dev
        .sandboxes
        .list_sandboxes(pb::ListSandboxesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .sandboxes;
    assert_eq!(all.len(), 1);
}

/// Secrets change in sandboxes already running: a rotated file is
/// replaced in /run/secrets and a rotated variable reaches new processes;
/// a deleted or expired one leaves them (an expired one through the
/// worker's own sweep, documented as within 2 s, plus the server's purge
/// every second); neither comes back at a restart, and an expired secret
/// is refused to a new sandbox. A rotation while the sandbox is paused
/// reaches it at the thaw.
#[tokio::test(flavor = "multi_thread")]
async fn secrets_change_in_running_sandboxes() {
    ensure_agent_built();
    let s = Server::up().await;
    let key = s.boot.api_key.clone();
    let mut sec = secret_client(&s, &key).await;
    let mut c = s.as_(&key).await;
    until_worker(&mut c, true).await;
    let b = Bearer(Some(format!("Bearer {key}").parse().unwrap()));
    let mut p = procs_client(s.channel().await, b);
    let soon = |secs: i64| {
        let t = talon_core::time::now_ms() + secs * 1000;
        Some(talon_core::time::ms_to_timestamp(t))
    };
    let file = pb::SecretDelivery::File;
    let env = pb::SecretDelivery::Env;
    for (name, value, delivery) in [
        ("ROT_FILE", "one", file),
        ("ROT_ENV", "one", env),
        ("GONE_FILE", "gone", file),
    ] {
        sec.put_secret(put(name, value, delivery)).await.unwrap();
    }
    // Long enough to create the sandbox and see both first.
    let expiring = 8;
    for (name, delivery) in [("EXP_FILE", file), ("EXP_ENV", env)] {
        sec.put_secret(pb::PutSecretRequest {
            expire_time: soon(expiring),
            ..put(name, "short-lived", delivery)
        })
        .await
        .unwrap();
    }
    let t0 = std::time::Instant::now();
    let names = ["ROT_FILE", "ROT_ENV", "GONE_FILE", "EXP_FILE", "EXP_ENV"];
    let mut req = create_req(true, 60);
    req.sandbox.as_mut().unwrap().secret_names = names.iter().map(|n| n.to_string()).collect();
    let id = c
        .sandboxes
        .create_sandbox(req.clone())
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
        .sandbox_id;
    let show = "for f in ROT_FILE GONE_FILE EXP_FILE; do echo \"$f=$(cat /run/secrets/$f 2>/dev/null)\"; done; \
                echo ROT_ENV=$ROT_ENV; echo EXP_ENV=$EXP_ENV; ls -A /run/secrets | tr '\\n' ' '";
    let view = async |p: &mut Procs| exec(p, &id, &["sh", "-c", show]).await.0;
    let first = view(&mut p).await;
    for want in [
        "ROT_FILE=one",
        "GONE_FILE=gone",
        "EXP_FILE=short-lived",
        "ROT_ENV=one",
        "EXP_ENV=short-lived",
    ] {
        assert!(first.contains(want), "{want} in {first}");
    }

    // Rotated and deleted: files at once, variables for new processes.
    sec.put_secret(put("ROT_FILE", "two", file)).await.unwrap();
    sec.put_secret(put("ROT_ENV", "two", env)).await.unwrap();
    sec.delete_secret(pb::DeleteSecretRequest {
        name: "GONE_FILE".into(),
    })
    .await
    .unwrap();
    let until = async |p: &mut Procs, want: &[&str], not: &[&str], within: Duration| {
        let t = std::time::Instant::now();
        loop {
            let out = exec(p, &id, &["sh", "-c", show]).await.0;
            if want.iter().all(|w| out.contains(w)) && !not.iter().any(|n| out.contains(n)) {
                return (out, t.elapsed());
            }
            assert!(t.elapsed() < within, "want {want:?}, not {not:?}: {out}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let (_, took) = until(
        &mut p,
        &["ROT_FILE=two", "ROT_ENV=two", "GONE_FILE=\n"],
        &[],
        Duration::from_secs(5),
    )
    .await;
    eprintln!("rotation and delete reached the sandbox in {took:?}");

    // Expired: gone within the documented 2 s of the expiry (a little
    // more for the polling here).
    let (out, _) = until(
        &mut p,
        &["EXP_FILE=\n", "EXP_ENV=\n"],
        &[],
        Duration::from_secs(expiring as u64 + 10),
    )
    .await;
    let late = t0.elapsed().as_secs_f64() - expiring as f64;
    eprintln!("expired secrets left the sandbox {late:.1} s after their expiry");
    assert!(late < 4.0, "expired secrets lingered {late:.1} s: {out}");
    let listed = out.lines().last().unwrap_or_default().to_string();
    assert_eq!(
        listed.split_whitespace().collect::<Vec<_>>(),
        ["ROT_FILE"],
        "{out}"
    );

    // Paused: a rotation reaches the file at once and the environment at the thaw.
    c.sandboxes
        .pause_sandbox(pb::PauseSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    sec.put_secret(put("ROT_ENV", "three", env)).await.unwrap();
    sec.put_secret(put("ROT_FILE", "three", file))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    c.sandboxes
        .resume_sandbox(pb::ResumeSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    until(
        &mut p,
        &["ROT_FILE=three", "ROT_ENV=three"],
        &[],
        Duration::from_secs(5),
    )
    .await;

    // A restart boots from what the worker now keeps.
    c.sandboxes
        .stop_sandbox(pb::StopSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    until_state(&mut c, &id, pb::SandboxState::Stopped).await;
    c.sandboxes
        .start_sandbox(pb::StartSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    until_state(&mut c, &id, pb::SandboxState::Running).await;
    let out = view(&mut p).await;
    for want in [
        "ROT_FILE=three",
        "ROT_ENV=three",
        "GONE_FILE=\n",
        "EXP_FILE=\n",
        "EXP_ENV=\n",
    ] {
        assert!(out.contains(want), "{want} after a restart: {out}");
    }

    // An expired secret is refused to a new sandbox.
    assert_eq!(
        code(c.sandboxes.create_sandbox(req).await),
        Code::FailedPrecondition
    );
}

/// A rotation made while a sandbox's worker is away (its containers run
/// on) reaches the sandbox when the worker registers again.
#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_made_while_the_worker_was_away_reaches_it_on_return() {
    ensure_agent_built();
    let s = Server::start().await;
    let key = s.boot.api_key.clone();
    let mut sec = secret_client(&s, &key).await;
    let mut c = s.as_(&key).await;
    let b = Bearer(Some(format!("Bearer {key}").parse().unwrap()));
    let mut p = procs_client(s.channel().await, b);
    let w = spawn_worker(&s);
    until_worker(&mut c, true).await;
    sec.put_secret(put("CERT", "before", pb::SecretDelivery::File))
        .await
        .unwrap();
    let mut req = create_req(true, 60);
    req.sandbox.as_mut().unwrap().secret_names = vec!["CERT".into()];
    let id = c
        .sandboxes
        .create_sandbox(req)
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
        .sandbox_id;
    let cat = ["cat", "/run/secrets/CERT"];
    assert_eq!(exec(&mut p, &id, &cat).await.0, "before");

    drop(w);
    until_worker(&mut c, false).await;
    sec.put_secret(put("CERT", "after", pb::SecretDelivery::File))
        .await
        .unwrap();
    let _w = spawn_worker(&s);
    until_worker(&mut c, true).await;
    let t = std::time::Instant::now();
    loop {
        let (out, _, _) = exec(&mut p, &id, &cat).await;
        if out == "after" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "still {out:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: id })
        .await
        .unwrap();
}
