//! Named volumes (VolumeService) through REST, on one `talon up` whose
//! embedded worker is on the `shared` workspace backend: created, mounted
//! by one sandbox at a time, read and written by the next one from another
//! uid range, mounted read-only, refused where they cannot work, deleted
//! with their files.

mod common;

use common::*;
use serde_json::{Value, json};

async fn create(s: &Server, key: &str, body: Value) -> Result<String, (u16, Value)> {
    rest_create(s, key, body).await
}

async fn sh(s: &Server, key: &str, id: &str, script: &str) -> (String, i64) {
    let c = reqwest::Client::new();
    let events = rest_sh(&c, key, &s.http, id, script).await;
    let code = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|e| e["event"]["exited"]["exitCode"].as_i64())
        .unwrap_or(-1);
    (ndjson_stdout(&events), code)
}

async fn call(
    s: &Server,
    key: &str,
    m: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    rest_json(
        &reqwest::Client::new(),
        key,
        m,
        format!("{}{path}", s.http),
        body,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_volume_outlives_its_sandboxes_and_is_mounted_by_one_at_a_time() {
    use reqwest::Method as M;
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let shared = tempfile::tempdir().unwrap();
    let shared_dir = shared.path().to_str().unwrap().to_string();
    let flags = ["--shared-workspaces", shared_dir.as_str()];
    let (s, local) = tokio::join!(Server::up_with(&flags), Server::up());
    let key = s.boot.api_key.clone();

    // Created, listed; bad input is refused and nothing is made of it.
    let (st, v) = call(
        &s,
        &key,
        M::POST,
        "/v1/volumes",
        Some(json!({"volume": {"name": "data", "sizeMib": 64}})),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    let vol_id = v["volume"]["volumeId"].as_str().unwrap().to_string();
    assert!(vol_id.starts_with("vol_"), "{v}");
    assert_eq!(v["volume"]["sizeMib"], "64", "{v}");
    for (body, want) in [
        (json!({"volume": {"name": "data"}}), 409),
        (json!({"volume": {"name": "Data"}}), 400),
        (json!({"volume": {"name": "big", "sizeMib": 1 << 30}}), 400),
        (json!({"volume": {"name": "tiny", "sizeMib": 1}}), 400),
    ] {
        let (st, b) = call(&s, &key, M::POST, "/v1/volumes", Some(body.clone())).await;
        assert_eq!(st, want, "{body}: {b}");
    }
    let (_, list) = call(&s, &key, M::GET, "/v1/volumes", None).await;
    assert_eq!(list["volumes"].as_array().unwrap().len(), 1, "{list}");

    // Bad mounts are refused before anything is placed.
    for (mount, why) in [
        (json!({"name": "data", "path": "/proc/x"}), "/proc"),
        (json!({"name": "data", "path": "/a/../etc"}), "component"),
        (json!({"name": "data", "path": "relative"}), "absolute"),
        (json!({"name": "nope", "path": "/data"}), "volume nope"),
    ] {
        let (st, b) = create(&s, &key, json!({"volumeMounts": [mount]}))
            .await
            .unwrap_err();
        assert!(st == 400 || st == 404, "{st} {b}");
        assert!(b.to_string().contains(why), "{why}: {b}");
    }

    // Sandbox A writes into it, under /workspace.
    let a = create(
        &s,
        &key,
        json!({"volumeMounts": [{"name": "data", "path": "/workspace/data"}]}),
    )
    .await
    .unwrap();
    let (out, code) = sh(&s, &key, &a, "echo one > /workspace/data/f && stat -c %u /workspace/data/f && grep -c ' /workspace/data ' /proc/self/mountinfo").await;
    assert_eq!((out.as_str(), code), ("0\n1\n", 0));
    let (_, got) = call(&s, &key, M::GET, &format!("/v1/sandboxes/{a}"), None).await;
    assert_eq!(
        got["sandbox"]["volumeMounts"][0]["path"], "/workspace/data",
        "{got}"
    );
    let (_, v) = call(&s, &key, M::GET, "/v1/volumes/data", None).await;
    assert_eq!(v["volume"]["sandboxId"], a.as_str(), "{v}");
    // Its top directory is the sandbox's to open (0755 here), yet no other
    // user of the host reaches it.
    let mounted = s
        .data_dir()
        .join("worker/sandboxes")
        .join(&a)
        .join("volumes")
        .join(&vol_id);
    let as_nobody = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "ls"])
        .arg(&mounted)
        .output()
        .unwrap();
    assert!(
        !as_nobody.status.success(),
        "another host user lists a volume: {}",
        String::from_utf8_lossy(&as_nobody.stdout)
    );
    assert!(
        std::fs::read_dir(&mounted)
            .unwrap()
            .any(|e| e.unwrap().file_name() == "f")
    );

    // One sandbox at a time; and a held volume is not deleted.
    let (st, b) = create(
        &s,
        &key,
        json!({"volumeMounts": [{"name": "data", "path": "/data"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(st, 400, "{b}");
    assert!(
        b.to_string().contains(&format!("mounted by sandbox {a}")),
        "{b}"
    );
    let (st, b) = call(&s, &key, M::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(st, 400, "{b}");
    assert!(b.to_string().contains("delete the sandbox first"), "{b}");

    // Another uid range: a sandbox made while A runs keeps A's range out
    // of the next one's way.
    let other = create(&s, &key, json!({})).await.unwrap();
    let (st, _) = call(&s, &key, M::DELETE, &format!("/v1/sandboxes/{a}"), None).await;
    assert_eq!(st, 200);
    let filler = create(&s, &key, json!({})).await.unwrap();
    // B mounts it at the root of its `host` image, and owns what A wrote.
    let b = create(
        &s,
        &key,
        json!({"volumeMounts": [{"name": "data", "path": "/mnt/data"}]}),
    )
    .await
    .unwrap();
    let (out, code) = sh(
        &s,
        &key,
        &b,
        "cat /mnt/data/f && echo two >> /mnt/data/f && stat -c %u /mnt/data/f && cat /mnt/data/f",
    )
    .await;
    assert_eq!((out.as_str(), code), ("one\n0\none\ntwo\n", 0));
    // On the host, A's and B's roots are different ids.
    let uid_of = |id: &str| {
        let dir = s.data_dir().join("worker/sandboxes").join(id).join("disk");
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(dir).unwrap())
    };
    assert_ne!(uid_of(&b), uid_of(&filler));
    let (st, _) = call(&s, &key, M::DELETE, &format!("/v1/sandboxes/{b}"), None).await;
    assert_eq!(st, 200);

    // A symlink the sandbox leaves on the way to its mount point is not
    // followed when it starts again: the start fails, nothing is made
    // where the link points.
    let (st, _) = call(
        &s,
        &key,
        M::POST,
        "/v1/volumes",
        Some(json!({"volume": {"name": "trap", "sizeMib": 16}})),
    )
    .await;
    assert_eq!(st, 200);
    let t = create(
        &s,
        &key,
        json!({"volumeMounts": [{"name": "trap", "path": "/workspace/a/talon-trap"}]}),
    )
    .await
    .unwrap();
    let (out, code) = sh(
        &s,
        &key,
        &t,
        "mv /workspace/a /workspace/moved && ln -s /etc /workspace/a && echo planted",
    )
    .await;
    assert_eq!((out.as_str(), code), ("planted\n", 0));
    for (verb, want) in [
        ("stop", "SANDBOX_STATE_STOPPED"),
        ("start", "SANDBOX_STATE_FAILED"),
    ] {
        call(
            &s,
            &key,
            M::POST,
            &format!("/v1/sandboxes/{t}:{verb}"),
            Some(json!({})),
        )
        .await;
        let mut last = Value::Null;
        for _ in 0..300 {
            last = call(&s, &key, M::GET, &format!("/v1/sandboxes/{t}"), None)
                .await
                .1["sandbox"]
                .clone();
            if last["state"] == want {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(last["state"], want, "{verb}: {last}");
        if verb == "start" {
            assert!(
                last["stateMessage"].to_string().contains("symlink"),
                "{last}"
            );
        }
    }
    assert!(!std::path::Path::new("/etc/talon-trap").exists());
    let (st, _) = call(&s, &key, M::DELETE, &format!("/v1/sandboxes/{t}"), None).await;
    assert_eq!(st, 200);

    // Read-only.
    let r = create(
        &s,
        &key,
        json!({"volumeMounts": [{"name": "data", "path": "/workspace/ro", "readOnly": true}]}),
    )
    .await
    .unwrap();
    let (out, code) = sh(
        &s,
        &key,
        &r,
        "cat /workspace/ro/f; (echo x > /workspace/ro/g) 2>/dev/null || echo refused",
    )
    .await;
    assert_eq!((out.as_str(), code), ("one\ntwo\nrefused\n", 0));
    for id in [&r, &other, &filler] {
        let (st, _) = call(&s, &key, M::DELETE, &format!("/v1/sandboxes/{id}"), None).await;
        assert_eq!(st, 200);
    }

    // Deleted with its files.
    let image = shared.path().join("volumes").join(&vol_id).join("disk.img");
    assert!(image.exists());
    let (st, b) = call(&s, &key, M::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(st, 200, "{b}");
    assert!(!image.exists());
    let (st, _) = call(&s, &key, M::GET, "/v1/volumes/data", None).await;
    assert_eq!(st, 404);

    // Without shared storage there is nowhere to mount one.
    let lkey = local.boot.api_key.clone();
    let (st, _) = call(
        &local,
        &lkey,
        M::POST,
        "/v1/volumes",
        Some(json!({"volume": {"name": "data"}})),
    )
    .await;
    assert_eq!(st, 200);
    create(&local, &lkey, json!({})).await.unwrap();
    let (st, b) = create(
        &local,
        &lkey,
        json!({"volumeMounts": [{"name": "data", "path": "/data"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(st, 400, "{b}");
    assert!(b.to_string().contains("shared workspace backend"), "{b}");
    // Never mounted, it has no files: deleted without a shared worker.
    let (st, b) = call(&local, &lkey, M::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(st, 200, "{b}");
}
