//! Properties every translation keeps, checked on any translator (the stand-in here; the engine
//! with one more line), on the fixture's 200 synthetic posts and on generated ones.

use crate::text::{
    Options, Pipeline, SegmentTranslator, StandIn, StandInMode, TranslatorError, check, lines, links, mentions,
};

/// The fixture's posts (`{"id": n, "text": ...}` per line).
pub(super) fn fixture_posts() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tiny-esen/refs/social.es.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    text.lines()
        .enumerate()
        .map(|(n, line)| {
            let post: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{path} line {}: {e}", n + 1));
            // The fixture is ours and every line has a text; a missing one is a broken checkout.
            post["text"].as_str().unwrap_or_else(|| panic!("{path} line {}: no \"text\"", n + 1)).to_string()
        })
        .collect()
}

/// Records what the translator was given and what it answered.
struct Recorder<'t, T: ?Sized> {
    inner: &'t mut T,
    pairs: Vec<(String, String)>,
}

impl<T: SegmentTranslator + ?Sized> SegmentTranslator for Recorder<'_, T> {
    fn translate(&mut self, segments: &[&str]) -> Result<Vec<String>, TranslatorError> {
        let out = self.inner.translate(segments)?;
        self.pairs.extend(segments.iter().map(|s| s.to_string()).zip(out.iter().cloned()));
        Ok(out)
    }
    fn token_count(&self, segment: &str) -> usize {
        self.inner.token_count(segment)
    }
    fn max_tokens(&self) -> usize {
        self.inner.max_tokens()
    }
}

/// Checks, for any translator, that on every post:
/// - `check::violations` finds nothing (line breaks, spacing at line ends, links, e-mail
///   addresses and emoji byte for byte and in order, hashtags);
/// - every mention of the source is in the output, except those of segments whose translation
///   had a different number of mentions (there the model's output stands);
/// - the post translated alone, the post in a batch of all posts, and its lines translated as
///   separate posts (as `translate` feeds them) give the same text;
/// - each line is its pieces between links, each translated alone, with the links between.
///
/// Returns one message per failure.
pub(crate) fn failures<T: SegmentTranslator + ?Sized>(
    posts: &[&str],
    options: &Options,
    translator: &mut T,
) -> Vec<String> {
    let pipeline = Pipeline::new(options).expect("test options are valid");
    let mut failures = Vec::new();
    let mut fail = |n: usize, post: &str, what: String| failures.push(format!("post {n} {post:?}: {what}"));
    let whole = match pipeline.translate_posts(posts, translator) {
        Ok(whole) => whole,
        Err(e) => return vec![format!("the batch of all posts failed: {e}")],
    };
    // Lines as separate posts, as `translate` feeds them.
    let split: Vec<Vec<(&str, &str)>> =
        posts.iter().map(|post| lines::split(post).into_iter().map(|(l, t)| (&post[l], &post[t])).collect()).collect();
    let all_lines: Vec<&str> = split.iter().flatten().map(|(line, _)| *line).collect();
    let by_line = match pipeline.translate_posts(&all_lines, translator) {
        Ok(by_line) => by_line,
        Err(e) => return vec![format!("the batch of all lines failed: {e}")],
    };
    let mut by_line = by_line.into_iter();
    for (n, (&post, out)) in posts.iter().zip(&whole).enumerate() {
        for v in check::violations(post, out, options.raw) {
            fail(n, post, format!("{v} in {out:?}"));
        }
        let joined: String =
            split[n].iter().map(|(_, t)| format!("{}{t}", by_line.next().unwrap_or_default())).collect();
        if joined != *out {
            fail(n, post, format!("line by line gives {joined:?}, whole post {out:?}"));
        }
        let mut recorder = Recorder { inner: &mut *translator, pairs: Vec::new() };
        match pipeline.translate_post(post, &mut recorder) {
            Ok(alone) if alone != *out => fail(n, post, format!("alone gives {alone:?}, in the batch {out:?}")),
            Ok(_) => {}
            Err(e) => fail(n, post, format!("alone fails: {e}")),
        }
        if !options.raw {
            for what in lost_mentions(post, out, &recorder.pairs) {
                fail(n, post, what);
            }
            for (line, (src, _)) in split[n].iter().enumerate() {
                match pieces_alone(&pipeline, src, translator) {
                    Ok(expected) => {
                        let got = lines::split(out).get(line).map(|(l, _)| &out[l.clone()]);
                        if got != Some(expected.as_str()) {
                            fail(n, post, format!("line {} is {got:?}; its pieces alone give {expected:?}", line + 1));
                        }
                    }
                    Err(e) => fail(n, post, format!("pieces alone fail: {e}")),
                }
            }
        }
    }
    failures
}

/// Mentions of `post` missing from `out`, beyond those the translator dropped from segments
/// whose mention count then differed.
fn lost_mentions(post: &str, out: &str, pairs: &[(String, String)]) -> Vec<String> {
    let outside_links = without_links(post);
    let mut allowed: Vec<&str> = Vec::new();
    for (segment, translation) in pairs {
        let (src, got) = (mentions::find(segment), mentions::find_in_output(translation));
        if src.len() != got.len() {
            allowed.extend(src.into_iter().map(|r| &segment[r]));
        }
    }
    let found = |text: &str| -> Vec<String> { mentions::find(text).into_iter().map(|r| text[r].to_string()).collect() };
    let (source, output) = (found(&outside_links), found(&without_links(out)));
    let mut lost = Vec::new();
    for m in &source {
        let count = |list: &[String]| list.iter().filter(|x| *x == m).count();
        let (wanted, present) = (count(&source), count(&output));
        let excused = allowed.iter().filter(|a| **a == m).count();
        if present + excused < wanted && !lost.iter().any(|l: &String| l.starts_with(&format!("mention {m} "))) {
            lost.push(format!("mention {m} lost ({present} of {wanted} kept, {excused} dropped by the model)"));
        }
    }
    lost
}

fn without_links(text: &str) -> String {
    let mut out = String::new();
    let mut pos = 0;
    for link in links::find(text) {
        out.push_str(&text[pos..link.start]);
        out.push(' ');
        pos = link.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// A line rebuilt from its pieces between links, each translated alone, and the links.
fn pieces_alone<T: SegmentTranslator + ?Sized>(
    pipeline: &Pipeline,
    line: &str,
    translator: &mut T,
) -> Result<String, crate::text::Error> {
    let mut out = String::new();
    let mut pos = 0;
    for link in links::find(line) {
        out.push_str(&pipeline.translate_post(&line[pos..link.start], translator)?);
        out.push_str(&line[link.clone()]);
        pos = link.end;
    }
    out.push_str(&pipeline.translate_post(&line[pos..], translator)?);
    Ok(out)
}

/// Runs [`failures`] on the fixture's posts and panics with the first ones found.
pub(crate) fn check_fixture<T: SegmentTranslator + ?Sized>(options: &Options, translator: &mut T) {
    let posts = fixture_posts();
    assert_eq!(posts.len(), 200, "the fixture has 200 posts");
    let refs: Vec<&str> = posts.iter().map(String::as_str).collect();
    let found = failures(&refs, options, translator);
    assert!(found.is_empty(), "{} failures, first ones:\n{}", found.len(), found[..found.len().min(15)].join("\n"));
}

#[test]
fn fixture_posts_keep_their_shape_with_the_stand_in() {
    let es_en = Options::new("es", "en");
    for mode in [StandInMode::AsciiUpper, StandInMode::Bracket, StandInMode::DropMentions, StandInMode::DropHashtags] {
        check_fixture(&es_en, &mut StandIn::new(mode));
    }
    check_fixture(&es_en, &mut StandIn::identity().with_max_tokens(4));
    check_fixture(&Options { raw: true, ..es_en }, &mut StandIn::ascii_upper());
}

#[test]
fn fixture_posts_lose_and_duplicate_nothing() {
    let posts = fixture_posts();
    let refs: Vec<&str> = posts.iter().map(String::as_str).collect();
    let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
    assert_eq!(pipeline.translate_posts(&refs, &mut StandIn::identity()).unwrap(), refs);
    let mut bracket = StandIn::new(StandInMode::Bracket);
    let out = pipeline.translate_posts(&refs, &mut bracket).unwrap();
    for (post, out) in refs.iter().zip(&out) {
        assert_eq!(out.replace(['⟦', '⟧'], ""), *post);
    }
    assert_eq!(bracket.batches.len(), 1, "one batch for all posts");
    // Every link of the fixture (all on example.* hosts) was kept out of the segments.
    let segments = &bracket.batches[0];
    assert!(segments.iter().all(|s| !s.contains("example.") && !s.contains('\n') && !s.contains('\r')));
    assert!(segments.iter().all(|s| s.chars().any(char::is_alphabetic) && s.trim() == s));
    assert_eq!(segments.iter().filter(|s| s.contains("http")).count(), 0);
}

/// The same checks with the real engine (the fixture's int8 model, through the library call that
/// `serve` uses: whole posts with their line breaks), in both arithmetics and with the shortlist.
#[test]
fn fixture_posts_keep_their_shape_through_the_engine() {
    use crate::translate::{ArithmeticChoice, TranslateOptions, Translator};
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tiny-esen");
    for (arithmetic, shortlist) in [(ArithmeticChoice::Exact, false), (ArithmeticChoice::Saturating, true)] {
        let mut opts = TranslateOptions::new(models, "es", "en");
        opts.arithmetic = arithmetic;
        opts.shortlist = shortlist;
        let engine = Translator::load(&opts).unwrap_or_else(|e| panic!("loading {models}: {e}"));
        check_fixture(&Options::new("es", "en"), &mut engine.segments(false));
    }
}
