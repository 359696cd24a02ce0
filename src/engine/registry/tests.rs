use super::*;

fn models() -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-esen");
    let dir = tempfile::tempdir().unwrap();
    // The fixture under three pair names: es-en, and a route es→en→de through "en-de".
    for pair in ["es-en", "en-de"] {
        let d = dir.path().join(pair);
        std::fs::create_dir(&d).unwrap();
        for name in ["model.esen.intgemm.alphas.bin", "vocab.esen.spm", "lex.50.50.esen.s2t.bin"] {
            let to = if pair == "en-de" { name.replace("esen", "ende") } else { name.to_string() };
            std::fs::copy(src.join(name), d.join(to)).unwrap_or_else(|e| panic!("fixture {name}: {e}"));
        }
    }
    dir
}

#[test]
fn routes_load_once_pivot_through_english_and_go_idle() {
    let dir = models();
    let packs = tempfile::tempdir().unwrap();
    let load = LoadOptions { pack_dir: Some(packs.path().into()), ..Default::default() };
    let opts = RegistryOptions { load, idle_seconds: 1, ..Default::default() };
    let r = Arc::new(Registry::open(dir.path(), opts).unwrap());
    assert_eq!(r.pairs(), vec![("en".into(), "de".into()), ("es".into(), "en".into())]);
    let direct = r.route("es", "en").unwrap();
    assert_eq!(direct.len(), 1);
    let again = r.route("es", "en").unwrap();
    assert!(Arc::ptr_eq(&direct[0], &again[0]), "loaded once");
    let pivot = r.route("es", "de").unwrap();
    assert_eq!(pivot.len(), 2);
    assert!(Arc::ptr_eq(&pivot[0], &direct[0]));
    let e = r.route("de", "es").err().unwrap();
    assert!(e.is_usage() && e.to_string().contains("en-de, es-en"), "{e}");
    // Shared between threads.
    let r2 = r.clone();
    let t = std::thread::spawn(move || r2.route("en", "de").unwrap().len());
    assert_eq!(t.join().unwrap(), 1);
    assert_eq!(r.release_older_than(Duration::ZERO), 2);
    assert_eq!(r.release_older_than(Duration::ZERO), 0, "already idle");
    // An idle model is the same model, paged back in on use.
    let woke = r.route("es", "en").unwrap();
    assert!(Arc::ptr_eq(&woke[0], &direct[0]));
}

#[test]
fn load_all_loads_every_installed_model_once() {
    let dir = models();
    let packs = tempfile::tempdir().unwrap();
    let load = LoadOptions { pack_dir: Some(packs.path().into()), ..Default::default() };
    let opts = RegistryOptions { load, ..Default::default() };
    let r = Registry::open(dir.path(), opts).unwrap();
    assert_eq!(r.loaded(), 0);
    assert_eq!(r.load_all().unwrap(), 2);
    let first = r.route("es", "en").unwrap();
    assert_eq!(r.load_all().unwrap(), 2);
    assert!(Arc::ptr_eq(&first[0], &r.route("es", "en").unwrap()[0]), "not loaded again");
}
