//! Record parsing and the version choice, on a document shaped like the v2 collection's answer
//! (fields as `remote_settings/client.py` writes them and the server adds: id, schema,
//! last_modified, attachment).

use super::*;

const DOC: &[u8] = include_bytes!("../testdata/records.json");

fn offer_for(channel: &str, os: &str) -> (Offer, Vec<String>) {
    let parsed = parse(DOC).expect("test document parses");
    let policy = Policy { env: Env { channel: channel.into(), os: os.into() }, ..Policy::default() };
    let mut log = Vec::new();
    let offer = select(&parsed.records, &policy, &mut |line| log.push(line));
    (offer, log)
}

fn files(p: &PairModels) -> Vec<(&str, &str)> {
    p.files.iter().map(|f| (f.name.as_str(), f.version.as_str())).collect()
}

#[test]
fn parses_every_field_and_skips_the_malformed_record() {
    let parsed = parse(DOC).unwrap();
    assert_eq!(parsed.records.len(), 51);
    assert_eq!(parsed.skipped.len(), 1);
    assert!(parsed.skipped[0].contains("decompressedHash"), "{:?}", parsed.skipped);
    let r = &parsed.records[0];
    assert_eq!(r.name, "model.esen.intgemm.alphas.bin");
    assert_eq!((r.source_language.as_str(), r.target_language.as_str()), ("es", "en"));
    assert_eq!((r.architecture.as_str(), r.version.as_str(), r.file_type.as_str()), ("tiny", "2.1", "model"));
    assert_eq!(r.decompressed_size, 17140000);
    assert_eq!(r.decompressed_hash, "4276cbd62fe540cf3382f2955254157bfbcabc3cd60e4cea2ee86ee89661e7e6");
    assert_eq!(r.id, "b4b6fd16-0d4b-00c6-e23f-c2f3bf46cde4");
    assert_eq!(r.attachment.size, 8570000);
    assert_eq!(r.attachment.location, "main/translations-models-v2/6a4fc824-ae65-5edb-6069-a82c5810ad79.zst");
    assert_eq!(r.attachment.hash, "98bfa21722fc5f4f100c2a3aefb528f121067437f355809421bd015b8353bc1e");
    assert_eq!(r.raw["schema"], 1749570042331u64);
    assert!(parsed.records.iter().any(|r| r.variant.as_deref() == Some("base")));
}

#[test]
fn release_takes_the_highest_release_version_of_supported_majors() {
    let (offer, log) = offer_for("release", "Linux");
    let p = offer.find("es", "en").unwrap();
    assert_eq!((p.version.as_str(), p.architecture.as_str()), ("3.0", "tiny"));
    assert_eq!(
        files(p),
        [("model.esen.intgemm.alphas.bin", "3.0"), ("vocab.esen.spm", "3.0"), ("lex.50.50.esen.s2t.bin", "3.0")]
    );
    assert!(log.iter().any(|l| l.contains("4.0") && l.contains("outside")), "{log:#?}");
    assert!(log.iter().any(|l| l.contains("2.1") && l.contains("outside")), "{log:#?}");
    assert!(log.iter().any(|l| l.contains("3.1b1") && l.contains("filtered")), "{log:#?}");
    assert!(log.iter().any(|l| l.contains("qualityModel.esen.bin")), "{log:#?}");
}

#[test]
fn beta_and_nightly_see_prereleases() {
    let (offer, _) = offer_for("beta", "Linux");
    assert_eq!(offer.find("es", "en").unwrap().version, "3.1b1");
    assert_eq!(offer.find("de", "en").unwrap().version, "3.1b1");
    let (offer, _) = offer_for("nightly", "Darwin");
    let p = offer.find("es", "en").unwrap();
    assert_eq!((p.version.as_str(), p.architecture.as_str()), ("3.2a1", "base-memory"));
    assert!(p.files.iter().all(|f| f.version == "3.2a1"));
}

#[test]
fn variants_are_not_the_default_model() {
    let (offer, _) = offer_for("release", "Linux");
    let base = offer.pairs.iter().find(|p| p.variant.as_deref() == Some("base")).unwrap();
    assert_eq!(base.folder_name(), "es-en");
    assert!(offer.find("es", "en").unwrap().variant.is_none());
}

#[test]
fn stale_shared_vocab_is_left_out_after_a_switch_to_split_vocabs() {
    let (offer, log) = offer_for("release", "Linux");
    let p = offer.find("en", "ja").unwrap();
    assert_eq!(p.version, "3.1");
    assert_eq!(
        files(p),
        [
            ("model.enja.intgemm.alphas.bin", "3.1"),
            ("srcvocab.enja.spm", "3.1"),
            ("trgvocab.enja.spm", "3.1"),
            ("lex.50.50.enja.s2t.bin", "3.1")
        ]
    );
    assert!(log.iter().any(|l| l.starts_with("vocab.enja.spm 3.0: left out")), "{log:#?}");
    assert_eq!(offer.find("ja", "en").unwrap().files.len(), 3);
}

#[test]
fn operating_system_filters() {
    let (offer, _) = offer_for("release", "Linux");
    assert_eq!(offer.find("en", "de").unwrap().version, "3.0");
    let (offer, _) = offer_for("release", "Android");
    assert_eq!(offer.find("en", "de").unwrap().version, "3.5");
    // de-en 3.1b1 is for desktop beta only.
    let (offer, _) = offer_for("beta", "Android");
    assert_eq!(offer.find("de", "en").unwrap().version, "3.0");
}

#[test]
fn unknown_filter_constructs_and_conflicting_vocabs_make_pairs_unusable() {
    let (offer, log) = offer_for("release", "Linux");
    assert!(offer.find("fr", "en").is_none());
    assert!(log.iter().any(|l| l.contains("model.fren") && l.contains("not understood")), "{log:#?}");
    assert!(offer.why_missing("fr", "en").contains("no `model` record"));
    assert!(offer.find("ko", "en").is_none());
    assert!(offer.why_missing("ko", "en").contains("shared `vocab` and split"));
    assert_eq!(offer.why_missing("xx", "en"), "the source has no such model");
}

#[test]
fn script_tags_match_like_firefox() {
    let (offer, _) = offer_for("release", "Linux");
    assert_eq!(offer.find("zh-TW", "en").unwrap().source_language, "zh-Hant");
    assert!(offer.find("zh", "en").is_none(), "zh means zh-Hans");
    assert!(offer.offers_language("zh-Hant") && offer.offers_language("ES") && !offer.offers_language("fr"));
}

#[test]
fn pairs_without_a_direct_model_pivot_through_english() {
    let (offer, _) = offer_for("release", "Linux");
    let route = |a, b| offer.route(a, b).map(|ps| ps.iter().map(|p| p.folder_name()).collect::<Vec<_>>());
    assert_eq!(route("es", "en").unwrap(), ["es-en"]);
    assert_eq!(route("en", "es").unwrap(), ["en-es"]);
    assert_eq!(route("es", "de").unwrap(), ["es-en", "en-de"]);
    assert_eq!(route("ja", "es").unwrap(), ["ja-en", "en-es"]);
    assert_eq!(route("de", "ja").unwrap(), ["de-en", "en-ja"]);
    assert_eq!(route("de", "fr").unwrap_err(), ("en".to_string(), "fr".to_string()));
    assert_eq!(route("fr", "de").unwrap_err(), ("fr".to_string(), "en".to_string()));
    assert_eq!(route("en", "fr").unwrap_err(), ("en".to_string(), "fr".to_string()));
}

#[test]
fn records_that_could_escape_the_models_folder_are_refused() {
    let mut doc: Value = serde_json::from_slice(DOC).unwrap();
    doc["data"][0]["name"] = "../../etc/passwd".into();
    doc["data"][1]["attachment"]["location"] = "../secret".into();
    doc["data"][2]["sourceLanguage"] = "es/..".into();
    doc["data"][3]["attachment"]["hash"] = "not-a-hash".into();
    doc["data"][4]["decompressedSize"] = (-5).into();
    let parsed = parse(&serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_eq!(parsed.skipped.len(), 6, "{:#?}", parsed.skipped);
    for (i, field) in
        ["`name`", "attachment.location", "sourceLanguage", "attachment.hash", "decompressedSize"].iter().enumerate()
    {
        assert!(parsed.skipped[i].contains(field), "{i}: {}", parsed.skipped[i]);
    }
}

#[test]
fn malformed_documents_are_errors() {
    assert!(parse(b"").unwrap_err().contains("not JSON"));
    assert!(parse(b"{\"records\": []}").unwrap_err().contains("`data`"));
    assert!(parse(br#"{"changes": []}"#).unwrap().records.is_empty());
    // Random bytes and truncations never panic.
    for cut in (0..DOC.len()).step_by(997) {
        let _ = parse(&DOC[..cut]);
    }
}
