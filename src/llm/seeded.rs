//! Seeded uniform rows: the values of generated models' weights ([`super::synthetic`]), also
//! drawn when a generated embedding is looked up ([`super::decoder::Embedding::Random`]).

/// splitmix64: one step.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Row `row` of the matrix with seed `seed`: uniform values with standard deviation `std`.
pub fn fill_row(seed: u64, std: f32, row: usize, out: &mut [f32]) {
    let half_width = std * 3f32.sqrt();
    let mut state = mix(seed ^ mix(row as u64));
    for pair in out.chunks_mut(2) {
        state = mix(state);
        for (i, o) in pair.iter_mut().enumerate() {
            let bits = (state >> (32 * i)) as u32;
            // 24 bits → [0, 1) exactly, then to [-w, w).
            let u = (bits >> 8) as f32 * (1.0 / 16_777_216.0);
            *o = (2.0 * u - 1.0) * half_width;
        }
    }
}
