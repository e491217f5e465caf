//! Migrations 7 to 13: snapshots, isolation levels, several servers and
//! workers on one database, worker leases and volumes.

use super::*;

pub(super) struct Snapshots;
pub(super) struct Isolation;
pub(super) struct WorkerDataAddress;
pub(super) struct Servers;
pub(super) struct WorkerInventory;
pub(super) struct WorkerLeases;
pub(super) struct Volumes;

impl MigrationName for Snapshots {
    fn name(&self) -> &str {
        "m20261205_000007_snapshots"
    }
}

/// Tenants' filesystem snapshots (domain::snapshots): each held by the
/// worker that took it, as an image of its store (`worker_image`); and
/// the snapshot a sandbox was created from ("" for none).
#[async_trait::async_trait]
impl MigrationTrait for Snapshots {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "snapshots",
            vec![
                id("id"),
                text("tenant_id"),
                text("name"),
                text("sandbox_id"),
                text("image"),
                text("worker_id"),
                text("worker_image"),
                big("size_bytes"),
                big("frozen_ms"),
                big("created_at"),
            ],
        ))
        .await?;
        m.create_index(index(
            "snapshots_tenant_name",
            "snapshots",
            &["tenant_id", "name"],
            true,
        ))
        .await?;
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(
                    ColumnDef::new(Alias::new("snapshot_id"))
                        .string()
                        .not_null()
                        .default(""),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for Isolation {
    fn name(&self) -> &str {
        "m20261205_000008_isolation"
    }
}

/// The isolation level a sandbox runs at (domain::isolation); the rows
/// before it ran in containers.
#[async_trait::async_trait]
impl MigrationTrait for Isolation {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(
                    ColumnDef::new(Alias::new("isolation"))
                        .string()
                        .not_null()
                        .default("container"),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for WorkerDataAddress {
    fn name(&self) -> &str {
        "m20261205_000009_worker_data_address"
    }
}

/// Where each worker's data plane listens, so that a server other than
/// the one holding the worker's session can reach its sandboxes ("" for
/// rows from before: a worker writes it again when it registers).
#[async_trait::async_trait]
impl MigrationTrait for WorkerDataAddress {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("workers"))
                .add_column(
                    ColumnDef::new(Alias::new("data_address"))
                        .string()
                        .not_null()
                        .default(""),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for Servers {
    fn name(&self) -> &str {
        "m20261205_000010_servers"
    }
}

/// The servers sharing the database, where their peers reach them and
/// when each last said it was alive (peers.rs); and which server holds
/// each worker's session ("" for rows from before).
#[async_trait::async_trait]
impl MigrationTrait for Servers {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "servers",
            vec![id("id"), text("address"), big("heartbeat_at")],
        ))
        .await?;
        m.alter_table(
            Table::alter()
                .table(Alias::new("workers"))
                .add_column(
                    ColumnDef::new(Alias::new("server_id"))
                        .string()
                        .not_null()
                        .default(""),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for WorkerInventory {
    fn name(&self) -> &str {
        "m20261205_000011_worker_inventory"
    }
}

/// What a worker holds and offers (images, isolation levels, usage), as
/// JSON recorded with its heartbeats, so that a server without its
/// session can place sandboxes on it ("" until it next beats).
#[async_trait::async_trait]
impl MigrationTrait for WorkerInventory {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("workers"))
                .add_column(
                    ColumnDef::new(Alias::new("inventory"))
                        .string()
                        .not_null()
                        .default(""),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for WorkerLeases {
    fn name(&self) -> &str {
        "m20261206_000012_worker_leases"
    }
}

/// Each worker's lease (until when, on the database's clock; renewed by
/// its heartbeats), when the autopilot found it lost (0: it is not), when
/// it began moving its sandboxes away (0: not yet), when it was last lost
/// (the placement cooldown), and where its sandboxes' disks live (`local`
/// or `shared`).
#[async_trait::async_trait]
impl MigrationTrait for WorkerLeases {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one at a time.
        for name in [
            "lease_expires_at",
            "lost_at",
            "moving_since",
            "last_lost_at",
        ] {
            m.alter_table(
                Table::alter()
                    .table(Alias::new("workers"))
                    .add_column(
                        ColumnDef::new(Alias::new(name))
                            .big_integer()
                            .not_null()
                            .default(0i64),
                    )
                    .to_owned(),
            )
            .await?;
        }
        m.alter_table(
            Table::alter()
                .table(Alias::new("workers"))
                .add_column(
                    ColumnDef::new(Alias::new("workspace_backend"))
                        .string()
                        .not_null()
                        .default("local"),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for Volumes {
    fn name(&self) -> &str {
        "m20261206_000013_volumes"
    }
}

/// Named volumes, with the sandbox that mounts each ("" for none) and
/// when one was first given it (0: never, so it has no files yet), and
/// each sandbox's mounts (JSON).
#[async_trait::async_trait]
impl MigrationTrait for Volumes {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "volumes",
            vec![
                id("id"),
                text("tenant_id"),
                text("name"),
                big("size_mib"),
                big("created_at"),
                text("sandbox_id"),
                big("mounted_at"),
            ],
        ))
        .await?;
        m.create_index(index(
            "volumes_tenant_name",
            "volumes",
            &["tenant_id", "name"],
            true,
        ))
        .await?;
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(
                    ColumnDef::new(Alias::new("volume_mounts"))
                        .text()
                        .not_null()
                        .default("[]"),
                )
                .to_owned(),
        )
        .await
    }
}
