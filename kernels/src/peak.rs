//! The peak loops' shared pieces: what an instruction set's register-only loop says about itself,
//! and the operands every loop reads. Each ISA file defines its loops; `dispatch` puts them in the
//! tables and `bench-gemm` runs them.

/// A register-only loop of an instruction set's product step, to measure its peak.
#[derive(Clone, Copy, Debug)]
pub struct PeakLoop {
    /// The instructions of one step, e.g. `vpdpbusd zmm`.
    pub instructions: &'static str,
    /// Multiply-adds per loop iteration.
    pub macs_per_iter: u64,
    pub(crate) run: unsafe fn(u64),
}

/// Operands for the peak loops: arbitrary non-zero bytes, because some units run faster on
/// zeros and a peak measured on them would flatter nothing but the peak.
#[repr(C, align(64))]
pub(crate) struct PeakOperands(pub [u8; 1024]);

pub(crate) static PEAK_OPERANDS: PeakOperands = PeakOperands({
    let mut bytes = [0u8; 1024];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut i = 0;
    while i < bytes.len() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes[i] = (x >> 24) as u8 | 1;
        i += 1;
    }
    bytes
});
