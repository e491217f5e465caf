//! ImageService through a real `talon up`: an OCI archive of a debootstrap
//! tree uploaded in chunks, a `docker save` archive imported from a path
//! on the worker, sandboxes of both, the catalogue's errors, and deletion
//! while a sandbox of the image runs. Needs root (CI is root).

mod common;
use common::proc_sh as sh;
use common::*;
use talon_proto::v1 as pb;
use talon_worker::image::pack::{Format, PackOptions, pack};
use tonic::Code;

type Images = pb::image_service_client::ImageServiceClient<Authed>;

async fn upload(c: &mut Images, name: &str, bytes: &[u8]) -> Result<pb::Image, tonic::Status> {
    use pb::import_image_request::Message;
    let mut msgs = vec![pb::ImportImageRequest {
        message: Some(Message::Header(pb::ImportImageHeader {
            name: name.into(),
            source_path: String::new(),
        })),
    }];
    for chunk in bytes.chunks(1 << 20) {
        msgs.push(pb::ImportImageRequest {
            message: Some(Message::Data(chunk.to_vec())),
        });
    }
    c.import_image(tokio_stream::iter(msgs))
        .await
        .map(|r| r.into_inner().image.unwrap())
}

async fn from_path(c: &mut Images, name: &str, path: &str) -> Result<pb::Image, tonic::Status> {
    let msgs = vec![pb::ImportImageRequest {
        message: Some(pb::import_image_request::Message::Header(
            pb::ImportImageHeader {
                name: name.into(),
                source_path: path.into(),
            },
        )),
    }];
    c.import_image(tokio_stream::iter(msgs))
        .await
        .map(|r| r.into_inner().image.unwrap())
}

async fn names(c: &mut Images) -> Vec<String> {
    c.list_images(pb::ListImagesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .images
        .into_iter()
        .map(|i| i.name)
        .collect()
}

async fn create(c: &mut Clients, image: &str) -> Result<pb::Sandbox, tonic::Status> {
    let req = pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            image: image.into(),
            resources: Some(pb::Resources {
                cpu_millis: 500,
                memory_mib: 256,
                max_pids: 128,
                ..Default::default()
            }),
            ..Default::default()
        }),
        wait_until_running: true,
        wait_timeout: Some(prost_types::Duration {
            seconds: 60,
            nanos: 0,
        }),
        ..Default::default()
    };
    c.sandboxes
        .create_sandbox(req)
        .await
        .map(|r| r.into_inner().sandbox.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn images_are_imported_listed_used_and_deleted() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let rootfs = talon_worker::testing::debian_rootfs();
    let s = Server::up().await;
    let t = tenant(&s, "img").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let mut images = pb::image_service_client::ImageServiceClient::with_interceptor(
        s.channel().await,
        bearer(&s.boot.api_key),
    );
    let mut dev_images = pb::image_service_client::ImageServiceClient::with_interceptor(
        s.channel().await,
        bearer(&t.developer),
    );
    assert_eq!(names(&mut dev_images).await, vec!["host"]);

    let opts = PackOptions {
        reference: "debian:bookworm".into(),
        env: vec!["TALON_IMAGE_VAR=from-image".into()],
        working_dir: String::new(),
    };
    let oci = s.dir.path().join("debian-oci.tar");
    let docker = s.dir.path().join("debian-docker.tar");
    pack(&rootfs, &oci, Format::Oci, &opts).unwrap();
    pack(&rootfs, &docker, Format::Docker, &opts).unwrap();
    let oci_bytes = std::fs::read(&oci).unwrap();

    // Only a platform admin imports.
    let denied = upload(&mut dev_images, "debian:bookworm", b"x")
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);

    let a = upload(&mut images, "debian:bookworm", &oci_bytes)
        .await
        .unwrap();
    assert_eq!(a.name, "debian:bookworm");
    assert_eq!(a.source, pb::ImageSource::OciArchive as i32);
    assert!(
        a.digest.starts_with("sha256:") && a.size_bytes > 50 << 20,
        "{a:?}"
    );
    let b = from_path(&mut images, "debian:docker", docker.to_str().unwrap())
        .await
        .unwrap();
    assert_ne!(a.digest, b.digest);
    assert_eq!(
        names(&mut dev_images).await,
        vec!["host", "debian:bookworm", "debian:docker"]
    );
    // Paging holds `host` and the imported ones in one order.
    let first = dev_images
        .list_images(pb::ListImagesRequest {
            page_size: 2,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.images.len(), 2);
    let rest = dev_images
        .list_images(pb::ListImagesRequest {
            page_size: 2,
            page_token: first.next_page_token,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        rest.images
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>(),
        ["debian:docker"]
    );
    assert!(rest.next_page_token.is_empty());

    // Bad imports lose nothing and say why.
    for (name, data, want) in [
        ("host", &b"x"[..], Code::InvalidArgument),
        ("../evil", &b"x"[..], Code::InvalidArgument),
        // The name a worker gives a snapshot: an import must not shadow one.
        ("snapshot/snp_x", &b"x"[..], Code::InvalidArgument),
        ("junk", &b"not an archive"[..], Code::InvalidArgument),
    ] {
        let e = upload(&mut images, name, data).await.unwrap_err();
        assert_eq!(e.code(), want, "{name}: {e:?}");
    }
    let e = from_path(&mut images, "rel", "relative/path.tar")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(names(&mut images).await.len(), 3);

    // Sandboxes of both.
    let mut dev = s.as_(&t.developer).await;
    let mut procs = pb::process_service_client::ProcessServiceClient::with_interceptor(
        s.channel().await,
        bearer(&t.developer),
    );
    let sa = create(&mut dev, "debian:bookworm").await.unwrap();
    let sb = create(&mut dev, "debian:docker").await.unwrap();
    for sb in [&sa, &sb] {
        let (out, code) = sh(
            &mut procs,
            &sb.sandbox_id,
            "cat /etc/debian_version; echo $TALON_IMAGE_VAR",
        )
        .await;
        assert_eq!(code, 0, "{out}");
        assert!(
            out.starts_with("12") && out.ends_with("from-image\n"),
            "{out}"
        );
    }
    let e = create(&mut dev, "nope:latest").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");

    // Deleting an image keeps its sandboxes; new ones can't use it.
    let e = images
        .delete_image(pb::DeleteImageRequest {
            name: "host".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    images
        .delete_image(pb::DeleteImageRequest {
            name: "debian:bookworm".into(),
        })
        .await
        .unwrap();
    let e = images
        .delete_image(pb::DeleteImageRequest {
            name: "debian:bookworm".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let (out, code) = sh(&mut procs, &sa.sandbox_id, "cat /etc/debian_version").await;
    assert_eq!(code, 0, "{out}");
    let e = create(&mut dev, "debian:bookworm").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = dev_images
        .get_image(pb::GetImageRequest {
            name: "debian:bookworm".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    for sb in [sa, sb] {
        dev.sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest {
                sandbox_id: sb.sandbox_id,
            })
            .await
            .unwrap();
    }
}
