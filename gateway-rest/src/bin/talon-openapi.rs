//! `talon-openapi GNOSTIC.yaml`: prints the published OpenAPI 3.1 document
//! made from gnostic's output (see `talon_gateway::openapi`).

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: talon-openapi GNOSTIC_OPENAPI.yaml"))?;
    let yaml = std::fs::read_to_string(&path)?;
    let pool = prost_reflect::DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET)?;
    let doc = talon_gateway::openapi::convert(&yaml, &pool, env!("CARGO_PKG_VERSION"))?;
    println!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}
