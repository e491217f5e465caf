//! `talon-openapi GNOSTIC.yaml [--3.0]`: prints the published OpenAPI 3.1
//! document (or its 3.0 twin) made from gnostic's output (see
//! `talon_gateway::openapi`).

use talon_gateway::openapi::Version;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or_else(|| anyhow::anyhow!("usage: talon-openapi GNOSTIC_OPENAPI.yaml [--3.0]"))?;
    let target = if args.iter().any(|a| a == "--3.0") {
        Version::V30
    } else {
        Version::V31
    };
    let yaml = std::fs::read_to_string(path)?;
    let pool = prost_reflect::DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET)?;
    let doc = talon_gateway::openapi::convert(&yaml, &pool, env!("CARGO_PKG_VERSION"), target)?;
    println!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}
