//! Chat templates, rendered as Transformers' `apply_chat_template(..., tokenize=False)` does:
//! Jinja with `trim_blocks` and `lstrip_blocks`, loop controls, `raise_exception`,
//! `strftime_now`, a `tojson` that prints like Python's `json.dumps(ensure_ascii=False)`, the
//! special tokens' texts as variables, Python string and dict methods, and `{% generation %}`
//! blocks (used for assistant masks) rendered as their content.
//!
//! The template is `chat_template.jinja` if the folder has one (Transformers prefers it), else
//! `chat_template` in `tokenizer_config.json` (a string, or a list of named templates of which
//! `default` is used).

use std::path::{Path, PathBuf};

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{Environment, ErrorKind};
use serde::Serialize;

use super::{Error, Result};

/// One turn of a conversation.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn new(role: &str, content: &str) -> Message {
        Message { role: role.into(), content: content.into() }
    }
}

/// A compiled chat template.
pub struct ChatTemplate {
    path: PathBuf,
    env: Environment<'static>,
    /// `bos_token`, `eos_token`, ... as the template sees them.
    specials: Vec<(String, String)>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("path", &self.path).finish()
    }
}

/// Removes `{% generation %}` / `{% endgeneration %}` tags (with any whitespace control), which
/// only mark assistant text for training masks.
fn strip_generation_tags(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(at) = rest.find("{%") {
        let (before, tag) = rest.split_at(at);
        let Some(end) = tag.find("%}") else { break };
        let inner = tag[2..end].trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        out.push_str(before);
        if inner != "generation" && inner != "endgeneration" {
            out.push_str(&tag[..end + 2]);
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out
}

impl ChatTemplate {
    /// The template of a checkpoint folder, if it has one. `tokenizer_config` is the parsed
    /// `tokenizer_config.json`; `specials` the special tokens' texts.
    pub fn from_dir(
        dir: &Path,
        tokenizer_config: &serde_json::Value,
        specials: &[(String, String)],
    ) -> Result<Option<ChatTemplate>> {
        let jinja = dir.join("chat_template.jinja");
        if jinja.is_file() {
            let src = std::fs::read_to_string(&jinja).map_err(|source| Error::Io { path: jinja.clone(), source })?;
            return Self::new(&src, &jinja, specials).map(Some);
        }
        let path = dir.join("tokenizer_config.json");
        let src = match tokenizer_config.get("chat_template") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Array(list)) => {
                let named = |name: &str| {
                    list.iter()
                        .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))?
                        .get("template")?
                        .as_str()
                };
                match named("default") {
                    Some(s) => s.to_string(),
                    None => {
                        return Err(Error::Field {
                            path,
                            field: "chat_template".into(),
                            msg: "a list of templates without one named \"default\"".into(),
                        });
                    }
                }
            }
            None | Some(serde_json::Value::Null) => return Ok(None),
            Some(_) => {
                return Err(Error::Field { path, field: "chat_template".into(), msg: "not a string or a list".into() });
            }
        };
        Self::new(&src, &path, specials).map(Some)
    }

    /// Compiles a template's source.
    pub fn new(source: &str, path: &Path, specials: &[(String, String)]) -> Result<ChatTemplate> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| template_err(path, e))?;
        env.set_syntax(syntax);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> std::result::Result<Value, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_function("strftime_now", |fmt: String| -> std::result::Result<String, minijinja::Error> {
            let now = jiff::ZonedDateTime::now();
            jiff::fmt::strtime::format(fmt.as_str(), &now)
                .map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, e.to_string()))
        });
        env.add_filter("tojson", tojson);
        env.add_template_owned("chat", strip_generation_tags(source)).map_err(|e| template_err(path, e))?;
        Ok(ChatTemplate { path: path.to_path_buf(), env, specials: specials.to_vec() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renders a conversation. `extra` is a map of more template variables (`date_string`,
    /// `tools`, ...), as `apply_chat_template`'s keyword arguments; any `Serialize` map works
    /// (a `minijinja::Value` parsed from JSON text keeps the key order Python would).
    pub fn render<M: Serialize, E: Serialize>(
        &self,
        messages: &[M],
        add_generation_prompt: bool,
        extra: E,
    ) -> Result<String> {
        let mut ctx: Vec<(String, Value)> = Vec::new();
        for (k, v) in &self.specials {
            ctx.push((k.clone(), Value::from(v.as_str())));
        }
        ctx.push(("messages".into(), Value::from(minijinja::value::Serde(messages))));
        ctx.push(("tools".into(), Value::from(())));
        ctx.push(("documents".into(), Value::from(())));
        ctx.push(("add_generation_prompt".into(), Value::from(add_generation_prompt)));
        let extra = Value::from(minijinja::value::Serde(extra));
        if !extra.is_none() && !extra.is_undefined() {
            let keys = extra.try_iter().map_err(|e| template_err(&self.path, e))?;
            for k in keys {
                let v = extra.get_item(&k).map_err(|e| template_err(&self.path, e))?;
                let k = k.to_string();
                ctx.retain(|(name, _)| *name != k);
                ctx.push((k, v));
            }
        }
        let tmpl = self.env.get_template("chat").map_err(|e| template_err(&self.path, e))?;
        tmpl.render(Value::from_pairs(ctx)).map_err(|e| template_err(&self.path, e))
    }
}

fn template_err(path: &Path, e: minijinja::Error) -> Error {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        msg.push_str(&format!(": {s}"));
        src = s.source();
    }
    Error::ChatTemplate { path: path.to_path_buf(), msg }
}

/// `json.dumps(value, ensure_ascii=False, indent=indent, separators=separators,
/// sort_keys=sort_keys)`, the filter Transformers installs.
fn tojson(value: &Value, kwargs: Kwargs) -> std::result::Result<Value, minijinja::Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let separators: Option<Vec<String>> = kwargs.get("separators")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let (item, key) = match separators.as_deref() {
        Some([a, b]) => (a.clone(), b.clone()),
        Some(_) => return Err(minijinja::Error::new(ErrorKind::InvalidOperation, "separators must be a pair")),
        None if indent.is_some() => (",".into(), ": ".into()),
        None => (", ".into(), ": ".into()),
    };
    let mut out = String::new();
    let f = PyJson { indent, item, key, sort_keys: sort_keys.unwrap_or(false) };
    f.write(value, 0, &mut out)?;
    Ok(Value::from_safe_string(out))
}

struct PyJson {
    indent: Option<usize>,
    item: String,
    key: String,
    sort_keys: bool,
}

fn py_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let sci = format!("{x:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mant) = mant.strip_prefix('-').map_or(("", mant), |m| ("-", m));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let decpt = exp + 1;
    if !(-4 < decpt && decpt <= 16) {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits.clone() };
        return format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    if decpt <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt as usize >= digits.len() {
        format!("{sign}{digits}{}.0", "0".repeat(decpt as usize - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..decpt as usize], &digits[decpt as usize..])
    }
}

impl PyJson {
    fn newline(&self, depth: usize, out: &mut String) {
        if let Some(n) = self.indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * depth));
        }
    }

    fn write(&self, v: &Value, depth: usize, out: &mut String) -> std::result::Result<(), minijinja::Error> {
        match v.kind() {
            ValueKind::Undefined | ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
            ValueKind::Number => {
                if v.is_integer() {
                    out.push_str(&v.to_string());
                } else {
                    out.push_str(&py_float(f64::try_from(v.clone())?));
                }
            }
            ValueKind::String => py_string(v.as_str().unwrap_or_default(), out),
            ValueKind::Seq | ValueKind::Iterable => {
                let items: Vec<Value> = v.try_iter()?.collect();
                self.container('[', ']', items.len(), depth, out, |i, out| self.write(&items[i], depth + 1, out))?;
            }
            ValueKind::Map => {
                let mut keys: Vec<Value> = v.try_iter()?.collect();
                if self.sort_keys {
                    keys.sort_by_key(|a| a.to_string());
                }
                self.container('{', '}', keys.len(), depth, out, |i, out| {
                    let k = &keys[i];
                    py_string(&k.as_str().map_or_else(|| k.to_string(), str::to_string), out);
                    out.push_str(&self.key);
                    self.write(&v.get_item(k)?, depth + 1, out)
                })?;
            }
            _ => py_string(&v.to_string(), out),
        }
        Ok(())
    }

    fn container(
        &self,
        open: char,
        close: char,
        n: usize,
        depth: usize,
        out: &mut String,
        mut item: impl FnMut(usize, &mut String) -> std::result::Result<(), minijinja::Error>,
    ) -> std::result::Result<(), minijinja::Error> {
        out.push(open);
        if n == 0 {
            out.push(close);
            return Ok(());
        }
        for i in 0..n {
            if i > 0 {
                out.push_str(&self.item);
            }
            self.newline(depth + 1, out);
            item(i, out)?;
        }
        self.newline(depth, out);
        out.push(close);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(src: &str, ctx: &str) -> Result<String> {
        let t = ChatTemplate::new(src, Path::new("t.jinja"), &[("bos_token".into(), "<s>".into())])?;
        let extra: Value = serde_json::from_str(ctx).unwrap();
        t.render(&[Message::new("user", "hi")], true, extra)
    }

    #[test]
    fn python_float_repr() {
        for (x, want) in [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (1e-5, "1e-05"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (-2.5e-7, "-2.5e-07"),
            (123.456, "123.456"),
        ] {
            assert_eq!(py_float(x), want);
        }
    }

    #[test]
    fn tojson_prints_like_python() {
        let got = render(
            "{{ x | tojson }}|{{ x | tojson(indent=2) }}",
            r#"{"x": {"b": [1, 2.0, "zł\n"], "a": null, "e": {}}}"#,
        )
        .unwrap();
        assert_eq!(
            got,
            "{\"b\": [1, 2.0, \"zł\\n\"], \"a\": null, \"e\": {}}|{\n  \"b\": [\n    1,\n    2.0,\n    \"zł\\n\"\n  ],\n  \"a\": null,\n  \"e\": {}\n}"
        );
    }

    #[test]
    fn hf_features_work() {
        let src = "{{- bos_token }}{% for m in messages %}{% if loop.first %}{{ m['content'] | trim }}{% break %}{% endif %}{% endfor %}\n{% generation %}{{ ' X '.strip() }}{% endgeneration %}{% if add_generation_prompt %}!{% endif %}";
        assert_eq!(render(src, "{}").unwrap(), "<s>hiX!");
        let e = render("{{ raise_exception('no system role') }}", "{}").unwrap_err().to_string();
        assert!(e.contains("no system role") && e.contains("t.jinja"), "{e}");
        assert!(render("{% if %}", "{}").is_err());
        let d = render("{{ strftime_now('%Y') }}", "{}").unwrap();
        assert!(d.len() == 4 && d.starts_with('2'), "{d}");
    }

    #[test]
    fn renders_every_fixture_chat_prompt_as_transformers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm");
        for model in ["llama3-tiny", "mistral-tiny", "qwen2-tiny"] {
            let dir = root.join(model);
            let cfg = crate::llm::tokenizer::read_tokenizer_config(&dir).unwrap();
            let tok = crate::llm::Tokenizer::from_dir(&dir).unwrap();
            let t = ChatTemplate::from_dir(&dir, &cfg, &tok.special_tokens().texts).unwrap().unwrap();
            let g: serde_json::Value =
                serde_json::from_slice(&std::fs::read(root.join(format!("goldens/{model}.json"))).unwrap()).unwrap();
            let p = g["prompts"].as_array().unwrap().iter().find(|p| p["key"] == "chat_templated").unwrap();
            let messages: Vec<Message> = serde_json::from_value(p["chat_messages"].clone()).unwrap();
            let kwargs = p["chat_template_kwargs"].as_object().unwrap();
            assert_eq!(t.render(&messages, true, kwargs).unwrap(), p["prompt"].as_str().unwrap(), "{model}");
        }
    }

    #[test]
    fn llama_template_tools_and_errors() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/llama3-tiny");
        let src = std::fs::read_to_string(dir.join("chat_template.jinja")).unwrap();
        let t = ChatTemplate::new(
            &src,
            &dir.join("chat_template.jinja"),
            &[("bos_token".into(), "<|begin_of_text|>".into())],
        )
        .unwrap();
        let tools: Value = serde_json::from_str(
            r#"{"tools": [{"name": "f", "parameters": {"x": 1.5}}], "date_string": "1 Jan 2025"}"#,
        )
        .unwrap();
        let out = t.render(&[Message::new("user", "hi")], true, &tools).unwrap();
        assert!(out.contains("{\n    \"name\": \"f\",\n    \"parameters\": {\n        \"x\": 1.5\n    }\n}"), "{out}");
        // Only a system message: no user turn to put the tools in.
        let e = t.render(&[Message::new("system", "s")], true, &tools).unwrap_err().to_string();
        assert!(e.contains("Cannot put tools in the first user message"), "{e}");
    }
}
