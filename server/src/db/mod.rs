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
        private_sqlite_files(url)?;
        // One writer at a time is SQLite's model; a small pool avoids
        // SQLITE_BUSY storms while WAL keeps readers concurrent.
        opts.max_connections(8).min_connections(1);
        // An in-process database has no connection to lose: no ping
        // before each use (a round trip to the connection's thread).
        opts.test_before_acquire(false);
        // Pragmas of every pooled connection (a PRAGMA statement would
        // reach one): WAL, and commits that do not wait for fsync — a
        // crash may lose the last commits, never corrupt the database.
        opts.map_sqlx_sqlite_opts(|o| {
            o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(5))
        });
    } else {
        opts.max_connections(32);
    }
    let db = Database::connect(opts).await?;
    migration::Migrator::up(&db, None).await?;
    Ok(db)
}

/// The database file and its WAL and shared-memory files are the
/// server's alone (0600): they hold every tenant's users, keys' hashes and
/// encrypted secrets. SQLite gives the WAL and -shm files the mode of the
/// database file, so it is made 0600 before SQLite makes it (0644), and
/// all three are tightened when they exist from an older version.
fn private_sqlite_files(url: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let path = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:")
        .split('?')
        .next()
        .unwrap_or("");
    if path.is_empty() || path == ":memory:" || url.contains("mode=memory") {
        return Ok(());
    }
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let f = format!("{path}{suffix}");
        if std::path::Path::new(&f).exists() {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
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

pub use talon_core::time::now_ms;

#[cfg(test)]
mod pragma_tests {
    use sea_orm::{ConnectionTrait, Statement, TransactionTrait};

    /// Every pooled connection, not only the first, has the pragmas: a
    /// PRAGMA statement once reached one, and the rest fsynced each commit
    /// and failed at once on a busy database.
    #[tokio::test]
    async fn every_sqlite_connection_has_the_pragmas() {
        let dir = tempfile::tempdir().unwrap();
        let db = super::connect(&super::sqlite_url(dir.path()))
            .await
            .unwrap();
        // Held at once, these transactions are on different connections.
        let mut txns = Vec::new();
        for _ in 0..4 {
            txns.push(db.begin().await.unwrap());
        }
        for t in &txns {
            let q = |sql: &str| Statement::from_string(sea_orm::DbBackend::Sqlite, sql);
            let get = |row: Option<sea_orm::QueryResult>| -> i64 {
                row.unwrap().try_get_by_index::<i64>(0).unwrap()
            };
            assert_eq!(get(t.query_one(q("PRAGMA synchronous")).await.unwrap()), 1);
            assert_eq!(
                get(t.query_one(q("PRAGMA busy_timeout")).await.unwrap()),
                5000
            );
            assert_eq!(get(t.query_one(q("PRAGMA foreign_keys")).await.unwrap()), 1);
        }
    }
}
