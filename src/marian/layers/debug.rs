//! `RESEAM_MT_DEBUG=1`: tensors printed to stderr in the format of Marian's `debug()` node
//! messages (`graph/expression_graph.cpp` and `TensorBase::debug` in `tensors/tensor.cpp`), so a
//! difference from Marian can be found layer by layer by putting the two logs side by side.

use std::fmt::Write as _;

/// Marian's rendering of a float tensor: a header with shape and statistics, then the values
/// with 8 decimals, showing the first and last 5 entries of every axis.
pub fn render(message: &str, op: &str, shape: &[usize], data: &[f32]) -> String {
    let mut s = String::new();
    let size: usize = shape.iter().product();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let _ = writeln!(s, "Debug: {message} op={op}");
    let _ = writeln!(
        s,
        "shape={} size={size} type=float32 device=cpu0 ptr={} bytes={}",
        dims.join("x"),
        data.as_ptr() as usize,
        size * 4
    );
    let (mut maxv, mut minv, mut l2) = (f64::MIN, f64::MAX, 0f64);
    for &v in &data[..size] {
        maxv = maxv.max(v as f64);
        minv = minv.min(v as f64);
        l2 += v as f64 * v as f64;
    }
    let _ = writeln!(s, "min: {minv:.8} max: {maxv:.8} l2-norm: {:.8}", l2.sqrt());
    let disp_cols = 5;
    let rank = shape.len();
    let mut idx = vec![0usize; rank];
    for (i, &v) in data[..size].iter().enumerate() {
        let mut rem = i;
        for d in (0..rank).rev() {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        let disp = (0..rank).all(|d| idx[d] < disp_cols || idx[d] >= shape[d].saturating_sub(disp_cols));
        if !disp {
            continue;
        }
        if idx[rank - 1] == 0 {
            let mut par = true;
            let mut p = Vec::new();
            for d in (0..rank).rev() {
                if idx[d] != 0 {
                    par = false;
                }
                p.push(if par { "[" } else { " " });
            }
            for t in p.iter().rev() {
                s.push_str(t);
            }
            s.push(' ');
        }
        let _ = write!(s, "{:>12.8} ", v as f64);
        if idx[rank - 1] + 1 == shape[rank - 1] {
            for d in (0..rank).rev() {
                if idx[d] + 1 != shape[d] {
                    break;
                }
                s.push(']');
            }
            s.push('\n');
        }
        let mut prev = true;
        for d in (0..rank).rev() {
            if d < rank - 1 {
                prev = prev && idx[d + 1] + 1 == shape[d + 1];
            }
            if prev && idx[d] + 1 == disp_cols && shape[d] > 2 * disp_cols {
                if d < rank - 1 {
                    s.push_str(&" ".repeat(d + 1));
                }
                s.push_str("... ");
                if d < rank - 1 {
                    s.push('\n');
                }
                break;
            }
        }
    }
    s.push('\n');
    s
}

/// Prints to stderr.
pub fn dump(message: &str, op: &str, shape: &[usize], data: &[f32]) {
    eprintln!("{}", render(message, op, shape, data));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marian_layout() {
        let data: Vec<f32> = (0..24).map(|i| i as f32).collect();
        let text = render("x", "affine", &[2, 12], &data);
        assert!(text.starts_with("Debug: x op=affine\nshape=2x12 size=24 type=float32"), "{text}");
        assert!(text.contains("min: 0.00000000 max: 23.00000000"), "{text}");
        assert!(text.contains("[[   0.00000000"), "{text}");
        assert!(text.contains("... "), "{text}");
        assert!(text.contains("23.00000000 ]]"), "{text}");
    }
}
