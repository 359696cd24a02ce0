//! A byte trie of piece texts: each node's children in one sorted run of an edge array, the
//! root's in a table of 256. Encoding walks it from every position of a text, so lookups are
//! what count; building it (once per vocabulary) need only be linear.

#[derive(Clone, Debug, Default)]
pub struct Trie {
    /// Per node: the first of its edges, how many, and the id of the key ending there (or -1).
    nodes: Vec<(u32, u32, i32)>,
    labels: Vec<u8>,
    targets: Vec<u32>,
    root: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Trie {
    /// A trie of `(key, id)`; a key given twice keeps its first id, an empty key is ignored.
    pub fn new<'a>(keys: impl IntoIterator<Item = (&'a str, u32)>) -> Trie {
        let mut sorted: Vec<(&[u8], u32)> =
            keys.into_iter().filter(|(k, _)| !k.is_empty()).map(|(k, id)| (k.as_bytes(), id)).collect();
        // Stable: of equal keys the first given stays first.
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|b, a| a.0 == b.0);
        let mut t = Trie { root: vec![NONE; 256], ..Trie::default() };
        t.nodes.push((0, 0, -1));
        // Breadth first: a node's children are a contiguous run of `sorted` sharing a prefix
        // one byte longer than the node's, so one pass per level builds them in order.
        let mut level: Vec<(u32, usize, usize, usize)> = vec![(0, 0, sorted.len(), 0)];
        while !level.is_empty() {
            let mut next = Vec::new();
            for (node, lo, hi, depth) in level {
                let mut i = lo;
                // The key that ends here comes first in its run.
                if i < hi && sorted[i].0.len() == depth {
                    t.nodes[node as usize].2 = sorted[i].1 as i32;
                    i += 1;
                }
                let first = t.labels.len() as u32;
                while i < hi {
                    let b = sorted[i].0[depth];
                    let mut j = i;
                    while j < hi && sorted[j].0[depth] == b {
                        j += 1;
                    }
                    let child = t.nodes.len() as u32;
                    t.nodes.push((0, 0, -1));
                    t.labels.push(b);
                    t.targets.push(child);
                    if node == 0 {
                        t.root[b as usize] = child;
                    }
                    next.push((child, i, j, depth + 1));
                    i = j;
                }
                let n = &mut t.nodes[node as usize];
                n.0 = first;
                n.1 = t.labels.len() as u32 - first;
            }
            level = next;
        }
        t
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    #[inline]
    fn child(&self, node: u32, b: u8) -> Option<u32> {
        if node == 0 {
            let c = self.root[b as usize];
            return (c != NONE).then_some(c);
        }
        let (first, count, _) = self.nodes[node as usize];
        let labels = &self.labels[first as usize..(first + count) as usize];
        let at =
            if labels.len() <= 8 { labels.iter().position(|&l| l == b)? } else { labels.binary_search(&b).ok()? };
        Some(self.targets[first as usize + at])
    }

    /// Calls `f(length, id)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn prefixes(&self, text: &[u8], mut f: impl FnMut(usize, u32)) {
        if self.is_empty() {
            return;
        }
        let mut node = 0;
        for (i, &b) in text.iter().enumerate() {
            let Some(c) = self.child(node, b) else { return };
            node = c;
            let id = self.nodes[node as usize].2;
            if id >= 0 {
                f(i + 1, id as u32);
            }
        }
    }

    /// The longest key that is a prefix of `text`: (its length, its id).
    pub fn longest_prefix(&self, text: &[u8]) -> Option<(usize, u32)> {
        let mut best = None;
        self.prefixes(text, |len, id| best = Some((len, id)));
        best
    }

    /// The id of exactly `key`.
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        let mut node = 0;
        for &b in key {
            node = self.child(node, b)?;
        }
        let id = self.nodes[node as usize].2;
        (id >= 0 && !key.is_empty()).then_some(id as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_prefix_and_nothing_else() {
        let t = Trie::new([("a", 0), ("ab", 1), ("abc", 2), ("b", 3), ("abd", 4), ("ab", 9), ("", 7)]);
        let mut found = Vec::new();
        t.prefixes(b"abcd", |l, id| found.push((l, id)));
        assert_eq!(found, [(1, 0), (2, 1), (3, 2)]);
        assert_eq!(t.get(b"ab"), Some(1));
        assert_eq!(t.get(b"abd"), Some(4));
        assert_eq!(t.get(b"c"), None);
        assert_eq!(t.get(b""), None);
        assert_eq!(t.longest_prefix(b"bz"), Some((1, 3)));
        assert_eq!(t.longest_prefix(b"z"), None);
        let many: Vec<String> = (0..300).map(|i| format!("x{i}")).collect();
        let t = Trie::new(many.iter().enumerate().map(|(i, k)| (k.as_str(), i as u32)));
        for (i, k) in many.iter().enumerate() {
            assert_eq!(t.get(k.as_bytes()), Some(i as u32));
        }
    }
}
