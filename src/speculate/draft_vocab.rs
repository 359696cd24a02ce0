//! A draft's output layer cut to the tokens it will plausibly write (FR-Spec, Zhao et al. 2025:
//! "frequency-ranked speculative sampling"). A small draft with a large vocabulary spends most of
//! a pass in its output layer (Qwen2.5's 151,936 rows, Llama 3's 128,256); computing only the ids
//! most frequent in a corpus of the target language makes the pass several times cheaper. The
//! draft then never proposes the other ids, which can only cost acceptance: the target verifies
//! in its whole vocabulary, so the output stays the target's own.

use std::collections::HashMap;

use super::tokens::{TextTokenizer, TokenizerError};

/// The ids to keep: the `size` ids that occur most often when `lines` are encoded (every id that
/// occurs for `size` = 0), plus `always` (end-of-sequence ids), in ascending order so that ties
/// between kept ids break as in the whole layer (the first maximum wins). Ids at or above
/// `rows` (the model's output rows) are never kept.
pub fn frequent_ids<'a, T: TextTokenizer + ?Sized>(
    tok: &T,
    lines: impl IntoIterator<Item = &'a str>,
    size: usize,
    always: &[u32],
    rows: usize,
) -> Result<Vec<u32>, TokenizerError> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for line in lines {
        if line.trim().is_empty() {
            continue;
        }
        for id in tok.encode(line, false)? {
            *counts.entry(id).or_default() += 1;
        }
    }
    let mut ranked: Vec<(u32, u64)> = counts.into_iter().filter(|&(id, _)| (id as usize) < rows).collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if size > 0 {
        ranked.truncate(size);
    }
    let mut ids: Vec<u32> = ranked.into_iter().map(|(id, _)| id).collect();
    ids.extend(always.iter().copied().filter(|&id| (id as usize) < rows));
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::testutil::tok;

    #[test]
    fn the_most_frequent_ids_are_kept_in_ascending_order_with_the_eos() {
        let q = tok("qwen2-tiny");
        let text = ["x", "x", "y z", "x"];
        let all = frequent_ids(q, text, 0, &[], q.len()).unwrap();
        let mut seen: Vec<u32> = text.iter().flat_map(|t| q.encode(t, false).unwrap()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(all, seen);
        assert!(seen.len() >= 3);
        let x = q.encode("x", false).unwrap();
        let top = frequent_ids(q, text, 1, &[151645], q.len()).unwrap();
        assert_eq!(top, [x[0], 151645], "x occurs three times, every other token once");
        assert!(frequent_ids(q, ["", "  "], 0, &[151645, 200_000], q.len()).unwrap() == [151645]);
    }
}
