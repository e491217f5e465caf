//! Migrations 1 to 6: the first schema, secrets, images, sandbox metadata,
//! idle timeouts and the duty leases.

use super::*;

pub(super) struct Initial;
pub(super) struct Secrets;
pub(super) struct Images;
pub(super) struct SandboxMetadata;
pub(super) struct SandboxIdle;
pub(super) struct Leases;

impl MigrationName for Initial {
    fn name(&self) -> &str {
        "m20261202_000001_initial"
    }
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
