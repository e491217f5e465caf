//! Schema migrations, explicit rather than derived from the entities, so an
//! old migration never changes when an entity does.

use sea_orm_migration::prelude::*;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(Initial),
            Box::new(Secrets),
            Box::new(Images),
            Box::new(SandboxMetadata),
            Box::new(SandboxIdle),
            Box::new(Leases),
            Box::new(Snapshots),
            Box::new(Isolation),
            Box::new(WorkerDataAddress),
            Box::new(Servers),
            Box::new(WorkerInventory),
            Box::new(WorkerLeases),
            Box::new(Volumes),
        ]
    }
}

struct Initial;
struct Secrets;
struct Images;
struct SandboxMetadata;
struct SandboxIdle;
struct Leases;
struct Snapshots;
struct Isolation;
struct WorkerDataAddress;
struct Servers;
struct WorkerInventory;
struct WorkerLeases;
struct Volumes;

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

impl MigrationName for Leases {
    fn name(&self) -> &str {
        "m20261205_000006_leases"
    }
}

/// Leases that servers sharing one database take in turn (see
/// domain::lease): who holds one, until when (the database's clock, ms),
/// and how many times it changed hands.
#[async_trait::async_trait]
impl MigrationTrait for Leases {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "leases",
            vec![id("name"), text("holder"), big("expires_at"), big("epoch")],
        ))
        .await
    }
}

impl MigrationName for SandboxIdle {
    fn name(&self) -> &str {
        "m20261205_000005_sandbox_idle"
    }
}

/// Idle auto-pause (0: never) and auto-resume, both off for the rows
/// that were there before.
#[async_trait::async_trait]
impl MigrationTrait for SandboxIdle {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(
                    ColumnDef::new(Alias::new("idle_timeout_ms"))
                        .big_integer()
                        .not_null()
                        .default(0),
                )
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(
                    ColumnDef::new(Alias::new("auto_resume"))
                        .boolean()
                        .not_null()
                        .default(false),
                )
                .to_owned(),
        )
        .await
    }
}

impl MigrationName for SandboxMetadata {
    fn name(&self) -> &str {
        "m20261204_000004_sandbox_metadata"
    }
}

/// Metadata (a JSON object, like labels) and the create's idempotency key,
/// unique per tenant while set (NULLs never collide).
#[async_trait::async_trait]
impl MigrationTrait for SandboxMetadata {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(
                    ColumnDef::new(Alias::new("metadata"))
                        .text()
                        .not_null()
                        .default("{}"),
                )
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table(Alias::new("sandboxes"))
                .add_column(ColumnDef::new(Alias::new("idempotency_key")).text().null())
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "sandboxes_tenant_idempotency",
            "sandboxes",
            &["tenant_id", "idempotency_key"],
            true,
        ))
        .await
    }
}

impl MigrationName for Images {
    fn name(&self) -> &str {
        "m20261202_000003_images"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Images {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "images",
            vec![
                id("name"),
                text("digest"),
                big("size_bytes"),
                big("created_at"),
            ],
        ))
        .await
    }
}

impl MigrationName for Secrets {
    fn name(&self) -> &str {
        "m20261202_000002_secrets"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Secrets {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "secrets",
            vec![
                id("id"),
                text("tenant_id"),
                text("name"),
                text("delivery"),
                ColumnDef::new(Alias::new("ciphertext"))
                    .text()
                    .not_null()
                    .to_owned(),
                text("nonce"),
                big("created_at"),
                big("updated_at"),
                big_null("expires_at"),
            ],
        ))
        .await?;
        m.create_index(index(
            "secrets_tenant_name",
            "secrets",
            &["tenant_id", "name"],
            true,
        ))
        .await
    }
}

impl MigrationName for Initial {
    fn name(&self) -> &str {
        "m20261202_000001_initial"
    }
}

fn id(name: &str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .string()
        .not_null()
        .primary_key()
        .to_owned()
}
fn text(name: &str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .string()
        .not_null()
        .to_owned()
}
fn big(name: &str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .big_integer()
        .not_null()
        .to_owned()
}
fn big_null(name: &str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .big_integer()
        .null()
        .to_owned()
}
fn boolean(name: &str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .boolean()
        .not_null()
        .to_owned()
}
fn table(name: &str, cols: Vec<ColumnDef>) -> TableCreateStatement {
    let mut t = Table::create();
    t.table(Alias::new(name)).if_not_exists();
    for mut c in cols {
        t.col(&mut c);
    }
    t.to_owned()
}
fn index(name: &str, on: &str, cols: &[&str], unique: bool) -> IndexCreateStatement {
    let mut i = Index::create();
    i.name(name).table(Alias::new(on)).if_not_exists();
    for c in cols {
        i.col(Alias::new(*c));
    }
    if unique {
        i.unique();
    }
    i.to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Initial {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(table(
            "tenants",
            vec![
                id("id"),
                text("name"),
                boolean("platform"),
                big("max_sandboxes"),
                big("max_cpu_millis"),
                big("max_memory_mib"),
                big("created_at"),
            ],
        ))
        .await?;
        m.create_index(index("tenants_name", "tenants", &["name"], true))
            .await?;
        m.create_table(table(
            "users",
            vec![
                id("id"),
                text("tenant_id"),
                text("email"),
                text("password_hash"),
                text("role"),
                boolean("disabled"),
                big("created_at"),
            ],
        ))
        .await?;
        m.create_index(index("users_email", "users", &["email"], true))
            .await?;
        m.create_index(index("users_tenant", "users", &["tenant_id"], false))
            .await?;
        m.create_table(table(
            "api_keys",
            vec![
                id("id"),
                text("tenant_id"),
                text("user_id"),
                text("name"),
                text("prefix"),
                text("secret_hash"),
                text("role"),
                big("created_at"),
                big_null("expires_at"),
                big_null("last_used_at"),
            ],
        ))
        .await?;
        m.create_index(index("api_keys_prefix", "api_keys", &["prefix"], true))
            .await?;
        m.create_index(index("api_keys_tenant", "api_keys", &["tenant_id"], false))
            .await?;
        m.create_table(table(
            "refresh_tokens",
            vec![
                id("id"),
                text("tenant_id"),
                text("user_id"),
                text("secret_hash"),
                big("created_at"),
                big("expires_at"),
                big_null("revoked_at"),
            ],
        ))
        .await?;
        m.create_index(index(
            "refresh_tokens_user",
            "refresh_tokens",
            &["user_id"],
            false,
        ))
        .await?;
        m.create_table(table(
            "workers",
            vec![
                id("id"),
                text("hostname"),
                boolean("draining"),
                big("cpu_millis"),
                big("memory_mib"),
                big("max_sandboxes"),
                text("runtimes"),
                text("version"),
                big("registered_at"),
                big("last_heartbeat_at"),
            ],
        ))
        .await?;
        m.create_table(table(
            "sandboxes",
            vec![
                id("id"),
                text("tenant_id"),
                text("owner_id"),
                text("image"),
                text("state"),
                text("state_message"),
                big("generation"),
                ColumnDef::new(Alias::new("worker_id"))
                    .string()
                    .null()
                    .to_owned(),
                big("cpu_millis"),
                big("memory_mib"),
                big("disk_mib"),
                big("max_pids"),
                ColumnDef::new(Alias::new("labels"))
                    .text()
                    .not_null()
                    .to_owned(),
                ColumnDef::new(Alias::new("env"))
                    .text()
                    .not_null()
                    .to_owned(),
                ColumnDef::new(Alias::new("secret_names"))
                    .text()
                    .not_null()
                    .to_owned(),
                ColumnDef::new(Alias::new("network_policy"))
                    .text()
                    .not_null()
                    .to_owned(),
                big("timeout_ms"),
                text("timeout_action"),
                big("created_at"),
                big("updated_at"),
                big_null("expires_at"),
            ],
        ))
        .await?;
        m.create_index(index(
            "sandboxes_tenant_created",
            "sandboxes",
            &["tenant_id", "created_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "sandboxes_worker",
            "sandboxes",
            &["worker_id"],
            false,
        ))
        .await?;
        m.create_table(table(
            "audit_events",
            vec![
                ColumnDef::new(Alias::new("id"))
                    .big_integer()
                    .not_null()
                    .auto_increment()
                    .primary_key()
                    .to_owned(),
                big("created_at"),
                text("tenant_id"),
                text("actor_id"),
                text("method"),
                text("resource_id"),
                text("outcome"),
                text("request_id"),
            ],
        ))
        .await?;
        m.create_index(index(
            "audit_tenant",
            "audit_events",
            &["tenant_id", "id"],
            false,
        ))
        .await?;
        Ok(())
    }
}
