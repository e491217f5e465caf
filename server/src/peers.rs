//! What one server's change makes stale in the others' caches. Several
//! servers on one PostgreSQL each keep short caches (cache.rs); a change
//! made through one of them clears its own at once, and through this
//! module tells the others: a `NOTIFY talon_cache` per invalidation, sent
//! after the change is stored, which every server `LISTEN`s for on a
//! connection of its own and applies to its caches (through the same
//! `forget`/`clear` that bump the cache's generation, so a lookup that
//! read the database before the change cannot put its answer back).
//!
//! The bound: another server serves the change once PostgreSQL has
//! delivered the notification (milliseconds; the multi-server test
//! measures it). If a server's listening connection drops, it forgets
//! everything it cached when it reconnects (notifications sent meanwhile
//! are lost), and while it cannot reconnect the cache's own ttl (2 s by
//! default) remains the bound. SQLite is one server's alone: nothing is
//! sent there.

use crate::app::App;
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
}

impl Stale {
    /// `ORIGIN p` or `ORIGIN s ID`: the sending server, then what.
    fn encode(&self, origin: &str) -> String {
        match self {
            Stale::Principals => format!("{origin} p"),
            Stale::Sandbox(id) => format!("{origin} s {id}"),
        }
    }

    /// The origin and the invalidation; None for what this version does
    /// not know (a newer server's kind): the caller forgets everything.
    fn decode(payload: &str) -> Option<(&str, Option<Stale>)> {
        let mut parts = payload.splitn(3, ' ');
        let origin = parts.next()?;
        let stale = match (parts.next(), parts.next()) {
            (Some("p"), None) => Some(Stale::Principals),
            (Some("s"), Some(id)) if !id.is_empty() => Some(Stale::Sandbox(id.to_string())),
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
        Some(Stale::Principals) => app.principals.clear(),
        Some(Stale::Sandbox(id)) => app.running.forget(&id),
        None => {
            app.principals.clear();
            app.running.clear();
        }
    }
}

/// On PostgreSQL: sends this server's invalidations and applies the other
/// servers' until the process ends. `origin` is this server's id.
pub fn serve(app: Arc<App>, url: String, origin: String) {
    if app.db.get_database_backend() != sea_orm::DbBackend::Postgres {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Stale>();
    if app.peers.outbox.set(tx).is_err() {
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
            if let Err(e) = sender.db.execute(stmt).await {
                sender.metrics.cache_notify_failures.inc();
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
                            app.metrics.cache_invalidations_received.inc();
                            apply(&app, s)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_unknown_kinds_forget_everything() {
        for s in [Stale::Principals, Stale::Sandbox("sbx_a".into())] {
            let p = s.encode("srv_1");
            assert_eq!(Stale::decode(&p), Some(("srv_1", Some(s))));
        }
        assert_eq!(Stale::decode("srv_2 x y"), Some(("srv_2", None)));
        assert_eq!(Stale::decode("srv_2 s"), Some(("srv_2", None)));
        assert_eq!(Stale::decode("srv_2 p extra"), Some(("srv_2", None)));
    }
}
