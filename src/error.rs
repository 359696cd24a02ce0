//! Whose fault a failure is: the one place the command line's exit code 2 and a server's 4xx
//! come from.
//!
//! Every error type of the crate (and of the kernels) has `is_usage()`: whether that error, by
//! itself, is the caller's to fix — a bad flag or setting, input (prompts, text) that cannot be
//! read or parsed, a model, language pair or chat template that is not there. Damaged model
//! files, I/O failures while writing, the network and internal errors are not. A variant that
//! only wraps a cause answers `false` and lets the cause speak (a `transparent` variant asks its
//! inner error, which is not a link of the chain of its own).
//!
//! Each type registers itself with [`fault!`] beside its `is_usage`, so the decision is made
//! where the error is defined and this module names none of the crate's modules. [`is_usage`]
//! walks an error's chain and asks every registered type about each link; a link of no
//! registered type (an `io::Error`, a message of `anyhow`) is not the caller's fault by itself.

use std::error::Error;

/// A mistake in how reseam was called that the library's own errors do not cover (flags that
/// only the command line has, such as `--csv` without `--draft`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// One registered error type's question about a link of a chain: `None` when the link is not of
/// that type (boxed or not).
pub struct Classifier(pub fn(&(dyn Error + 'static)) -> Option<bool>);

inventory::collect!(Classifier);

/// Registers error types, each with an inherent `is_usage(&self) -> bool`, with [`is_usage`]:
/// `crate::error::fault!(MyError);` beside the type's `is_usage`.
macro_rules! fault {
    ($($t:ty),+ $(,)?) => {
        $(
            ::inventory::submit! {
                $crate::error::Classifier(|e| {
                    if let Some(x) = e.downcast_ref::<$t>() {
                        return Some(x.is_usage());
                    }
                    e.downcast_ref::<Box<$t>>().map(|x| x.is_usage())
                })
            }
        )+
    };
}
pub(crate) use fault;

fault!(UsageError);
// The kernels crate sits below this one and knows nothing of it; its two error types are
// registered here.
fault!(reseam_kernels::ShapeError, reseam_kernels::dispatch::IsaError);

/// What one link of a chain says about itself, if it is of a registered error type.
pub fn usage_of(e: &(dyn Error + 'static)) -> Option<bool> {
    inventory::iter::<Classifier>.into_iter().find_map(|c| (c.0)(e))
}

/// Whether any link of `e`'s chain is the caller's fault (exit code 2, HTTP 4xx).
pub fn is_usage(e: &(dyn Error + 'static)) -> bool {
    let mut link = Some(e);
    while let Some(e) = link {
        if usage_of(e) == Some(true) {
            return true;
        }
        link = e.source();
    }
    false
}

#[cfg(test)]
mod tests;
