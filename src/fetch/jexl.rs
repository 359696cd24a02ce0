//! The part of JEXL that Mozilla writes into `filter_expression` of translation records:
//! `env.channel` and `env.appinfo.OS` compared with string literals through `==` / `!=`, joined by
//! `&&` / `||`, with `!` and parentheses. Firefox drops a record whose expression is false or fails
//! to evaluate (`jexlFilterFunc` in services/settings), and keeps one with an empty expression.
//!
//! Anything else (other `env` fields, transforms `|x`, `in`, comparisons `<`, arithmetic) is not
//! understood here, so the record is treated as not matching; the caller logs why.

use std::fmt;

/// What the expression may read: Firefox's `env.channel` and `env.appinfo.OS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// Update channel: `release`, `beta`, `nightly`, `esr`, `aurora` or `default` (local builds).
    pub channel: String,
    /// `Services.appinfo.OS`: `Linux`, `Darwin`, `WINNT`, `Android`.
    pub os: String,
}

impl Env {
    /// The release channel on this machine's operating system.
    pub fn release() -> Env {
        Env { channel: "release".into(), os: current_os().into() }
    }
}

/// The value Firefox reports as `env.appinfo.OS` on the platform reseam was built for.
pub fn current_os() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "WINNT",
        "android" => "Android",
        "freebsd" => "FreeBSD",
        "openbsd" => "OpenBSD",
        "netbsd" => "NetBSD",
        "solaris" | "illumos" => "SunOS",
        other => other,
    }
}

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a record with this `filter_expression` is kept, as Firefox decides it. `Err` means the
/// expression uses something outside the subset: such a record is not kept either.
pub fn matches(expression: &str, env: &Env) -> Result<bool, Unsupported> {
    if expression.trim().is_empty() {
        return Ok(true);
    }
    let tokens = tokenize(expression)?;
    let mut p = Parser { tokens: &tokens, pos: 0 };
    let ast = p.or()?;
    if p.pos != tokens.len() {
        return Err(Unsupported(format!("unexpected {} in {expression:?}", tokens[p.pos])));
    }
    Ok(eval(&ast, env)?.truthy())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Num(f64),
    Dot,
    Eq,
    Ne,
    And,
    Or,
    Not,
    Open,
    Close,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "'{s}'"),
            Tok::Num(n) => write!(f, "{n}"),
            Tok::Dot => f.write_str("`.`"),
            Tok::Eq => f.write_str("`==`"),
            Tok::Ne => f.write_str("`!=`"),
            Tok::And => f.write_str("`&&`"),
            Tok::Or => f.write_str("`||`"),
            Tok::Not => f.write_str("`!`"),
            Tok::Open => f.write_str("`(`"),
            Tok::Close => f.write_str("`)`"),
        }
    }
}

fn tokenize(s: &str) -> Result<Vec<Tok>, Unsupported> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let simple = match (c, next) {
            ('(', _) => Some((Tok::Open, 1)),
            (')', _) => Some((Tok::Close, 1)),
            ('=', Some('=')) => Some((Tok::Eq, 2)),
            ('!', Some('=')) => Some((Tok::Ne, 2)),
            ('!', _) => Some((Tok::Not, 1)),
            ('&', Some('&')) => Some((Tok::And, 2)),
            ('|', Some('|')) => Some((Tok::Or, 2)),
            ('.', n) if !n.is_some_and(|n| n.is_ascii_digit()) => Some((Tok::Dot, 1)),
            _ => None,
        };
        if let Some((tok, len)) = simple {
            out.push(tok);
            i += len;
            continue;
        }
        match c {
            _ if c.is_whitespace() => i += 1,
            '\'' | '"' => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(Unsupported(format!("unterminated string in {s:?}"))),
                        Some('\\') => {
                            if let Some(&e) = chars.get(i + 1) {
                                text.push(e);
                            }
                            i += 2;
                        }
                        Some(&q) if q == c => {
                            i += 1;
                            break;
                        }
                        Some(&o) => {
                            text.push(o);
                            i += 1;
                        }
                    }
                }
                out.push(Tok::Str(text));
            }
            _ if c.is_ascii_digit() || c == '.' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                let n = text.parse().map_err(|_| Unsupported(format!("bad number {text:?} in {s:?}")))?;
                out.push(Tok::Num(n));
            }
            _ if c.is_alphabetic() || c == '_' || c == '$' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$') {
                    i += 1;
                }
                out.push(Tok::Ident(chars[start..i].iter().collect()));
            }
            other => return Err(Unsupported(format!("operator {other:?} is not supported (in {s:?})"))),
        }
    }
    Ok(out)
}

#[derive(Debug)]
enum Ast {
    Lit(Value),
    Path(Vec<String>),
    Not(Box<Ast>),
    Eq(Box<Ast>, Box<Ast>, bool),
    And(Box<Ast>, Box<Ast>),
    Or(Box<Ast>, Box<Ast>),
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn or(&mut self) -> Result<Ast, Unsupported> {
        let mut left = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            left = Ast::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Ast, Unsupported> {
        let mut left = self.equality()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            left = Ast::And(Box::new(left), Box::new(self.equality()?));
        }
        Ok(left)
    }

    fn equality(&mut self) -> Result<Ast, Unsupported> {
        let mut left = self.unary()?;
        while let Some(op @ (Tok::Eq | Tok::Ne)) = self.peek() {
            let equal = *op == Tok::Eq;
            self.pos += 1;
            left = Ast::Eq(Box::new(left), Box::new(self.unary()?), equal);
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Ast, Unsupported> {
        if self.peek() == Some(&Tok::Not) {
            self.pos += 1;
            return Ok(Ast::Not(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Ast, Unsupported> {
        let tok = self.peek().cloned().ok_or_else(|| Unsupported("expression ends early".into()))?;
        self.pos += 1;
        match tok {
            Tok::Str(s) => Ok(Ast::Lit(Value::Str(s))),
            Tok::Num(n) => Ok(Ast::Lit(Value::Num(n))),
            Tok::Ident(id) if id == "true" || id == "false" => Ok(Ast::Lit(Value::Bool(id == "true"))),
            Tok::Ident(id) => {
                let mut path = vec![id];
                while self.peek() == Some(&Tok::Dot) {
                    self.pos += 1;
                    match self.peek().cloned() {
                        Some(Tok::Ident(next)) => {
                            self.pos += 1;
                            path.push(next);
                        }
                        other => {
                            return Err(Unsupported(format!(
                                "expected a name after `.`, found {}",
                                other.map_or("the end".to_string(), |t| t.to_string())
                            )));
                        }
                    }
                }
                Ok(Ast::Path(path))
            }
            Tok::Open => {
                let inner = self.or()?;
                if self.peek() != Some(&Tok::Close) {
                    return Err(Unsupported("missing `)`".into()));
                }
                self.pos += 1;
                Ok(inner)
            }
            other => Err(Unsupported(format!("unexpected {other}"))),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    Num(f64),
    Bool(bool),
}

impl Value {
    /// JavaScript truthiness, which decides whether Firefox keeps the record.
    fn truthy(&self) -> bool {
        match self {
            Value::Str(s) => !s.is_empty(),
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Bool(b) => *b,
        }
    }
}

fn eval(ast: &Ast, env: &Env) -> Result<Value, Unsupported> {
    Ok(match ast {
        Ast::Lit(v) => v.clone(),
        Ast::Path(path) => match path.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["env", "channel"] => Value::Str(env.channel.clone()),
            ["env", "appinfo", "OS"] => Value::Str(env.os.clone()),
            _ => return Err(Unsupported(format!("`{}` is not known to reseam", path.join(".")))),
        },
        Ast::Not(inner) => Value::Bool(!eval(inner, env)?.truthy()),
        Ast::Eq(a, b, equal) => Value::Bool((eval(a, env)? == eval(b, env)?) == *equal),
        // JEXL's && and || return an operand, and skip the right side when the left decides.
        Ast::And(a, b) => {
            let left = eval(a, env)?;
            if left.truthy() { eval(b, env)? } else { left }
        }
        Ast::Or(a, b) => {
            let left = eval(a, env)?;
            if left.truthy() { left } else { eval(b, env)? }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(channel: &str, os: &str) -> Env {
        Env { channel: channel.into(), os: os.into() }
    }

    #[test]
    fn mozilla_writer_expressions() {
        // The forms `_determine_filter_expression` in firefox-translations-models writes.
        let alpha = "env.channel == 'default' || env.channel == 'nightly'";
        let beta = "env.channel != 'release'";
        let desktop = "env.appinfo.OS != 'Android'";
        let android = "env.appinfo.OS == 'Android'";
        let cases = [
            ("", "release", "Linux", true),
            (alpha, "release", "Linux", false),
            (alpha, "beta", "Linux", false),
            (alpha, "nightly", "Linux", true),
            (alpha, "default", "Darwin", true),
            (beta, "release", "Linux", false),
            (beta, "beta", "WINNT", true),
            (beta, "nightly", "Linux", true),
            (desktop, "release", "Linux", true),
            (desktop, "release", "Android", false),
            (android, "release", "Linux", false),
            ("(env.channel != 'release') && env.appinfo.OS != 'Android'", "beta", "Linux", true),
            ("(env.channel != 'release') && env.appinfo.OS != 'Android'", "release", "Linux", false),
            (
                "(env.channel == 'default' || env.channel == 'nightly') && env.appinfo.OS == 'Android'",
                "nightly",
                "Linux",
                false,
            ),
            (
                "(env.channel == 'default' || env.channel == \"nightly\") && env.appinfo.OS == 'Android'",
                "nightly",
                "Android",
                true,
            ),
            ("!(env.channel == 'release')", "release", "Linux", false),
            ("true", "release", "Linux", true),
            ("false || env.channel", "release", "Linux", true),
        ];
        for (expr, channel, os, want) in cases {
            assert_eq!(matches(expr, &env(channel, os)), Ok(want), "{expr} on {channel}/{os}");
        }
    }

    #[test]
    fn unknown_constructs_do_not_match() {
        for expr in [
            "env.version|versionCompare('140.0a1') >= 0",
            "env.locale in ['en-US']",
            "env.channel == 'release' && env.distribution == 'x'",
            "env.channel ==",
            "(env.channel == 'release'",
            "env.channel == 'release)",
            "env.",
            "1 + 1",
        ] {
            assert!(matches(expr, &Env::release()).is_err(), "{expr}");
        }
    }

    #[test]
    fn short_circuit_skips_unknown_right_side() {
        // Firefox would not reach the unknown field either.
        assert_eq!(matches("env.channel == 'nightly' && env.unknown == 1", &Env::release()), Ok(false));
        assert_eq!(matches("env.channel == 'release' || env.unknown == 1", &Env::release()), Ok(true));
    }
}
