//! The int8 products at the models' shapes on the kernels this process picks (set
//! `RESEAM_MT_ISA` to measure another instruction set). `reseam bench-gemm` reports the same
//! products against the instruction set's measured peak; this is the divan view, for comparing
//! commits. Throughput is in multiply-adds ("items").

use std::fmt;

use divan::Bencher;
use divan::counter::ItemsCount;
use reseam::bench::gemm::{Shape, model_shapes};
use reseam_kernels::pack::AlignedBytes;
use reseam_kernels::{Arithmetic, Epilogue, Output, PackedB, QuantizedA, Scale};

fn main() {
    divan::main();
}

struct Case {
    shape: Shape,
    m: usize,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} m={} k={} n={}", self.shape.name, self.shape.dim, self.m, self.shape.k, self.shape.n)
    }
}

fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    for dim in [256, 384, 512] {
        for shape in model_shapes(dim) {
            for m in [1, 8, 64, 256] {
                all.push(Case { shape: shape.clone(), m });
            }
        }
    }
    all
}

fn product(bencher: Bencher, c: &Case, arith: Arithmetic) {
    let kernels = reseam_kernels::dispatch::kernels().expect("kernels for this CPU");
    let (k, n, m) = (c.shape.k, c.shape.n, c.m);
    let bt: Vec<i8> = (0..k * n).map(|i| ((i * 7919 % 255) as i32 - 127) as i8).collect();
    let b = PackedB::from_transposed(&bt, k, n);
    let mut a = AlignedBytes::zeroed(m * b.k_padded());
    a.iter_mut().enumerate().for_each(|(i, x)| *x = (i * 104_729 % 255) as u8);
    let qa = QuantizedA { data: &a, rows: m, stride: b.k_padded() };
    let bias = vec![0.5f32; n];
    let ep = Epilogue { zero_fix: None, scale: Scale::Uniform(1.3e-4), bias: Some(&bias), relu: false };
    let mut out = vec![0f32; m * n];
    bencher.counter(ItemsCount::new(m * n * k)).bench_local(|| {
        kernels.gemm(arith, &qa, &b, &ep, &mut Output::F32 { data: &mut out, stride: n }).expect("shapes fit");
    });
}

#[divan::bench(args = cases())]
fn exact(bencher: Bencher, c: &Case) {
    product(bencher, c, Arithmetic::Exact);
}

#[divan::bench(args = cases())]
fn saturating(bencher: Bencher, c: &Case) {
    product(bencher, c, Arithmetic::Saturating);
}
