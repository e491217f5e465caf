//! What one server's change makes stale in the others' caches, and the
//! sandbox events their watchers must hear. Several
//! servers on one PostgreSQL each keep short caches (cache.rs); a change
//! made through one of them clears its own at once, and through this
//! module tells the others: a `NOTIFY talon_cache` per invalidation, sent
//! after the change is stored, which every server `LISTEN`s for on a
//! connection of its own and applies to its caches (through the same
//! `forget`/`clear` that bump the cache's generation, so a lookup that
//! read the database before the change cannot put its answer back).
//!
//! The servers also find each other here: each records its address and a
//! heartbeat every second in `servers`, and a command for a worker whose
//! session another live server holds is relayed there (`RelayCommand`,
//! authenticated with the peer token, derived from the JWT key the
//! servers share and workers never hold), so that any server answers a
//! sandbox's lifecycle calls.
//!
//! The bound: another server serves the change once PostgreSQL has
//! delivered the notification (milliseconds; the multi-server test
//! measures it). If a server's listening connection drops, it forgets
//! everything it cached when it reconnects (notifications sent meanwhile
//! are lost), and while it cannot reconnect the cache's own ttl (2 s by
//! default) remains the bound. SQLite is one server's alone: nothing is
//! sent there.

use crate::app::{App, EventKind};
use sea_orm::ConnectionTrait;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;

/// The PostgreSQL channel the invalidations travel on.
pub const CHANNEL: &str = "talon_cache";

/// One invalidation.
#[derive(Clone, Debug, PartialEq)]
pub enum Stale {
    /// Some user or API key changed: every cached principal.
    Principals,
    /// One sandbox's row.
    Sandbox(String),
    /// A sandbox event (a state change among them): its row is stale, and
    /// the server's watchers get the event, with the row reloaded.
    Event {
        kind: EventKind,
        sandbox_id: String,
        message: String,
    },
}

/// Most bytes of an event's message sent on (NOTIFY payloads stop at 8000).
const MAX_MESSAGE: usize = 1024;

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::StateChanged => "state",
        EventKind::BrowserCrashed => "browser",
        EventKind::IdlePaused => "idle",
        EventKind::AutoResumed => "resumed",
    }
}

fn kind_of(name: &str) -> Option<EventKind> {
    [
        EventKind::StateChanged,
        EventKind::BrowserCrashed,
        EventKind::IdlePaused,
        EventKind::AutoResumed,
    ]
    .into_iter()
    .find(|k| kind_name(*k) == name)
}

impl Stale {
    /// `ORIGIN p`, `ORIGIN s ID` or `ORIGIN e KIND ID MESSAGE`: the
    /// sending server, then what.
    fn encode(&self, origin: &str) -> String {
        match self {
            Stale::Principals => format!("{origin} p"),
            Stale::Sandbox(id) => format!("{origin} s {id}"),
            Stale::Event {
                kind,
                sandbox_id,
                message,
            } => {
                let mut m = message.as_str();
                if m.len() > MAX_MESSAGE {
                    let mut end = MAX_MESSAGE;
                    while !m.is_char_boundary(end) {
                        end -= 1;
                    }
                    m = &m[..end];
                }
                format!("{origin} e {} {sandbox_id} {m}", kind_name(*kind))
            }
        }
    }

    /// The origin and the invalidation; None for what this version does
    /// not know (a newer server's kind): the caller forgets everything.
    fn decode(payload: &str) -> Option<(&str, Option<Stale>)> {
        let mut parts = payload.splitn(3, ' ');
        let origin = parts.next()?;
        let stale = match (parts.next(), parts.next()) {
            (Some("p"), None) => Some(Stale::Principals),
            (Some("s"), Some(id)) if !id.is_empty() && !id.contains(' ') => {
                Some(Stale::Sandbox(id.to_string()))
            }
            (Some("e"), Some(rest)) => {
                let mut f = rest.splitn(3, ' ');
                match (f.next().and_then(kind_of), f.next(), f.next()) {
                    (Some(kind), Some(id), Some(message)) if !id.is_empty() => Some(Stale::Event {
                        kind,
                        sandbox_id: id.to_string(),
                        message: message.to_string(),
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        Some((origin, stale))
    }
}

/// This server's outbox of invalidations; empty (nothing is sent) until
/// [`serve`] starts it on PostgreSQL.
#[derive(Default)]
pub struct Peers {
    outbox: OnceLock<mpsc::UnboundedSender<Stale>>,
}

impl Peers {
    /// Tells the other servers (in order, after the caller's change).
    pub fn send(&self, s: Stale) {
        if let Some(tx) = self.outbox.get() {
            let _ = tx.send(s);
        }
    }
}

/// Applies an invalidation to this server's caches only.
pub fn apply(app: &App, s: Option<Stale>) {
    match s {
        Some(Stale::Principals) => app.principals().clear(),
        Some(Stale::Sandbox(id)) => app.running().forget(&id),
        Some(Stale::Event { sandbox_id, .. }) => app.running().forget(&sandbox_id),
        None => {
            app.principals().clear();
            app.running().clear();
        }
    }
}

/// A server is alive while its heartbeat (every second) is this recent.
pub const ALIVE_MS: i64 = 5_000;

/// This server's gRPC URL as its peers reach it.
pub fn advertised(config: &crate::config::ServerConfig) -> String {
    if let Some(u) = &config.advertise_url {
        return u.clone();
    }
    let a = config.grpc_listen;
    if a.ip().is_unspecified() {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".into());
        format!("http://{host}:{}", a.port())
    } else {
        format!("http://{a}")
    }
}

/// The address of the live server, other than this one, that holds a
/// worker's session; None when none does.
pub async fn holder(app: &App, worker_id: &str) -> crate::error::Result<Option<String>> {
    use crate::db::entity::{server, worker};
    use sea_orm::EntityTrait;
    let Some(w) = worker::Entity::find_by_id(worker_id.to_string())
        .one(app.db())
        .await?
    else {
        return Ok(None);
    };
    if w.server_id.is_empty() || w.server_id == app.config().server_id {
        return Ok(None);
    }
    Ok(server::Entity::find_by_id(w.server_id)
        .one(app.db())
        .await?
        .filter(|s| s.heartbeat_at >= crate::db::now_ms() - ALIVE_MS && !s.address.is_empty())
        .map(|s| s.address))
}

/// Sends a command through the server at `address`, which holds the
/// worker's session.
pub async fn relay(
    app: &App,
    address: &str,
    worker_id: &str,
    cmd: talon_proto::talon::worker::v1::Command,
    timeout: Duration,
) -> crate::error::Result<talon_proto::talon::worker::v1::CommandResult> {
    use crate::error::Error;
    use talon_proto::talon::worker::v1 as wpb;
    let channel = app.workers().channel(address)?;
    let mut req = tonic::Request::new(wpb::RelayCommandRequest {
        worker_id: worker_id.to_string(),
        command: Some(cmd),
        timeout_ms: timeout.as_millis() as i64,
    });
    req.set_timeout(timeout + Duration::from_secs(5));
    let bearer = format!("Bearer {}", app.peer_token())
        .parse()
        .map_err(|_| Error::Internal("the peer token is not a header value".into()))?;
    req.metadata_mut().insert("authorization", bearer);
    let r = wpb::worker_control_service_client::WorkerControlServiceClient::new(channel)
        .relay_command(req)
        .await
        .map_err(|s| {
            crate::workers::calls::error(
                worker_id,
                s.code(),
                &format!("relayed through its server at {address}: {}", s.message()),
            )
        })?;
    r.into_inner()
        .result
        .ok_or_else(|| Error::Internal("a relayed command came back without a result".into()))
}

/// On PostgreSQL: records this server among its peers every second,
/// sends this server's invalidations and applies the other servers' until
/// the process ends.
pub fn serve(app: Arc<App>, url: String) {
    if app.db().get_database_backend() != sea_orm::DbBackend::Postgres {
        return;
    }
    let origin = app.config().server_id.clone();
    let beat = app.clone();
    tokio::spawn(async move {
        use crate::db::entity::server;
        use sea_orm::sea_query::OnConflict;
        use sea_orm::{EntityTrait, Set};
        let address = advertised(beat.config());
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            let row = server::ActiveModel {
                id: Set(beat.config().server_id.clone()),
                address: Set(address.clone()),
                heartbeat_at: Set(crate::db::now_ms()),
            };
            let r = server::Entity::insert(row)
                .on_conflict(
                    OnConflict::column(server::Column::Id)
                        .update_columns([server::Column::Address, server::Column::HeartbeatAt])
                        .to_owned(),
                )
                .exec(beat.db())
                .await;
            if let Err(e) = r {
                tracing::warn!(error = %e, "this server's heartbeat was not recorded");
            }
        }
    });
    let (tx, mut rx) = mpsc::unbounded_channel::<Stale>();
    if app.peers().outbox.set(tx).is_err() {
        return;
    }
    let sender = app.clone();
    let me = origin.clone();
    tokio::spawn(async move {
        while let Some(s) = rx.recv().await {
            let stmt = sea_orm::Statement::from_sql_and_values(
                sea_orm::DbBackend::Postgres,
                "SELECT pg_notify($1, $2)",
                [CHANNEL.into(), s.encode(&me).into()],
            );
            if let Err(e) = sender.db().execute(stmt).await {
                sender.metrics().cache_notify_failures.inc();
                tracing::warn!(error = %e, "other servers not told of a change (their caches expire it within their ttl)");
            }
        }
    });
    tokio::spawn(async move {
        use sea_orm::sqlx::postgres::PgListener;
        loop {
            let mut listener = match PgListener::connect(&url).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for other servers' changes; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if let Err(e) = listener.listen(CHANNEL).await {
                tracing::warn!(error = %e, "cannot listen for other servers' changes; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            // Whatever was sent before this connection listened is lost.
            apply(&app, None);
            loop {
                match listener.try_recv().await {
                    Ok(Some(n)) => match Stale::decode(n.payload()) {
                        Some((from, _)) if from == origin => {}
                        Some((_, s)) => {
                            app.metrics().cache_invalidations_received.inc();
                            let event = match &s {
                                Some(Stale::Event {
                                    kind,
                                    sandbox_id,
                                    message,
                                }) => Some((*kind, sandbox_id.clone(), message.clone())),
                                _ => None,
                            };
                            apply(&app, s);
                            if let Some((kind, id, message)) = event {
                                rebroadcast(&app, kind, &id, message).await;
                            }
                        }
                        None => apply(&app, None),
                    },
                    // The connection was lost (try_recv reconnects): what
                    // was sent meanwhile is lost too.
                    Ok(None) => apply(&app, None),
                    Err(e) => {
                        tracing::warn!(error = %e, "lost the listening connection; reconnecting");
                        apply(&app, None);
                        break;
                    }
                }
            }
        }
    });
}

/// Another server's sandbox event, to this server's watchers, with the
/// row as the database has it now (a sandbox already gone is skipped).
async fn rebroadcast(app: &App, kind: EventKind, id: &str, message: String) {
    match crate::domain::sandboxes::find(app, id).await {
        Ok(Some(row)) => {
            let _ = app.events().send(crate::app::SandboxEvent {
                sandbox: row,
                kind,
                message,
            });
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(sandbox = %id, error = %e, "another server's event not passed on"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_unknown_kinds_forget_everything() {
        for s in [
            Stale::Principals,
            Stale::Sandbox("sbx_a".into()),
            Stale::Event {
                kind: EventKind::BrowserCrashed,
                sandbox_id: "sbx_b".into(),
                message: "it ended: signal 9".into(),
            },
            Stale::Event {
                kind: EventKind::StateChanged,
                sandbox_id: "sbx_c".into(),
                message: String::new(),
            },
        ] {
            let p = s.encode("srv_1");
            assert_eq!(Stale::decode(&p), Some(("srv_1", Some(s))));
        }
        assert_eq!(Stale::decode("srv_2 x y"), Some(("srv_2", None)));
        assert_eq!(Stale::decode("srv_2 s"), Some(("srv_2", None)));
        assert_eq!(Stale::decode("srv_2 p extra"), Some(("srv_2", None)));
        assert_eq!(
            Stale::decode("srv_2 e nosuch sbx_a m"),
            Some(("srv_2", None))
        );
        // A long message is cut (on a character boundary) to fit NOTIFY.
        let long = Stale::Event {
            kind: EventKind::IdlePaused,
            sandbox_id: "sbx_d".into(),
            message: "é".repeat(5000),
        }
        .encode("srv_3");
        assert!(long.len() < 8000);
        assert!(Stale::decode(&long).is_some());
    }
}
