//! The vector `expf` of Marian's softmax ([`reseam_kernels::expf`]) equals this process's libm
//! on every float the softmax feeds it (`x − max ≤ 0`: every float with the sign bit set, NaNs
//! included, about 2^31), on every body this CPU runs, and on the edges above zero.

use reseam_kernels::Kernels;

/// The distinct `expf` bodies of this CPU's tables, each with a table that runs it.
fn bodies() -> Vec<(&'static str, Kernels)> {
    let mut seen: Vec<(&'static str, Kernels)> = Vec::new();
    for k in Kernels::candidates() {
        if !seen.iter().any(|(b, _)| *b == k.expf_body()) {
            seen.push((k.expf_body(), k));
        }
    }
    seen
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Where glibc's `expf` is libm and the CPU has AVX2 and FMA, a vector body must run: this
/// test may not pass by comparing libm with itself.
#[test]
fn a_vector_body_runs_where_it_can() {
    let names: Vec<&str> = bodies().iter().map(|b| b.0).collect();
    eprintln!("expf bodies on this CPU: {names:?}");
    #[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        assert!(reseam_kernels::expf::matches_libm(), "glibc's expf is not the one reseam_kernels::expf describes");
        assert!(names.iter().any(|n| n.contains("lanes")), "no vector expf body ran: {names:?}");
        if std::arch::is_x86_feature_detected!("avx512f") {
            assert!(names.iter().any(|n| n.contains("16 lanes")), "no zmm expf body ran: {names:?}");
        }
    }
}

#[test]
fn equals_libm_on_every_nonpositive_float() {
    const CHUNK: u32 = 1 << 20;
    // libm against itself proves nothing (the test above requires a vector body where one can run).
    let bodies: Vec<_> = bodies().into_iter().filter(|b| b.0.contains("lanes")).collect();
    let mut want = vec![0f32; CHUNK as usize];
    let mut got = vec![0f32; CHUNK as usize];
    if bodies.is_empty() {
        // Nothing but libm runs here (no vector body for this CPU or platform), and the test
        // above fails where one should have.
        eprintln!("no vector expf body on this CPU: nothing to compare with libm");
        return;
    }
    for (name, _) in &bodies {
        eprintln!("checking {name} on 2^31 floats");
    }
    let mut start = 0x8000_0000u32;
    loop {
        for (i, w) in want.iter_mut().enumerate() {
            *w = f32::from_bits(start + i as u32).exp();
        }
        for (name, k) in &bodies {
            for (i, g) in got.iter_mut().enumerate() {
                *g = f32::from_bits(start + i as u32);
            }
            k.expf(&mut got);
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let x = f32::from_bits(start + i as u32);
                assert!(same(g, w), "{name}: expf({x:e} = {:#x}) = {g:e}, libm {w:e}", x.to_bits());
            }
        }
        match start.checked_add(CHUNK) {
            Some(s) => start = s,
            None => break,
        }
    }
}

/// Above zero the softmax never asks, but the body is glibc's there too: every float up to the
/// overflow threshold's neighbourhood at a stride, the thresholds, infinities and NaNs, and
/// odd lengths (the scalar tail of each body).
#[test]
fn equals_libm_on_positive_edges_and_tails() {
    let mut xs: Vec<f32> = (0..0x4300_0000u32).step_by(97).map(f32::from_bits).collect();
    xs.extend((0x42b1_7000..0x42b1_7400u32).map(f32::from_bits));
    for b in [0x42b1_7217u32, 0x42b1_7218, 0x42b0_0000, 0x42af_ffff, 0xc2cf_f1b4, 0xc2cf_f1b3, 0xc2ce_8ecf, 0xc2ce_8ece]
    {
        xs.push(f32::from_bits(b));
    }
    xs.extend([f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001), 0.0, -0.0]);
    for (name, k) in bodies() {
        for len in [xs.len(), 1, 3, 7, 15, 17, 31] {
            for start in [0, xs.len() - 40] {
                let src = &xs[start..(start + len).min(xs.len())];
                let mut got = src.to_vec();
                k.expf(&mut got);
                for (&x, &g) in src.iter().zip(&got) {
                    assert!(same(g, x.exp()), "{name}: expf({x:e}) = {g:e}, libm {:e}", x.exp());
                }
            }
        }
    }
}
