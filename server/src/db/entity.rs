//! Storage types. Times are Unix milliseconds; enums are stored as their
//! lowercase names so the database stays readable and portable.

pub mod tenant {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "tenants")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        #[sea_orm(unique)]
        pub name: String,
        pub platform: bool,
        pub max_sandboxes: i64,
        pub max_cpu_millis: i64,
        pub max_memory_mib: i64,
        pub created_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod user {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "users")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        #[sea_orm(unique)]
        pub email: String,
        pub password_hash: String,
        pub role: String,
        pub disabled: bool,
        pub created_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod api_key {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "api_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        pub user_id: String,
        pub name: String,
        #[sea_orm(unique)]
        pub prefix: String,
        pub secret_hash: String,
        pub role: String,
        pub created_at: i64,
        pub expires_at: Option<i64>,
        pub last_used_at: Option<i64>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod refresh_token {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "refresh_tokens")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        pub user_id: String,
        pub secret_hash: String,
        pub created_at: i64,
        pub expires_at: i64,
        pub revoked_at: Option<i64>,
        /// The password it was issued under (`password::fingerprint`);
        /// "" for tokens from before migration 16.
        pub password_fp: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod worker {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "workers")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub hostname: String,
        pub draining: bool,
        pub cpu_millis: i64,
        pub memory_mib: i64,
        pub max_sandboxes: i64,
        pub runtimes: String,
        pub version: String,
        pub registered_at: i64,
        pub last_heartbeat_at: i64,
        /// Where its data plane listens (host:port), as it registered.
        pub data_address: String,
        /// The server holding its session ("" before any did).
        pub server_id: String,
        /// Its images, levels and usage as JSON (domain::workers::Inventory).
        pub inventory: String,
        /// Until when its lease holds (ms, the database's clock).
        pub lease_expires_at: i64,
        /// When the autopilot found it lost (0: it is not lost).
        pub lost_at: i64,
        /// When the autopilot began moving its sandboxes away (0: not yet):
        /// from then on its renewals tell it to fence.
        pub moving_since: i64,
        /// When it was last lost: no placement on it for the cooldown.
        pub last_lost_at: i64,
        /// `local` or `shared`.
        pub workspace_backend: String,
        /// The fence scope the worker last reported applying (a
        /// `FenceScope` number; 0: none): the autopilot moves nothing
        /// its worker would not stop.
        pub fence_scope: i64,
        /// When its current session registered (ms): its beats' reports
        /// count only for that session.
        pub session_at: i64,
        /// When the autopilot last began moving sandboxes off it (0:
        /// never): no placement on it for the cooldown, while another
        /// worker can take them.
        pub last_moved_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod sandbox {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "sandboxes")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        pub owner_id: String,
        pub image: String,
        pub state: String,
        pub state_message: String,
        pub generation: i64,
        pub worker_id: Option<String>,
        pub cpu_millis: i64,
        pub memory_mib: i64,
        pub disk_mib: i64,
        pub max_pids: i64,
        /// JSON object of labels.
        pub labels: String,
        /// JSON object of environment variables (never returned by the API).
        pub env: String,
        /// JSON array of secret names.
        pub secret_names: String,
        /// JSON of the egress policy (domain type).
        pub network_policy: String,
        pub timeout_ms: i64,
        pub timeout_action: String,
        pub created_at: i64,
        pub updated_at: i64,
        pub expires_at: Option<i64>,
        /// JSON object of metadata.
        pub metadata: String,
        /// The create's idempotency key, while it holds (24 hours).
        pub idempotency_key: Option<String>,
        /// Pause after this long without activity; 0: never.
        pub idle_timeout_ms: i64,
        /// A call to it while paused resumes it first.
        pub auto_resume: bool,
        /// The snapshot it was created from; "" for none.
        pub snapshot_id: String,
        /// Its isolation level's name (domain::isolation).
        pub isolation: String,
        /// JSON array of its volume mounts (domain::volumes::Mount).
        pub volume_mounts: String,
        /// `always` or `never` (see RestartPolicy).
        pub restart_policy: String,
        /// `wait`, `move`, or "" for the platform's default.
        pub worker_loss: String,
        /// sha256 of the create request, for idempotent retries ("" for
        /// rows made before it was kept).
        pub request_hash: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod audit_event {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "audit_events")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: i64,
        pub created_at: i64,
        pub tenant_id: String,
        pub actor_id: String,
        pub method: String,
        pub resource_id: String,
        pub outcome: String,
        pub request_id: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod sandbox_move {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "sandbox_moves")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: i64,
        pub moved_at: i64,
        pub sandbox_id: String,
        pub tenant_id: String,
        pub from_worker: String,
        pub to_worker: String,
        /// `history::Cause`'s name.
        pub cause: String,
        pub generation: i64,
        pub workspace_kept: bool,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod secret {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "secrets")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        pub name: String,
        pub delivery: String,
        /// XChaCha20-Poly1305 of the value, base32; see domain::secrets.
        pub ciphertext: String,
        pub nonce: String,
        pub created_at: i64,
        pub updated_at: i64,
        pub expires_at: Option<i64>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// Named volumes (domain::volumes); their files live on the workers'
/// shared storage.
pub mod volume {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "volumes")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        pub name: String,
        pub size_mib: i64,
        pub created_at: i64,
        /// The sandbox that mounts it; "" for none.
        pub sandbox_id: String,
        /// When a sandbox was first given it (ms); 0: never, so no worker
        /// made its files.
        pub mounted_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// Imported images: a platform-wide catalogue. The layers themselves live
/// on the workers.
pub mod image {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "images")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub name: String,
        pub digest: String,
        pub size_bytes: i64,
        pub created_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod snapshot {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "snapshots")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub tenant_id: String,
        pub name: String,
        /// The sandbox it was taken from.
        pub sandbox_id: String,
        /// The image that sandbox was created from.
        pub image: String,
        /// The worker that holds it, and its image there.
        pub worker_id: String,
        pub worker_image: String,
        /// While pending, the bytes reserved for its copy; then its size.
        pub size_bytes: i64,
        pub frozen_ms: i64,
        pub created_at: i64,
        /// Its copy is under way: a reservation, not yet a snapshot.
        pub pending: bool,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod server {
    use sea_orm::entity::prelude::*;

    /// A server sharing the database (peers.rs).
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "servers")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        /// Its gRPC URL, as its peers reach it.
        pub address: String,
        /// Ms since the epoch, this server's clock.
        pub heartbeat_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod lease {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "leases")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub name: String,
        /// The server holding it; empty when none ever did.
        pub holder: String,
        /// Ms since the epoch, on the database's clock.
        pub expires_at: i64,
        /// Incremented each time it changes hands.
        pub epoch: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
