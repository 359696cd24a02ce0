use super::*;

pub(crate) fn fixture_copy() -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-esen");
    let dir = tempfile::tempdir().unwrap();
    for name in ["model.esen.intgemm.alphas.bin", "vocab.esen.spm", "lex.50.50.esen.s2t.bin"] {
        std::fs::copy(src.join(name), dir.path().join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    }
    dir
}

#[test]
fn a_pack_is_written_next_to_the_model_then_mapped() {
    let dir = fixture_copy();
    let files = super::super::find(dir.path(), "es", "en", None).unwrap();
    let opts = LoadOptions { shortlist: true, ..Default::default() };
    let first = Model::open(&files, &opts).unwrap();
    let PackStatus::Written { path, why, .. } = first.pack_status().clone() else {
        panic!("{:?}", first.pack_status())
    };
    assert_eq!(path, dir.path().join(PACK_NAME));
    assert_eq!(why, "no pack yet");
    let second = Model::open(&files, &opts).unwrap();
    assert_eq!(second.pack_status(), &PackStatus::Loaded(path.clone()));
    assert!(second.pack_file().is_some());
    // A changed vocabulary makes it stale.
    let v = dir.path().join("vocab.esen.spm");
    let mut bytes = std::fs::read(&v).unwrap();
    bytes.push(b'\n');
    std::fs::write(&v, &bytes).unwrap();
    assert!(matches!(check(&files, None), Err((_, Why::Stale(s))) if s.contains("vocab.esen.spm")));
}
