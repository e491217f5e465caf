//! The route table, read from the `google.api.http` rules in the
//! descriptor set at start, as Envoy's gRPC-JSON transcoder does: no
//! endpoint is written by hand. A template is `/literal/{field.path}/…`
//! with an optional `:verb` on the last segment.

use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor, Value};

/// Services in the contract that the control plane does not serve yet:
/// they get no route and no place in the OpenAPI document (gRPC
/// reflection leaves them out the same way). A server test keeps this
/// list and the served services together.
pub const NOT_YET_SERVED: &[&str] = &[];

/// One segment of a path template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    /// A field path (`sandbox_id`, `process.pid`) bound to one segment.
    Var(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub segments: Vec<Segment>,
    pub verb: Option<String>,
    /// As written in the proto.
    pub raw: String,
}

impl Template {
    pub fn parse(raw: &str) -> Result<Template, String> {
        let path = raw
            .strip_prefix('/')
            .ok_or_else(|| format!("template {raw:?} must start with /"))?;
        let mut segments = Vec::new();
        let mut verb = None;
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let mut part = *part;
            if i == parts.len() - 1 {
                // A verb follows the last segment, after a ':' that is
                // not inside a variable.
                let close = part.rfind('}').map_or(0, |c| c + 1);
                if let Some(colon) = part[close..].find(':') {
                    verb = Some(part[close + colon + 1..].to_string());
                    part = &part[..close + colon];
                }
            }
            if let Some(var) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                if var.contains('=') {
                    return Err(format!("{raw}: only {{field}} variables are supported"));
                }
                segments.push(Segment::Var(var.to_string()));
            } else if part.is_empty() || part.contains(['{', '}', '*']) {
                return Err(format!("{raw}: unsupported segment {part:?}"));
            } else {
                segments.push(Segment::Literal(part.to_string()));
            }
        }
        Ok(Template {
            segments,
            verb,
            raw: raw.to_string(),
        })
    }

    /// The variables bound by `path` (not yet percent-decoded), or None.
    pub fn matches(&self, path: &str) -> Option<Vec<(String, String)>> {
        let mut path = path.strip_prefix('/')?;
        if let Some(v) = &self.verb {
            path = path.strip_suffix(v.as_str())?.strip_suffix(':')?;
        }
        let parts: Vec<&str> = path.split('/').collect();
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut vars = Vec::new();
        for (seg, part) in self.segments.iter().zip(parts) {
            match seg {
                Segment::Literal(l) if l == part => {}
                Segment::Literal(_) => return None,
                Segment::Var(_) if part.is_empty() => return None,
                Segment::Var(f) => vars.push((f.clone(), part.to_string())),
            }
        }
        Some(vars)
    }

    /// How specific: literals and a verb win over variables.
    fn rank(&self) -> (usize, usize) {
        let literals = self
            .segments
            .iter()
            .filter(|s| matches!(s, Segment::Literal(_)))
            .count();
        (usize::from(self.verb.is_some()), literals)
    }
}

/// Where the HTTP body goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyRule {
    None,
    /// The whole request message (`body: "*"`).
    All,
    /// One field of it.
    Field(String),
}

#[derive(Clone, Debug)]
pub struct Route {
    pub verb: http::Method,
    pub template: Template,
    pub method: MethodDescriptor,
    pub body: BodyRule,
}

impl Route {
    /// `/talon.v1.SandboxService/CreateSandbox`
    pub fn grpc_path(&self) -> String {
        format!(
            "/{}/{}",
            self.method.parent_service().full_name(),
            self.method.name()
        )
    }
}

fn rules_of(rule: &DynamicMessage, out: &mut Vec<(http::Method, String, BodyRule)>) {
    let text = |name: &str| match rule.get_field_by_name(name).as_deref() {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let (verb, path) = match ["get", "put", "post", "delete", "patch"]
        .into_iter()
        .find(|k| rule.has_field_by_name(k))
    {
        Some(k) => (k.to_uppercase(), text(k)),
        None => match rule.get_field_by_name("custom").as_deref() {
            Some(Value::Message(c)) => {
                let kind = match c.get_field_by_name("kind").as_deref() {
                    Some(Value::String(s)) => s.clone(),
                    _ => String::new(),
                };
                let path = match c.get_field_by_name("path").as_deref() {
                    Some(Value::String(s)) => s.clone(),
                    _ => String::new(),
                };
                (kind, path)
            }
            _ => return,
        },
    };
    let body = match text("body").as_str() {
        "" => BodyRule::None,
        "*" => BodyRule::All,
        f => BodyRule::Field(f.to_string()),
    };
    if let Ok(m) = http::Method::from_bytes(verb.as_bytes()) {
        out.push((m, path, body));
    }
    if let Some(Value::List(extra)) = rule.get_field_by_name("additional_bindings").as_deref() {
        for e in extra {
            if let Value::Message(m) = e {
                rules_of(m, out);
            }
        }
    }
}

/// A method's HTTP bindings, the main one first, then its
/// `additional_bindings` in order.
pub fn bindings(m: &MethodDescriptor) -> Vec<(http::Method, String, BodyRule)> {
    let mut rules = Vec::new();
    let Some(ext) = m.parent_pool().get_extension_by_name("google.api.http") else {
        return rules;
    };
    let opts = m.options();
    if opts.has_extension(&ext)
        && let Value::Message(rule) = opts.get_extension(&ext).into_owned()
    {
        rules_of(&rule, &mut rules);
    }
    rules
}

/// Every route of the public services (`talon.v1`), most specific first.
pub fn table(pool: &DescriptorPool) -> anyhow::Result<Vec<Route>> {
    anyhow::ensure!(
        pool.get_extension_by_name("google.api.http").is_some(),
        "the descriptor set has no google.api.http"
    );
    let mut routes = Vec::new();
    for svc in pool
        .services()
        .filter(|s| s.package_name() == "talon.v1" && !NOT_YET_SERVED.contains(&s.full_name()))
    {
        for m in svc.methods() {
            for (verb, path, body) in bindings(&m) {
                let template = Template::parse(&path)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", m.full_name()))?;
                routes.push(Route {
                    verb,
                    template,
                    method: m.clone(),
                    body,
                });
            }
        }
    }
    routes.sort_by_key(|r| std::cmp::Reverse(r.template.rank()));
    Ok(routes)
}

/// What a request path and verb resolve to.
pub enum Found<'a> {
    Route(&'a Route, Vec<(String, String)>),
    /// The path exists, not with this verb.
    WrongVerb(Vec<http::Method>),
    None,
}

pub fn find<'a>(routes: &'a [Route], verb: &http::Method, path: &str) -> Found<'a> {
    let mut allowed = Vec::new();
    for r in routes {
        if let Some(vars) = r.template.matches(path) {
            if r.verb == *verb {
                return Found::Route(r, vars);
            }
            allowed.push(r.verb.clone());
        }
    }
    if allowed.is_empty() {
        Found::None
    } else {
        Found::WrongVerb(allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_and_match() {
        let t =
            Template::parse("/v1/sandboxes/{sandbox_id}/processes/{process.pid}:connect").unwrap();
        assert_eq!(t.verb.as_deref(), Some("connect"));
        assert_eq!(
            t.matches("/v1/sandboxes/sbx_1/processes/42:connect"),
            Some(vec![
                ("sandbox_id".into(), "sbx_1".into()),
                ("process.pid".into(), "42".into())
            ])
        );
        assert_eq!(t.matches("/v1/sandboxes/sbx_1/processes/42"), None);
        let name = Template::parse("/v1/images/{name}").unwrap();
        // A colon inside a value is not a verb when the template has none.
        assert_eq!(
            name.matches("/v1/images/debian:bookworm"),
            Some(vec![("name".into(), "debian:bookworm".into())])
        );
        assert_eq!(name.matches("/v1/images/"), None);
        let import = Template::parse("/v1/images:import").unwrap();
        assert_eq!(import.matches("/v1/images:import"), Some(vec![]));
        assert!(Template::parse("/v1/{a=**}").is_err());
    }

    #[test]
    fn the_contract_gives_every_public_rpc_a_route() {
        let pool = DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap();
        let routes = table(&pool).unwrap();
        let rpcs: usize = pool
            .services()
            .filter(|s| s.package_name() == "talon.v1" && !NOT_YET_SERVED.contains(&s.full_name()))
            .map(|s| s.methods().len())
            .sum();
        assert!(
            routes.len() >= rpcs,
            "{} routes for {rpcs} rpcs",
            routes.len()
        );
        let get = |p: &str| match find(&routes, &http::Method::GET, p) {
            Found::Route(r, _) => r.method.name().to_string(),
            _ => String::new(),
        };
        assert_eq!(get("/v1/images/debian:bookworm"), "GetImage");
        assert_eq!(get("/v1/sandboxes/sbx_1"), "GetSandbox");
        assert!(matches!(
            find(&routes, &http::Method::PUT, "/v1/sandboxes/sbx_1"),
            Found::WrongVerb(_)
        ));
    }
}
