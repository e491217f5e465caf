//! The OpenAPI document. gnostic's `protoc-gen-openapi` generates it from
//! the protos (paths from `google.api.http`, schemas from the messages, in
//! OpenAPI 3.0); `convert` makes it 3.1 and says what a generator of unary
//! JSON calls can't: how streams are framed (NDJSON, SSE, raw bytes), the
//! raw uploads, the WebSocket, and the bearer credential.
//! scripts/gen-openapi.sh runs both; CI checks the result is committed.

use prost_reflect::{DescriptorPool, MethodDescriptor};
use serde_json::{Map, Value, json};

/// RPCs that take no credential (the server's access table says the same;
/// a test there holds the two together).
pub const PUBLIC: &[&str] = &[
    "/talon.v1.AuthService/Login",
    "/talon.v1.AuthService/Refresh",
    "/talon.v1.AuthService/CreateBrowserSession",
];

fn method_by_operation(pool: &DescriptorPool, op: &str) -> Option<MethodDescriptor> {
    let (svc, m) = op.split_once('_')?;
    pool.get_service_by_name(&format!("talon.v1.{svc}"))?
        .methods()
        .find(|x| x.name() == m)
}

/// OpenAPI 3.0 schema idioms to 3.1 (JSON Schema 2020-12).
fn schema_31(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("format").and_then(Value::as_str) == Some("bytes") {
                o.remove("format");
                o.insert("contentEncoding".into(), "base64".into());
            }
            if o.remove("nullable") == Some(Value::Bool(true))
                && let Some(Value::String(t)) = o.get("type").cloned()
            {
                o.insert("type".into(), json!([t, "null"]));
            }
            for (_, x) in o.iter_mut() {
                schema_31(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(schema_31),
        _ => {}
    }
}

fn ok_response(op: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    op.get_mut("responses")?.get_mut("200")?.as_object_mut()
}

/// Which OpenAPI version to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// The published document.
    V31,
    /// The same content in 3.0, for generators that read 3.0 only.
    V30,
}

/// Converts gnostic's YAML into the published document.
pub fn convert(
    gnostic_yaml: &str,
    pool: &DescriptorPool,
    version: &str,
    target: Version,
) -> anyhow::Result<Value> {
    let mut doc: Value = serde_yaml::from_str(gnostic_yaml)?;
    if target == Version::V31 {
        schema_31(&mut doc);
        doc["openapi"] = "3.1.0".into();
    }
    doc["info"] = json!({
        "title": "Talon Sandbox API",
        "version": version,
        "description": "REST/JSON surface of Talon, transcoded from its gRPC contract (talon.v1). \
            Server streams are NDJSON (one JSON message per line), SSE with `Accept: text/event-stream`, \
            or raw bytes with `Accept: application/octet-stream` where the message carries `data`. \
            Errors are `{\"code\", \"message\", \"details\"}` with the gRPC code.",
        "license": if target == Version::V31 {
            json!({"name": "MIT", "identifier": "MIT"})
        } else {
            json!({"name": "MIT"})
        },
    });
    doc["components"]["securitySchemes"] = json!({
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key (tln_…) or an access JWT from AuthService.Login.",
        },
        "session": {
            "type": "apiKey",
            "in": "cookie",
            "name": crate::session::COOKIE,
            "description": "A browser session from AuthService.CreateBrowserSession. Calls that change state also need its csrfToken in the X-CSRF-Token header, and a foreign Origin is refused.",
        }
    });
    doc["security"] = json!([{"bearer": []}, {"session": []}]);
    rename_dotted_params(&mut doc);
    drop_unserved(&mut doc);
    let paths = doc["paths"]
        .as_object_mut()
        .ok_or_else(|| anyhow::anyhow!("no paths in the generated document"))?;
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (verb, op) in item.iter_mut() {
            let Some(op) = op.as_object_mut() else {
                continue;
            };
            let Some(m) = op
                .get("operationId")
                .and_then(Value::as_str)
                .and_then(|id| method_by_operation(pool, id))
            else {
                continue;
            };
            // An additional binding gets its own operation id (`…_2`).
            let here = (verb.to_uppercase(), unnamed(path));
            if let Some(n) = crate::routes::bindings(&m)
                .iter()
                .position(|(v, p, _)| (v.to_string(), unnamed(p)) == here)
                .filter(|n| *n > 0)
            {
                let id = format!("{}_{}", op["operationId"].as_str().unwrap_or(""), n + 1);
                op.insert("operationId".into(), id.into());
            }
            let rpc = format!("/{}/{}", m.parent_service().full_name(), m.name());
            if PUBLIC.contains(&rpc.as_str()) {
                op.insert("security".into(), json!([]));
            }
            describe_streams(op, &m);
            if verb == "get" {
                query_maps(op, &m);
            }
        }
    }
    Ok(doc)
}

/// gnostic leaves a request's map fields out of a GET's query; the
/// gateway takes them as `name[key]=value` (OpenAPI's deepObject style)
/// or `name.key=value`, so the document says so.
fn query_maps(op: &mut Map<String, Value>, m: &MethodDescriptor) {
    let params = op
        .entry("parameters")
        .or_insert_with(|| Value::Array(vec![]));
    let Some(params) = params.as_array_mut() else {
        return;
    };
    for f in m.input().fields().filter(|f| f.is_map()) {
        params.push(json!({
            "name": f.json_name(),
            "in": "query",
            "style": "deepObject",
            "explode": true,
            "description": format!(
                "Pairs to match, each as `{0}[key]=value` (or `{0}.key=value`).",
                f.json_name()
            ),
            "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        }));
    }
}

/// `{process.pid}` → `{processPid}`: a path parameter's name only labels
/// its position (the gateway binds by the proto's field path), and
/// generators want identifiers.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in name.chars() {
        if c == '.' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn rename_dotted_params(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    let old = std::mem::take(paths);
    for (path, mut item) in old {
        let mut new_path = path.clone();
        for piece in path.split('{').skip(1) {
            let var = piece.split('}').next().unwrap_or("");
            if var.contains('.') {
                new_path = new_path.replace(&format!("{{{var}}}"), &format!("{{{}}}", camel(var)));
            }
        }
        for (_, op) in item.as_object_mut().into_iter().flatten() {
            let params = op.get_mut("parameters").and_then(Value::as_array_mut);
            for p in params.into_iter().flatten() {
                if p["in"] == "path"
                    && let Some(n) = p["name"].as_str().filter(|n| n.contains('.'))
                {
                    p["name"] = camel(n).into();
                }
            }
        }
        paths.insert(new_path, item);
    }
}

/// Paths of services the server does not serve yet go (see
/// `routes::NOT_YET_SERVED`), and tags with no path left with them.
fn drop_unserved(doc: &mut Value) {
    let unserved: Vec<String> = crate::routes::NOT_YET_SERVED
        .iter()
        .map(|s| s.trim_start_matches("talon.v1.").to_string())
        .collect();
    let served_op = |op: &Value| {
        let id = op["operationId"].as_str().unwrap_or("");
        !unserved.iter().any(|s| id.starts_with(&format!("{s}_")))
    };
    if let Some(paths) = doc["paths"].as_object_mut() {
        for item in paths.values_mut() {
            if let Some(ops) = item.as_object_mut() {
                ops.retain(|_, op| served_op(op));
            }
        }
        paths.retain(|_, item| item.as_object().is_some_and(|o| !o.is_empty()));
    }
    if let Some(tags) = doc["tags"].as_array_mut() {
        tags.retain(|t| !unserved.iter().any(|s| t["name"] == s.as_str()));
    }
}

fn describe_streams(op: &mut Map<String, Value>, m: &MethodDescriptor) {
    let out_ref = ok_response(op).and_then(|r| {
        r.get("content")?
            .get("application/json")?
            .get("schema")
            .cloned()
    });
    match (m.is_client_streaming(), m.is_server_streaming()) {
        (true, true) => {
            op.insert(
                "description".into(),
                format!(
                    "{} Open as a WebSocket: text frames carry JSON request messages (the first opens), \
                     binary frames raw input; the server sends raw output as binary frames and other \
                     messages as JSON text frames. Without a WebSocket upgrade the call is refused (400). \
                     Browsers may pass the credential as the subprotocol `bearer.<token>`.",
                    op.get("description").and_then(Value::as_str).unwrap_or("")
                )
                .trim()
                .into(),
            );
            if let Some(r) = ok_response(op) {
                r.insert(
                    "description".into(),
                    "The WebSocket's messages, as JSON".into(),
                );
            }
        }
        (false, true) => {
            if let (Some(schema), Some(r)) = (out_ref, ok_response(op)) {
                let mut content = json!({
                    "application/x-ndjson": {"schema": schema},
                    "text/event-stream": {"schema": {"type": "string", "description": "SSE: one `data:` event per message"}},
                });
                if m.output().get_field_by_name("data").is_some() {
                    content["application/octet-stream"] = json!({"schema": {"type": "string", "contentMediaType": "application/octet-stream"}});
                }
                r.insert("content".into(), content);
                r.insert(
                    "description".into(),
                    "A stream: one message per NDJSON line (an `{\"error\": …}` line ends a stream that fails)".into(),
                );
            }
        }
        (true, false) => {
            let Some(body) = op
                .get_mut("requestBody")
                .and_then(|b| b.get_mut("content"))
                .and_then(Value::as_object_mut)
            else {
                return;
            };
            if let Some(schema) = body
                .get("application/json")
                .and_then(|c| c.get("schema"))
                .cloned()
            {
                body.insert(
                    "application/json".into(),
                    json!({"schema": {"oneOf": [schema, {"type": "array", "items": schema}]}}),
                );
            }
            if crate::transcode::raw_field(&m.input()).is_some() {
                body.insert(
                    "application/octet-stream".into(),
                    json!({"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}),
                );
            }
        }
        (false, false) => {}
    }
}

/// `(METHOD, /path/{}/…)` of every operation, variables unnamed, for
/// comparing the document with the gateway's routes.
pub fn operations(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for verb in item.as_object().into_iter().flat_map(|o| o.keys()) {
                out.push((verb.to_uppercase(), unnamed(path)));
            }
        }
    }
    out.sort();
    out
}

/// `/v1/x/{sandbox_id}:verb` → `/v1/x/{}:verb`.
pub fn unnamed(path: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '{' => {
                depth += 1;
                out.push('{');
            }
            '}' => {
                depth -= 1;
                out.push('}');
            }
            _ if depth > 0 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_3_1_and_its_paths_are_the_gateways_routes() {
        let doc: Value = serde_json::from_str(crate::OPENAPI).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        let pool = DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut routes: Vec<(String, String)> = crate::routes::table(&pool)
            .unwrap()
            .iter()
            .map(|r| (r.verb.to_string(), unnamed(&r.template.raw)))
            .collect();
        routes.sort();
        assert_eq!(operations(&doc), routes);
    }

    #[test]
    fn streams_and_credentials_are_described() {
        let doc: Value = serde_json::from_str(crate::OPENAPI).unwrap();
        let login = &doc["paths"]["/v1/auth/login"]["post"];
        assert_eq!(login["security"], json!([]));
        let read = &doc["paths"]["/v1/sandboxes/{sandboxId}/files:read"]["get"];
        let content = read["responses"]["200"]["content"].as_object().unwrap();
        for t in [
            "application/x-ndjson",
            "text/event-stream",
            "application/octet-stream",
        ] {
            assert!(content.contains_key(t), "{t}");
        }
        let write = &doc["paths"]["/v1/sandboxes/{sandboxId}/files:write"]["post"];
        assert!(write["requestBody"]["content"]["application/octet-stream"].is_object());
    }
}
