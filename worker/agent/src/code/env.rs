//! A run's own environment (RunCodeRequest.env): what each kernel is told
//! before the run to set it, and after the run to put back what was there
//! (a name it did not have is removed). The kernel keeps its state
//! otherwise; processes the code starts see the variables, as in E2B's
//! code interpreter (`envs` of `run_code`).

use std::collections::BTreeMap;
use tonic::Status;

/// The variables of one run, checked: names are `[A-Za-z_][A-Za-z0-9_]*`
/// (a shell could not set any other), values hold no NUL.
pub struct RunEnv(BTreeMap<String, String>);

impl RunEnv {
    pub fn new(env: &std::collections::HashMap<String, String>) -> Result<RunEnv, Status> {
        for (k, v) in env {
            let mut chars = k.chars();
            let first_ok = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(Status::invalid_argument(format!(
                    "env: {k:?} is not a variable name (letters, digits and _, not starting with a digit)"
                )));
            }
            if v.contains('\0') {
                return Err(Status::invalid_argument(format!(
                    "env: the value of {k} holds a NUL byte"
                )));
            }
        }
        Ok(RunEnv(env.clone().into_iter().collect()))
    }

    /// No variables (a kernel's own first run).
    pub fn none() -> RunEnv {
        RunEnv(BTreeMap::new())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn json(&self) -> String {
        serde_json::to_string(&self.0).expect("a map of strings")
    }

    /// Python, run silently before the code: the old values kept in the
    /// kernel's namespace under a name of ours.
    pub fn python_set(&self) -> String {
        // A JSON string literal is a Python string literal too.
        let text = serde_json::to_string(&self.json()).expect("a string");
        format!(
            "import os as _talon_os, json as _talon_json\n\
             _talon_env = _talon_json.loads({text})\n\
             _talon_env_saved = {{k: _talon_os.environ.get(k) for k in _talon_env}}\n\
             _talon_os.environ.update(_talon_env)\n\
             del _talon_env"
        )
    }

    /// Python, run silently after the code.
    pub fn python_restore(&self) -> String {
        "for _talon_k, _talon_v in _talon_env_saved.items():\n    \
         if _talon_v is None:\n        _talon_os.environ.pop(_talon_k, None)\n    \
         else:\n        _talon_os.environ[_talon_k] = _talon_v\n\
         del _talon_env_saved, _talon_k, _talon_v"
            .into()
    }

    /// Bash, sourced before the code: each old value (and whether there
    /// was one) in a variable of ours.
    pub fn bash_set(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.0 {
            out.push_str(&format!(
                "if [ \"${{{k}+x}}\" ]; then __talon_had_{k}=1; __talon_old_{k}=\"${k}\"; \
                 else __talon_had_{k}=; fi; export {k}={}\n",
                quote(v)
            ));
        }
        out
    }

    /// Bash, one line run after the code (names only, no values).
    pub fn bash_restore(&self) -> String {
        let mut out = String::new();
        for k in self.0.keys() {
            out.push_str(&format!(
                "if [ \"$__talon_had_{k}\" ]; then export {k}=\"$__talon_old_{k}\"; else unset {k}; fi; \
                 unset __talon_had_{k} __talon_old_{k}; "
            ));
        }
        out
    }

    /// JavaScript: the map, which the driver sets on `process.env` for
    /// the run and puts back after it.
    pub fn js(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).expect("a map of strings")
    }
}

/// A value as one single-quoted shell word.
fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn names_are_checked() {
        assert!(RunEnv::new(&env(&[("A_1", "x"), ("_b", "")])).is_ok());
        for bad in ["", "1A", "A-B", "A B", "A=B", "$(x)", "é"] {
            assert!(RunEnv::new(&env(&[(bad, "x")])).is_err(), "{bad:?}");
        }
        assert!(RunEnv::new(&env(&[("A", "x\0y")])).is_err());
    }

    #[test]
    fn bash_quotes_every_value() {
        let e = RunEnv::new(&env(&[("A", "it's $(rm -rf /) `x`\nline")])).unwrap();
        let set = e.bash_set();
        assert!(
            set.contains("export A='it'\\''s $(rm -rf /) `x`\nline'"),
            "{set}"
        );
        assert!(!e.bash_restore().contains('\n'));
    }

    #[test]
    fn python_reads_the_values_from_json() {
        let e = RunEnv::new(&env(&[("A", "quote \" and \\ and\nnewline")])).unwrap();
        let set = e.python_set();
        assert!(
            set.contains(r#"_talon_json.loads("{\"A\":\"quote \\\" and \\\\ and\\nnewline\"}")"#),
            "{set}"
        );
    }
}
