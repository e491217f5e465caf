//! talon-agent's file operations: atomic round trips, traversal and
//! symlink escapes, unfinished uploads, watches and POSIX path rules.

mod common;

use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

#[tokio::test]
async fn files_round_trip_atomically() {
    let mut a = Agent::start().await;
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let info = write(&mut a, "dir/sub/blob.bin", &data, true)
        .await
        .unwrap();
    assert_eq!(info.size, data.len() as i64);
    assert_eq!(read(&mut a, "dir/sub/blob.bin").await.unwrap(), data);
    let abs = format!("{}/dir/sub/blob.bin", a.ws().display());
    assert_eq!(
        read(&mut a, &abs).await.unwrap(),
        data,
        "absolute paths work too"
    );
    // No temp file is left beside it.
    let names: Vec<_> = std::fs::read_dir(a.ws().join("dir/sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let st = a
        .client
        .stat(pb::StatRequest {
            sandbox_id: String::new(),
            path: "dir/sub".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .info
        .unwrap();
    assert_eq!(st.r#type, pb::FileType::Directory as i32);
    a.client
        .make_dir(pb::MakeDirRequest {
            sandbox_id: String::new(),
            path: "a/b/c".into(),
            parents: true,
            mode: 0,
            ..Default::default()
        })
        .await
        .unwrap();
    let ls = a
        .client
        .list_dir(pb::ListDirRequest {
            sandbox_id: String::new(),
            path: String::new(),
            depth: 3,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .entries;
    let paths: Vec<String> = ls
        .iter()
        .map(|e| {
            e.path
                .trim_start_matches(&a.ws().display().to_string())
                .to_string()
        })
        .collect();
    assert_eq!(
        paths,
        vec![
            "/a",
            "/a/b",
            "/a/b/c",
            "/dir",
            "/dir/sub",
            "/dir/sub/blob.bin"
        ]
    );
    // "." and "dir/." name the directory itself; ".." as the last
    // component is still refused.
    for (path, want) in [(".", 2), ("./", 2), ("a/.", 1), ("a/b/./.", 1)] {
        let n = a
            .client
            .list_dir(pb::ListDirRequest {
                sandbox_id: String::new(),
                path: path.into(),
                depth: 1,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .entries
            .len();
        assert_eq!(n, want, "{path}");
    }
    let up = a
        .client
        .list_dir(pb::ListDirRequest {
            sandbox_id: String::new(),
            path: "a/..".into(),
            depth: 1,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(up.code(), Code::InvalidArgument);
    a.client
        .move_path(pb::MovePathRequest {
            sandbox_id: String::new(),
            source_path: "dir/sub/blob.bin".into(),
            destination_path: "a/moved.bin".into(),
            overwrite: false,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(read(&mut a, "a/moved.bin").await.unwrap().len(), data.len());
    assert_eq!(
        read(&mut a, "dir/sub/blob.bin").await.unwrap_err().code(),
        Code::NotFound
    );
    let rm = a
        .client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "a".into(),
            recursive: false,
            ..Default::default()
        })
        .await;
    assert_eq!(
        rm.unwrap_err().code(),
        Code::FailedPrecondition,
        "a non-empty directory needs recursive"
    );
    a.client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "a".into(),
            recursive: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!a.ws().join("a").exists());
    let empty = write(&mut a, "empty", b"", false).await.unwrap();
    assert_eq!(empty.size, 0);
    assert_eq!(read(&mut a, "empty").await.unwrap(), b"");
}

/// Regression guard for the seed's P0: a symlink in an intermediate
/// component, or `..`, must not let the workspace API reach outside.
#[tokio::test]
async fn traversal_and_symlink_escapes_are_refused() {
    traversal_cases(Agent::start().await).await;
}

/// The same where the kernel has no openat2 (gVisor): the agent walks
/// its rules itself (a debug-only switch stands in for the ENOSYS).
#[tokio::test]
async fn traversal_and_symlink_escapes_are_refused_without_openat2() {
    traversal_cases(Agent::start_env(&[], &[("TALON_AGENT_TEST_NO_OPENAT2", "1")]).await).await;
}

async fn traversal_cases(mut a: Agent) {
    let outside = a.dir.path().join("outside.txt");
    std::fs::write(&outside, b"host secret").unwrap();
    std::os::unix::fs::symlink(a.dir.path(), a.ws().join("up")).unwrap();
    std::os::unix::fs::symlink(&outside, a.ws().join("leaf")).unwrap();
    for path in [
        "../outside.txt",
        "up/outside.txt",
        "leaf",
        "x/../../outside.txt",
    ] {
        let e = read(&mut a, path).await.unwrap_err();
        assert!(
            matches!(e.code(), Code::PermissionDenied | Code::NotFound),
            "{path}: {e:?}"
        );
        assert_ne!(e.code(), Code::Ok);
    }
    assert_eq!(
        read(&mut a, "up/outside.txt").await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert_eq!(
        read(&mut a, "../outside.txt").await.unwrap_err().code(),
        Code::PermissionDenied
    );
    // Writes through the symlinked directory are refused, and nothing lands outside.
    assert_eq!(
        write(&mut a, "up/planted.txt", b"x", false)
            .await
            .unwrap_err()
            .code(),
        Code::PermissionDenied
    );
    assert_eq!(
        write(&mut a, "up/deeper/planted.txt", b"x", true)
            .await
            .unwrap_err()
            .code(),
        Code::PermissionDenied
    );
    assert!(!a.dir.path().join("planted.txt").exists());
    // A FIFO is refused at once instead of blocking the reader forever.
    let fifo = std::ffi::CString::new(a.ws().join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo of a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let e = tokio::time::timeout(Duration::from_secs(5), read(&mut a, "fifo"))
        .await
        .expect("ReadFile on a FIFO hung")
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    // Removing the symlink removes the link, never its target.
    a.client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "leaf".into(),
            recursive: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(std::fs::read(&outside).unwrap(), b"host secret");
    let e = a
        .client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "up/outside.txt".into(),
            recursive: false,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(outside.exists());
}

/// An upload that ends without its finish (or whose finish disagrees with
/// what arrived) writes nothing, and leaves the old file as it was.
#[tokio::test]
async fn only_a_finished_upload_is_written() {
    use pb::write_file_request::Message as W;
    let mut a = Agent::start().await;
    write(&mut a, "kept.txt", b"original", false).await.unwrap();
    let header = || pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Header(pb::WriteFileHeader {
            path: "kept.txt".into(),
            mode: 0,
            create_parents: false,
            no_overwrite: false,
            ..Default::default()
        })),
    };
    let data = || pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Data(b"short".to_vec())),
    };
    let finish = |size| pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Finish(pb::WriteFileFinish { size })),
    };
    for (msgs, want) in [
        (vec![header(), data()], Code::Aborted),
        (vec![header()], Code::Aborted),
        (vec![header(), data(), finish(99)], Code::InvalidArgument),
        (
            vec![header(), data(), finish(5), data()],
            Code::InvalidArgument,
        ),
    ] {
        let e = a
            .client
            .write_file(tokio_stream::iter(msgs))
            .await
            .unwrap_err();
        assert_eq!(e.code(), want, "{e:?}");
        assert_eq!(std::fs::read(a.ws().join("kept.txt")).unwrap(), b"original");
    }
    let leftovers: Vec<_> = std::fs::read_dir(a.ws())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".talon-write-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[tokio::test]
async fn watch_reports_changes() {
    let mut a = Agent::start().await;
    let mut w = a
        .client
        .watch_dir(pb::WatchDirRequest {
            sandbox_id: String::new(),
            path: String::new(),
            recursive: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    tokio::time::sleep(Duration::from_millis(100)).await;
    std::fs::write(a.ws().join("new.txt"), b"x").unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(5), w.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(ev.path.ends_with("/new.txt"), "{ev:?}");
    assert_eq!(ev.r#type, pb::FileEventType::Create as i32);
    // An atomic write through the API shows as a write of its target,
    // never as its temp file.
    let header = pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(pb::write_file_request::Message::Header(
            pb::WriteFileHeader {
                path: "api.txt".into(),
                mode: 0,
                create_parents: false,
                no_overwrite: false,
                ..Default::default()
            },
        )),
    };
    let data = pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(pb::write_file_request::Message::Data(b"y".to_vec())),
    };
    a.client
        .write_file(tokio_stream::iter(vec![
            header,
            data,
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(pb::write_file_request::Message::Finish(
                    pb::WriteFileFinish { size: 1 },
                )),
            },
        ]))
        .await
        .unwrap();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), w.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(!ev.path.contains(".talon-write-"), "{ev:?}");
        if ev.path.ends_with("/api.txt") {
            assert_eq!(ev.r#type, pb::FileEventType::Write as i32, "{ev:?}");
            break;
        }
    }
}

/// A path that ends in `/` or `/.` names a directory, as in POSIX: on a
/// file or a symlink it is ENOTDIR (FAILED_PRECONDITION), and nothing is
/// changed. The probe's `write lnroot/.` replaced the symlink `lnroot`
/// with a file.
#[tokio::test]
async fn a_trailing_slash_names_a_directory() {
    trailing_slash_cases(Agent::start().await).await;
}

#[tokio::test]
async fn a_trailing_slash_names_a_directory_without_openat2() {
    trailing_slash_cases(Agent::start_env(&[], &[("TALON_AGENT_TEST_NO_OPENAT2", "1")]).await)
        .await;
}

async fn trailing_slash_cases(mut a: Agent) {
    write(&mut a, "f", b"kept", false).await.unwrap();
    std::os::unix::fs::symlink("f", a.ws().join("ln")).unwrap();
    std::fs::create_dir(a.ws().join("d")).unwrap();
    let fp = |st: tonic::Status| {
        assert_eq!(st.code(), Code::FailedPrecondition, "{st:?}");
        st.message().to_string()
    };
    for p in ["f/", "f/.", "ln/", "ln/.", "f//"] {
        let m = fp(write(&mut a, p, b"replaced", false).await.unwrap_err());
        assert!(m.contains("not a directory"), "{p}: {m}");
        fp(read(&mut a, p).await.unwrap_err());
        fp(a.client
            .stat(pb::StatRequest {
                path: p.into(),
                ..Default::default()
            })
            .await
            .unwrap_err());
        fp(a.client
            .remove_path(pb::RemovePathRequest {
                path: p.into(),
                ..Default::default()
            })
            .await
            .unwrap_err());
        fp(a.client
            .move_path(pb::MovePathRequest {
                source_path: p.into(),
                destination_path: "moved".into(),
                ..Default::default()
            })
            .await
            .unwrap_err());
    }
    // Nothing changed.
    assert_eq!(std::fs::read(a.ws().join("f")).unwrap(), b"kept");
    assert!(
        std::fs::symlink_metadata(a.ws().join("ln"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!a.ws().join("moved").exists());
    // A file at a directory's path: refused as a directory.
    let m = fp(write(&mut a, "d/.", b"x", false).await.unwrap_err());
    assert!(m.contains("is a directory"), "{m}");
    let m = fp(write(&mut a, "new/", b"x", false).await.unwrap_err());
    assert!(m.contains("is a directory"), "{m}");
    assert!(!a.ws().join("new").exists());
    // On directories the slash is fine.
    a.client
        .stat(pb::StatRequest {
            path: "d/".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    a.client
        .make_dir(pb::MakeDirRequest {
            path: "e/".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    a.client
        .move_path(pb::MovePathRequest {
            source_path: "d/".into(),
            destination_path: "d2/".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(a.ws().join("d2").is_dir() && a.ws().join("e").is_dir());
    // Moving a directory into itself is the caller's error, not ours.
    std::fs::create_dir_all(a.ws().join("sub/deep")).unwrap();
    let st = a
        .client
        .move_path(pb::MovePathRequest {
            source_path: "sub".into(),
            destination_path: "sub/deep/sub".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
}
