//! What the kernel test binaries share: a seeded generator and float bits to compare.

/// A small deterministic generator, so a failing case is reproduced by its seed alone.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.below(1 << 24) as f32 / (1 << 24) as f32)
    }
}

/// Bits, with every NaN alike: which NaN an FMA unit returns is not part of the arithmetic.
pub fn fbits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect()
}
