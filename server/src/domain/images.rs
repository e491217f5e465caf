//! The image catalogue. `host` is built in; imported images are recorded
//! here and held by workers, each in its own layer store. An import is
//! fanned out to every connected worker that runs sandboxes, the upload
//! streamed to all of them at once (the slowest sets the pace), and the
//! image is recorded only when every one of them has it.

use crate::app::App;
use crate::db::entity::image;
use crate::db::now_ms;
use crate::error::{Error, Result};
use futures::{Stream, StreamExt};
use sea_orm::sea_query::OnConflict;
use sea_orm::{EntityTrait, QueryOrder, QuerySelect, Set};
use talon_core::image::HOST_IMAGE;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::talon::worker::v1::worker_image_service_client::WorkerImageServiceClient;
use tokio::sync::mpsc;

/// An image as the API shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageView {
    pub name: String,
    pub builtin: bool,
    pub digest: String,
    pub size_bytes: i64,
    pub created_at: i64,
}

fn builtin() -> ImageView {
    ImageView {
        name: HOST_IMAGE.into(),
        builtin: true,
        digest: String::new(),
        size_bytes: 0,
        created_at: 0,
    }
}

impl From<image::Model> for ImageView {
    fn from(m: image::Model) -> Self {
        ImageView {
            name: m.name,
            builtin: false,
            digest: m.digest,
            size_bytes: m.size_bytes,
            created_at: m.created_at,
        }
    }
}

/// `host` first, then the imported ones by name.
pub async fn list(app: &App, offset: u64, limit: u64) -> Result<(Vec<ImageView>, String)> {
    // Row 0 is `host`; imported images follow from row 1.
    let mut rows: Vec<ImageView> = if offset == 0 { vec![builtin()] } else { vec![] };
    let skip = offset.saturating_sub(1);
    let take = limit + 1 - rows.len() as u64;
    rows.extend(
        image::Entity::find()
            .order_by_asc(image::Column::Name)
            .offset(skip)
            .limit(take)
            .all(app.db())
            .await?
            .into_iter()
            .map(ImageView::from),
    );
    Ok(crate::domain::paged(rows, offset, limit))
}

pub async fn get(app: &App, name: &str) -> Result<ImageView> {
    if name == HOST_IMAGE {
        return Ok(builtin());
    }
    image::Entity::find_by_id(name.to_string())
        .one(app.db())
        .await?
        .map(ImageView::from)
        .ok_or_else(|| Error::NotFound(format!("image {name:?}")))
}

/// Whether sandboxes may be created from `name`.
/// Progress of a prewarm on one worker.
#[derive(Clone, Debug, PartialEq)]
pub struct PrewarmProgress {
    pub worker_id: String,
    /// "pooling", then "done" or "failed".
    pub phase: &'static str,
    pub pool_ready: i32,
    pub message: String,
}

/// Asks every connected worker that holds `name` to keep a pool of
/// `pool_size` sandboxes of it (the server's default resources; 0 is each
/// worker's configured size), and reports each one's progress as it comes.
pub async fn prewarm(
    app: &std::sync::Arc<App>,
    name: &str,
    pool_size: i32,
) -> Result<mpsc::Receiver<PrewarmProgress>> {
    let max = app.config().max_prewarm_pool_size;
    if !(0..=max).contains(&pool_size) {
        return Err(Error::InvalidArgument(format!(
            "pool_size must be between 0 (each worker's own) and {max}"
        )));
    }
    if !exists(app, name).await? {
        return Err(Error::NotFound(format!("image {name:?}")));
    }
    let workers: Vec<String> = app
        .hub()
        .connected()
        .into_iter()
        .map(|(w, _)| w)
        .filter(|w| app.hub().has_image(w, name))
        .collect();
    if workers.is_empty() {
        return Err(Error::FailedPrecondition(format!(
            "no connected worker holds image {name:?}"
        )));
    }
    let r = app.config().default_resources;
    let spec = wpb::SandboxSpec {
        image: name.into(),
        resources: Some(talon_proto::v1::Resources {
            cpu_millis: r.cpu_millis,
            memory_mib: r.memory_mib,
            disk_mib: r.disk_mib,
            max_pids: r.max_pids,
        }),
        // As the worker's own pool: open until a claim applies the
        // sandbox's policy.
        network_policy: Some(talon_proto::v1::NetworkPolicy {
            mode: talon_proto::v1::EgressMode::Open as i32,
            ..Default::default()
        }),
        ..Default::default()
    };
    // The worker answers when its pool is full or this has passed.
    let timeout = app.config().worker_command_timeout;
    let wait = timeout.saturating_sub(std::time::Duration::from_secs(5));
    let (tx, rx) = mpsc::channel(2 * workers.len());
    for w in workers {
        let (app, tx, spec) = (app.clone(), tx.clone(), spec.clone());
        tokio::spawn(async move {
            let progress = |phase, pool_ready, message| PrewarmProgress {
                worker_id: w.clone(),
                phase,
                pool_ready,
                message,
            };
            let _ = tx.send(progress("pooling", 0, String::new())).await;
            let cmd = wpb::Command {
                command_id: String::new(),
                sandbox_id: String::new(),
                generation: 0,
                action: Some(wpb::command::Action::Prewarm(wpb::PrewarmCommand {
                    spec: Some(spec),
                    pool_size,
                    wait: Some(prost_types::Duration {
                        seconds: wait.as_secs() as i64,
                        nanos: 0,
                    }),
                })),
            };
            let done = match app.workers().command(&app, &w, cmd, timeout).await {
                Ok(r) if r.code == 0 => progress("done", r.pool_ready, String::new()),
                Ok(r) => progress("failed", r.pool_ready, r.message),
                Err(e) => progress("failed", 0, e.to_string()),
            };
            let _ = tx.send(done).await;
        });
    }
    Ok(rx)
}

pub async fn exists(app: &App, name: &str) -> Result<bool> {
    Ok(name == HOST_IMAGE
        || image::Entity::find_by_id(name.to_string())
            .one(app.db())
            .await?
            .is_some())
}

fn worker_client(
    app: &App,
    addr: &str,
) -> Result<WorkerImageServiceClient<tonic::transport::Channel>> {
    Ok(WorkerImageServiceClient::new(app.workers().channel(addr)?)
        .max_encoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES))
}

/// Imports an archive: from `source_path` on each worker's host, or from
/// `data` (the upload, in chunks) when the path is empty.
pub async fn import(
    app: &App,
    name: &str,
    source_path: &str,
    data: impl Stream<Item = Result<Vec<u8>>> + Unpin,
) -> Result<ImageView> {
    if !talon_core::image::valid_name(name) {
        return Err(Error::InvalidArgument(format!(
            "invalid image name {name:?}: letters, digits and ._-:/@+, at most 255, not \"host\""
        )));
    }
    if name.starts_with("snapshot/") {
        // Workers hold snapshots as images of that name (domain::snapshots).
        return Err(Error::InvalidArgument(format!(
            "invalid image name {name:?}: names under snapshot/ are the snapshots'"
        )));
    }
    if !source_path.is_empty() && !source_path.starts_with('/') {
        return Err(Error::InvalidArgument(
            "source_path must be an absolute path on the workers".into(),
        ));
    }
    let targets = app.hub().data_planes();
    if targets.is_empty() {
        return Err(Error::Unavailable(
            "no connected worker runs sandboxes, so none can hold an image".into(),
        ));
    }
    let header = wpb::ImportImageRequest {
        message: Some(wpb::import_image_request::Message::Header(
            talon_proto::v1::ImportImageHeader {
                name: name.into(),
                source_path: source_path.into(),
            },
        )),
    };
    let mut feeds = Vec::new();
    let mut calls = Vec::new();
    for (worker, addr) in &targets {
        let (tx, rx) = mpsc::channel::<wpb::ImportImageRequest>(8);
        tx.send(header.clone()).await.expect("fresh channel");
        let mut client = worker_client(app, addr)?;
        let mut req = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
        app.workers().authorize(req.metadata_mut());
        let w = worker.clone();
        calls.push(tokio::spawn(
            async move { (w, client.import_image(req).await) },
        ));
        feeds.push(tx);
    }
    // The upload goes to every worker; one that stopped reading (it
    // failed) no longer holds the others back, and says why below.
    let mut data = data;
    let mut upload_error = None;
    if source_path.is_empty() {
        while let Some(chunk) = data.next().await {
            match chunk {
                Ok(bytes) => {
                    let msg = wpb::ImportImageRequest {
                        message: Some(wpb::import_image_request::Message::Data(bytes)),
                    };
                    for tx in &feeds {
                        let _ = tx.send(msg.clone()).await;
                    }
                }
                Err(e) => {
                    upload_error = Some(e);
                    break;
                }
            }
        }
    }
    drop(feeds);
    let mut done = Vec::new();
    let mut failed = None;
    for c in calls {
        let (worker, r) = c
            .await
            .map_err(|e| Error::Internal(format!("import task: {e}")))?;
        match r {
            Ok(resp) => done.push((worker, resp.into_inner().image.unwrap_or_default())),
            Err(s) => {
                failed.get_or_insert((worker, s));
            }
        }
    }
    let failure = upload_error
        .or_else(|| failed.map(|(w, s)| crate::workers::calls::error(&w, s.code(), s.message())));
    let digests: std::collections::HashSet<&str> =
        done.iter().map(|(_, i)| i.digest.as_str()).collect();
    let failure = failure.or_else(|| {
        (digests.len() > 1).then(|| {
            Error::Internal(format!(
                "workers disagree on the image's digest: {digests:?}"
            ))
        })
    });
    if let Some(e) = failure {
        // No half-imported image: those that took it forget it again.
        for (worker, _) in &done {
            if let Some((_, addr)) = targets.iter().find(|(w, _)| w == worker) {
                let _ = app.workers().delete_image(addr, name).await;
            }
        }
        return Err(e);
    }
    let (_, first) = &done[0];
    let row = image::ActiveModel {
        name: Set(name.into()),
        digest: Set(first.digest.clone()),
        size_bytes: Set(first.size_bytes),
        created_at: Set(now_ms()),
    };
    image::Entity::insert(row)
        .on_conflict(
            OnConflict::column(image::Column::Name)
                .update_columns([
                    image::Column::Digest,
                    image::Column::SizeBytes,
                    image::Column::CreatedAt,
                ])
                .to_owned(),
        )
        .exec(app.db())
        .await?;
    for (worker, _) in &done {
        app.hub().set_image(worker, name, true);
    }
    get(app, name).await
}

/// Removes an image from the catalogue and from the connected workers.
/// Their sandboxes of it keep running; each worker frees the layers when
/// the last one goes.
pub async fn delete(app: &App, name: &str) -> Result<()> {
    if name == HOST_IMAGE {
        return Err(Error::FailedPrecondition(
            "the built-in host image can't be deleted".into(),
        ));
    }
    let gone = image::Entity::delete_by_id(name.to_string())
        .exec(app.db())
        .await?;
    if gone.rows_affected == 0 {
        return Err(Error::NotFound(format!("image {name:?}")));
    }
    for (worker, addr) in app.hub().data_planes() {
        app.hub().set_image(&worker, name, false);
        if let Err(e) = app.workers().delete_image(&addr, name).await {
            tracing::warn!(worker = %worker, image = %name, error = %e, "worker kept a deleted image");
        }
    }
    Ok(())
}
