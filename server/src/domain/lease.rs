//! Leases in the database, for duties that must run on one server at a
//! time when several share it (sandbox timeouts and secret expiry now; the
//! autopilot later). A server holds a lease by renewing it before it
//! expires; another takes it once it has expired (its holder died, or lost
//! the database). Expiry is on the database's clock, so the servers'
//! clocks need not agree, and the holder and the taker are decided by one
//! conditional update, so two servers never both hold it. Each change of
//! hands bumps the epoch. A duty that runs twice around a hand-over (the
//! old holder's last tick and the new one's first) must be harmless; the
//! sandbox duties are conditional updates, so they are.

use crate::db::entity::lease;
use crate::error::{Error, Result};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DatabaseBackend, DbErr, EntityTrait,
    QueryFilter, Statement,
};
use std::time::Duration;

/// The lease of the once-per-platform background duties.
pub const DUTIES: &str = "duties";

/// A lease this server holds, as of the renewal that returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// How many times it has changed hands.
    pub epoch: i64,
    /// Until when (ms, the database's clock).
    pub expires_at: i64,
}

/// The database's clock, in ms since the epoch.
pub async fn db_now_ms<C: ConnectionTrait>(db: &C) -> Result<i64> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Sqlite => {
            "SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) AS now"
        }
        DatabaseBackend::Postgres => {
            "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now"
        }
        other => {
            return Err(Error::Internal(format!(
                "leases are not supported on {other:?}"
            )));
        }
    };
    let row = db
        .query_one(Statement::from_string(backend, sql))
        .await?
        .ok_or_else(|| Error::Internal("the database did not tell the time".into()))?;
    Ok(row.try_get::<i64>("", "now")?)
}

/// Takes or renews the lease `name` for `holder` for `ttl`: Some when
/// `holder` holds it now, None when another does.
pub async fn acquire<C: ConnectionTrait>(
    db: &C,
    name: &str,
    holder: &str,
    ttl: Duration,
) -> Result<Option<Held>> {
    let now = db_now_ms(db).await?;
    let fresh = lease::ActiveModel {
        name: Set(name.into()),
        holder: Set(String::new()),
        expires_at: Set(0),
        epoch: Set(0),
    };
    match lease::Entity::insert(fresh)
        .on_conflict(
            OnConflict::column(lease::Column::Name)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await
    {
        Ok(_) | Err(DbErr::RecordNotInserted) => {}
        Err(e) => return Err(e.into()),
    }
    let expires_at = now + ttl.as_millis() as i64;
    let res = lease::Entity::update_many()
        // Every right-hand side reads the row as it was.
        .col_expr(
            lease::Column::Epoch,
            Expr::case(
                lease::Column::Holder.eq(holder),
                Expr::col(lease::Column::Epoch),
            )
            .finally(Expr::col(lease::Column::Epoch).add(1))
            .into(),
        )
        .col_expr(lease::Column::Holder, Expr::value(holder))
        .col_expr(lease::Column::ExpiresAt, Expr::value(expires_at))
        .filter(lease::Column::Name.eq(name))
        .filter(
            Condition::any()
                .add(lease::Column::Holder.eq(holder))
                .add(lease::Column::ExpiresAt.lt(now)),
        )
        .exec(db)
        .await?;
    if res.rows_affected != 1 {
        return Ok(None);
    }
    let row = lease::Entity::find_by_id(name.to_string())
        .one(db)
        .await?
        .ok_or_else(|| Error::Internal(format!("lease {name} vanished")))?;
    Ok(Some(Held {
        epoch: row.epoch,
        expires_at: row.expires_at,
    }))
}

/// Gives the lease up (a clean shutdown), so another server takes it at
/// once rather than when it expires.
pub async fn release<C: ConnectionTrait>(db: &C, name: &str, holder: &str) -> Result<()> {
    lease::Entity::update_many()
        .col_expr(lease::Column::ExpiresAt, Expr::value(0))
        .filter(lease::Column::Name.eq(name))
        .filter(lease::Column::Holder.eq(holder))
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_holder_at_a_time_and_a_dead_ones_lease_passes_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::db::connect(&crate::db::sqlite_url(dir.path()))
            .await
            .unwrap();
        let ttl = Duration::from_secs(60);
        let now = crate::db::now_ms();
        assert!((db_now_ms(&db).await.unwrap() - now).abs() < 5_000);
        let a = acquire(&db, DUTIES, "srv_a", ttl).await.unwrap().unwrap();
        assert_eq!(a.epoch, 1);
        assert!(acquire(&db, DUTIES, "srv_b", ttl).await.unwrap().is_none());
        let renewed = acquire(&db, DUTIES, "srv_a", ttl).await.unwrap().unwrap();
        assert_eq!(renewed.epoch, 1, "a renewal is no change of hands");
        assert!(renewed.expires_at >= a.expires_at);
        // Another lease is apart.
        assert!(acquire(&db, "other", "srv_b", ttl).await.unwrap().is_some());
        // Given up: the next server takes it at once.
        release(&db, DUTIES, "srv_b").await.unwrap();
        assert!(acquire(&db, DUTIES, "srv_b", ttl).await.unwrap().is_none());
        release(&db, DUTIES, "srv_a").await.unwrap();
        let b = acquire(&db, DUTIES, "srv_b", ttl).await.unwrap().unwrap();
        assert_eq!(b.epoch, 2);
        // Not renewed in time: it passes on, and the old holder is out.
        let short = Duration::from_millis(50);
        acquire(&db, DUTIES, "srv_b", short).await.unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(120)).await;
        let a = acquire(&db, DUTIES, "srv_a", ttl).await.unwrap().unwrap();
        assert_eq!(a.epoch, 3);
        assert!(acquire(&db, DUTIES, "srv_b", ttl).await.unwrap().is_none());
    }
}
