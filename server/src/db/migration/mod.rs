//! Schema migrations, explicit rather than derived from the entities, so an
//! old migration never changes when an entity does.

mod durability;
mod first;
mod refresh_passwords;
mod sandbox_moves;
mod second;
mod snapshot_reservations;
#[cfg(test)]
mod walk_tests;

use durability::*;
use first::*;
use refresh_passwords::*;
use sandbox_moves::*;
pub(crate) use sea_orm_migration::prelude::*;
use second::*;
use snapshot_reservations::*;

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
            Box::new(Durability),
            Box::new(SnapshotReservations),
            Box::new(RefreshPasswords),
            Box::new(SandboxMoves),
        ]
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
