//! Persistence: sea-orm entities and migrations. SQLite under the data
//! directory is the embedded default; PostgreSQL is for multi-node. API types
//! never reach this layer: handlers convert at the edge.

pub mod entity;
pub mod migration;

use sea_orm::{ConnectOptions, Database, DatabaseConnection};
use sea_orm_migration::MigratorTrait;
use std::time::Duration;

/// Opens the database and brings its schema up to date.
pub async fn connect(url: &str) -> anyhow::Result<DatabaseConnection> {
    let mut opts = ConnectOptions::new(url.to_string());
    opts.connect_timeout(Duration::from_secs(10))
        .sqlx_logging(false);
    if url.starts_with("sqlite:") {
        // One writer at a time is SQLite's model; a small pool avoids
        // SQLITE_BUSY storms while WAL keeps readers concurrent.
        opts.max_connections(8).min_connections(1);
    } else {
        opts.max_connections(32);
    }
    let db = Database::connect(opts).await?;
    if url.starts_with("sqlite:") {
        use sea_orm::ConnectionTrait;
        db.execute_unprepared("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000;")
            .await?;
    }
    migration::Migrator::up(&db, None).await?;
    Ok(db)
}

/// Begins a transaction that will write. On SQLite a transaction begins
/// as a reader, and in WAL mode one that reads and then writes after
/// another connection's commit fails at once with SQLITE_BUSY_SNAPSHOT,
/// whatever the busy timeout. `BEGIN IMMEDIATE` avoids that, but sea-orm
/// has no way to issue it; a write that changes nothing, as the first
/// statement, takes the write lock the same way (waiting out the busy
/// timeout if another writer holds it).
pub async fn begin_write(
    db: &DatabaseConnection,
) -> Result<sea_orm::DatabaseTransaction, sea_orm::DbErr> {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let txn = db.begin().await?;
    if txn.get_database_backend() == sea_orm::DbBackend::Sqlite {
        txn.execute_unprepared("UPDATE tenants SET id = id WHERE 0")
            .await?;
    }
    Ok(txn)
}

/// The default database URL for a data directory.
pub fn sqlite_url(data_dir: &std::path::Path) -> String {
    format!("sqlite://{}?mode=rwc", data_dir.join("talon.db").display())
}

/// Milliseconds since the Unix epoch: how every time is stored.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
