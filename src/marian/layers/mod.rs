//! Building blocks shared by the models: linear layers in either weight format, layer norm,
//! attention, softmax, position signals. Each computes in the order of operations of Marian's CPU
//! code, because that order is what makes outputs equal. This module never imports `model`.

pub mod attention;
pub mod debug;
pub mod linear;
pub mod norm;
pub mod position;
pub mod softmax;
