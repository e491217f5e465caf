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
