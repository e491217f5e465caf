//! Imported images, end to end on real sandboxes: a debootstrap tree
//! (built once per machine by scripts/test-image.sh) packed as an OCI
//! layout and as a `docker save` archive, imported into the layer store,
//! and run with the overlay root (the default) and the hardlink root.
//! Root is required; CI is root.

mod common;

use common::{TestHost, create, spec};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use talon_worker::host::HostOptions;
use talon_worker::image::pack::{Format, PackOptions, pack};
use talon_worker::rootfs::RootfsMode;

/// The debian archive in both formats, packed once per test process.
fn archives() -> &'static (PathBuf, PathBuf, PathBuf) {
    static A: std::sync::OnceLock<(PathBuf, PathBuf, PathBuf)> = std::sync::OnceLock::new();
    A.get_or_init(|| {
        let rootfs = talon_worker::testing::debian_rootfs();
        // One place under the target directory, rewritten by each run: a
        // static is never dropped, and each run used to leave its 170 MiB
        // of archives in a new directory in /tmp.
        let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("image-archives");
        std::fs::create_dir_all(&d).unwrap();
        let (oci, docker) = (d.join("debian-oci.tar"), d.join("debian-docker.tar"));
        let opts = PackOptions {
            reference: "debian:bookworm".into(),
            env: vec!["TALON_IMAGE_VAR=from-image".into()],
            working_dir: String::new(),
        };
        pack(&rootfs, &oci, Format::Oci, &opts).unwrap();
        pack(&rootfs, &docker, Format::Docker, &opts).unwrap();
        (d, oci, docker)
    })
}

fn import(env: &TestHost, name: &str, path: &Path) -> talon_worker::image::ImageRef {
    env.host.images().import(name, path).unwrap()
}

fn layer_files(env: &TestHost, r: &talon_worker::image::ImageRef) -> PathBuf {
    env.host.images().layer_dir(&r.layers[0])
}

#[tokio::test(flavor = "multi_thread")]
async fn both_archive_formats_import_to_the_same_layer_and_run() {
    let (_, oci, docker) = archives();
    let env = TestHost::new(HostOptions::default());
    let a = import(&env, "debian:oci", oci);
    let b = import(&env, "debian:docker", docker);
    assert_eq!(a.layers, b.layers, "the same tree is the same layer");
    assert!(a.digest.starts_with("sha256:") && a.digest != b.digest);
    assert!(a.size_bytes > 50 << 20, "{} bytes unpacked", a.size_bytes);
    let layers = std::fs::read_dir(env.data().join("images/layers"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count();
    assert_eq!(layers, 1, "a shared layer is stored once");
    let names = env.host.image_names();
    assert_eq!(names, vec!["host", "debian:docker", "debian:oci"]);

    for image in ["debian:oci", "debian:docker"] {
        let mut s = create(&env, &spec(image, (1000, 256, 256))).await.unwrap();
        let (out, err, code) = s
            .sh("cat /etc/debian_version; id -u; stat -c %u /usr/bin; echo $TALON_IMAGE_VAR; dpkg -s base-files | grep -c Status")
            .await;
        assert_eq!(code, 0, "{image}: {err}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("12"), "{image}: {out}");
        // Root inside, and the image's root-owned files are root's here:
        // the layers are mapped into the sandbox's id range.
        assert_eq!(&lines[1..], ["0", "0", "from-image", "1"], "{image}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn imported_images_run_under_runc_too() {
    let (_, oci, _) = archives();
    for mode in [RootfsMode::Overlay, RootfsMode::Hardlink] {
        let env = TestHost::with_runtime(
            HostOptions {
                rootfs_mode: mode,
                ..Default::default()
            },
            "runc",
        );
        import(&env, "debian", oci);
        let mut s = create(&env, &spec("debian", (1000, 256, 256)))
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e:#}"));
        let (out, err, code) = s
            .sh("cat /etc/debian_version && id -u && echo x > /tmp/x")
            .await;
        assert_eq!(code, 0, "{mode}: {out} {err}");
        assert!(
            out.starts_with("12") && out.ends_with("0\n"),
            "{mode}: {out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_overlay_root_is_writable_private_and_survives_stop_and_start() {
    let (_, oci, _) = archives();
    let env = TestHost::new(HostOptions::default());
    let r = import(&env, "debian", oci);
    let layer = layer_files(&env, &r);
    let before = std::fs::read(layer.join("etc/os-release")).unwrap();

    let mut a = create(&env, &spec("debian", (1000, 256, 256)))
        .await
        .unwrap();
    let mut b = create(&env, &spec("debian", (1000, 256, 256)))
        .await
        .unwrap();
    let (_, err, code) = a
        .sh("echo mine > /usr/local/bin/talon-note && echo changed > /etc/os-release && rm /usr/bin/tail && useradd -m alice && su alice -c 'touch ~/x'")
        .await;
    assert_eq!(code, 0, "{err}");
    let (out, _, _) = b
        .sh("cat /usr/local/bin/talon-note 2>&1; head -c 20 /etc/os-release; ls /usr/bin/tail")
        .await;
    assert!(out.contains("No such file"), "b sees a's file: {out}");
    assert!(
        out.contains("PRETTY_NAME") && out.contains("/usr/bin/tail"),
        "b: {out}"
    );
    // The shared layer is untouched.
    assert_eq!(std::fs::read(layer.join("etc/os-release")).unwrap(), before);
    assert!(layer.join("usr/bin/tail").exists());
    assert!(!layer.join("usr/local/bin/talon-note").exists());

    let id = a.id.clone();
    env.host.stop(&id, 1).await.unwrap();
    assert!(
        talon_worker::rootfs::mounts_under(&a.dir()).is_empty(),
        "a stopped sandbox keeps no mount"
    );
    env.host.start(&id, 1, None).await.unwrap();
    a.agent = env.host.agent(&id).await.unwrap();
    let (out, _, code) = a
        .sh("cat /usr/local/bin/talon-note; ls /home/alice/x")
        .await;
    assert_eq!((out.as_str(), code), ("mine\n/home/alice/x\n", 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hardlink_root_is_read_only_but_for_its_private_directories() {
    let (_, _, docker) = archives();
    let env = TestHost::new(HostOptions {
        rootfs_mode: RootfsMode::Hardlink,
        ..Default::default()
    });
    import(&env, "debian", docker);
    let mut s = create(&env, &spec("debian", (1000, 256, 256)))
        .await
        .unwrap();
    let (out, _, code) = s
        .sh("cat /etc/debian_version && echo x > /tmp/t && echo y > /workspace/w && echo z > /root/r && cat /etc/hostname")
        .await;
    assert_eq!(code, 0, "{out}");
    let (_, err, code) = s.sh("echo x > /usr/local/bin/nope").await;
    assert_ne!(code, 0);
    assert!(err.contains("Read-only"), "{err}");
    // A second sandbox shares the flattened tree.
    let mut t = create(&env, &spec("debian", (1000, 256, 256)))
        .await
        .unwrap();
    let (out, _, _) = t.sh("ls -A /tmp /workspace /root").await;
    let names: Vec<&str> = out.lines().collect();
    for private in ["t", "w", "r"] {
        assert!(!names.contains(&private), "t sees s's {private}: {out}");
    }
    let flats = std::fs::read_dir(env.data().join("images/flat"))
        .unwrap()
        .count();
    assert_eq!(flats, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_image_keeps_its_sandboxes_until_they_go() {
    let (_, oci, _) = archives();
    let env = TestHost::new(HostOptions::default());
    let r = import(&env, "debian", oci);
    let layer = layer_files(&env, &r);
    let mut s = create(&env, &spec("debian", (1000, 256, 256)))
        .await
        .unwrap();
    assert!(env.host.delete_image("debian").unwrap());
    assert!(!env.host.delete_image("debian").unwrap(), "already gone");
    assert!(layer.exists(), "a running sandbox's layer was removed");
    let (out, _, code) = s.sh("cat /etc/debian_version").await;
    assert_eq!(code, 0, "{out}");
    assert!(
        create(&env, &spec("debian", (1000, 256, 256)))
            .await
            .is_err()
    );
    let id = s.id.clone();
    env.host.delete(&id, 1).await.unwrap();
    assert!(!layer.exists(), "the layer outlived its last sandbox");
    drop(s);
}

#[test]
fn tampered_and_hostile_archives_are_refused() {
    let (_, oci, _) = archives();
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        d.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o711),
    )
    .unwrap();
    let store = talon_worker::image::ImageStore::new(d.path(), 1 << 34).unwrap();
    // Not an archive.
    let junk = d.path().join("junk.tar");
    std::fs::write(&junk, b"hello").unwrap();
    assert!(store.import("junk", &junk).is_err());
    // A bad name.
    assert!(store.import("../x", oci).is_err());
    assert!(store.import("host", oci).is_err());

    // A docker archive whose layer climbs out with `..`.
    let canary = d.path().join("canary");
    std::fs::write(&canary, b"canary").unwrap();
    let evil_layer = {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..12].copy_from_slice(b"../../canary");
        h.set_size(4);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        let mut v = h.as_bytes().to_vec();
        v.extend_from_slice(b"evil");
        v.resize(1024 + 1024, 0);
        v
    };
    let archive = docker_archive(d.path(), &evil_layer, None);
    let e = store.import("evil", &archive).unwrap_err();
    assert!(e.to_string().contains(".."), "{e}");
    assert_eq!(std::fs::read(&canary).unwrap(), b"canary");

    // A layer whose content does not match its diff id.
    let good_layer = {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(2);
        h.set_mode(0o644);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        b.append_data(&mut h, "ok", &b"ok"[..]).unwrap();
        b.into_inner().unwrap()
    };
    let archive = docker_archive(d.path(), &good_layer, Some("0".repeat(64)));
    let e = store.import("tampered", &archive).unwrap_err();
    assert!(e.to_string().contains("diff id"), "{e}");
    assert!(store.list().is_empty());
    let leftovers = std::fs::read_dir(d.path().join("images/tmp"))
        .unwrap()
        .count();
    assert_eq!(leftovers, 0, "a refused import left files behind");
    let layers = std::fs::read_dir(d.path().join("images/layers"))
        .unwrap()
        .count();
    assert_eq!(layers, 0);
}

/// A `docker save` archive of one layer; `diff_id` overrides the real one.
fn docker_archive(dir: &Path, layer: &[u8], diff_id: Option<String>) -> PathBuf {
    use sha2::Digest;
    let diff = diff_id.unwrap_or_else(|| hex::encode(sha2::Sha256::digest(layer)));
    let config = serde_json::to_vec(&serde_json::json!({
        "rootfs": {"type": "layers", "diff_ids": [format!("sha256:{diff}")]},
    }))
    .unwrap();
    let manifest = serde_json::to_vec(&serde_json::json!([{
        "Config": "config.json", "RepoTags": [], "Layers": ["l/layer.tar"],
    }]))
    .unwrap();
    let path = dir.join(format!("archive-{}.tar", common::unique_id("a")));
    let mut b = tar::Builder::new(std::fs::File::create(&path).unwrap());
    for (name, data) in [
        ("config.json", &config[..]),
        ("l/layer.tar", layer),
        ("manifest.json", &manifest[..]),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        b.append_data(&mut h, name, data).unwrap();
    }
    b.finish().unwrap();
    path
}

#[test]
fn the_agent_is_static() {
    let bytes = std::fs::read(common::agent_binary()).unwrap();
    assert!(
        !talon_worker::host::needs_interpreter(&bytes),
        "scripts/build-agent.sh built a dynamically linked agent"
    );
    let dynamic = std::fs::read("/bin/sh").unwrap();
    assert!(talon_worker::host::needs_interpreter(&dynamic));
}

/// A wheel with a module and a console script, made by the sandbox's
/// own Python (no index: the sandbox has no network here).
const MAKE_WHEEL: &str = r#"
import sys, zipfile
name = sys.argv[1]
d = f"{name}-1.0.dist-info"
files = {
    f"{name}/__init__.py": "def main():\n    print('hello from ' + __name__)\n",
    f"{d}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
    f"{d}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    f"{d}/entry_points.txt": f"[console_scripts]\n{name} = {name}:main\n",
}
with zipfile.ZipFile(f"/tmp/{name}-1.0-py3-none-any.whl", "w") as z:
    for p, body in files.items():
        z.writestr(p, body)
    z.writestr(f"{d}/RECORD", "".join(f"{p},,\n" for p in files) + f"{d}/RECORD,,\n")
"#;

#[tokio::test(flavor = "multi_thread")]
async fn the_host_image_lets_root_and_user_pip_install_and_trusts_the_hosts_cas() {
    common::require_root();
    let mut sbx = common::sandbox((1000, 512, 256)).await;
    std::fs::write(sbx.dir().join("disk/tmp/mkwheel.py"), MAKE_WHEEL).unwrap();
    for (user, name, home) in [
        ("", "rootprobe", "/root"),
        ("user", "userprobe", "/home/user"),
    ] {
        let script = format!(
            "set -e; cd; test \"$HOME\" = {home}; python3 /tmp/mkwheel.py {name}; \
             python3 -m pip install -q --no-index --no-cache-dir /tmp/{name}-1.0-py3-none-any.whl; \
             {name}; python3 -c 'import {name}; print({name}.__file__)'"
        );
        let (out, err, code) = common::sh_as(&mut sbx.agent, user, &script).await;
        assert_eq!(code, 0, "as {user:?}: {out}{err}");
        assert!(out.contains(&format!("hello from {name}")), "{out}");
        assert!(
            out.contains(&format!("{home}/.local/lib/python3")),
            "as {user:?}, pip installed into the user site: {out}"
        );
    }
    // user's home is its own, and root's stays closed to it.
    let (out, err, code) = common::sh_as(
        &mut sbx.agent,
        "user",
        "touch ~/x && id -un && ! ls /root 2>/dev/null",
    )
    .await;
    assert_eq!((code, out.trim()), (0, "user"), "{err}");
    // The CA bundle the host trusts is named where clients look for it.
    if Path::new("/etc/ssl/certs/ca-certificates.crt").is_file() {
        let (out, err, code) = sbx
            .sh("for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE NODE_EXTRA_CA_CERTS; do eval f=\\$$v; test -s \"$f\" || { echo \"$v=$f\"; exit 1; }; done; echo ok")
            .await;
        assert_eq!((code, out.trim()), (0, "ok"), "{out}{err}");
    }
}

/// At every boot the worker makes the `host` image's /home/user if it is
/// missing; a link the sandbox left in its place is never followed (no
/// directory made or chowned through it), across a worker restart too.
#[tokio::test(flavor = "multi_thread")]
async fn a_link_in_place_of_home_user_is_not_followed_at_boot() {
    common::require_root();
    let mut sbx = common::sandbox((500, 256, 128)).await;
    let target = tempfile::tempdir().unwrap();
    let victim = target.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let link_to = |p: &Path| format!("rm -rf /home/user && ln -s {} /home/user", p.display());
    for (link, what) in [
        (victim.clone(), "a directory"),
        (target.path().join("absent"), "nothing"),
    ] {
        let (_, err, code) = sbx.sh(&link_to(&link)).await;
        assert_eq!(code, 0, "{err}");
        sbx.env.host.stop(&sbx.id, 1).await.unwrap();
        // A new worker on the same directory boots it again.
        let again = sbx.env.reopen(HostOptions::default());
        again.start(&sbx.id, 1, None).await.unwrap();
        let home = sbx.dir().join("disk/home/user");
        assert!(
            home.symlink_metadata().unwrap().file_type().is_symlink(),
            "link to {what} replaced"
        );
        assert_eq!(
            std::fs::metadata(&victim).unwrap().uid(),
            0,
            "link to {what} followed"
        );
        assert!(
            !target.path().join("absent").exists(),
            "made through a link to {what}"
        );
        again.stop(&sbx.id, 1).await.unwrap();
        sbx.env.host.start(&sbx.id, 1, None).await.unwrap();
        sbx.agent = sbx.env.host.agent(&sbx.id).await.unwrap();
    }
}
